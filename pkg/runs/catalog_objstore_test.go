package runs

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/substrate/density/internal/objstoretest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
)

// The results store over real object-store APIs (internal/objstoretest:
// fake-gcs-server through gcsblob, gofakes3 through s3blob, on 127.0.0.1
// behind counting proxies). Every object is written from a file:// store's
// files, so the layouts are the file:// tests' own.

// openBucket opens the store at u, closed in t.Cleanup.
func openBucket(t *testing.T, u string) *Store {
	t.Helper()
	s, err := OpenStore(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// backend copies a file:// store into a new bucket and opens it.
type backend func(t *testing.T, root string) *Store

func gcsStores(t *testing.T) (backend, *objstoretest.GCS) {
	g := objstoretest.StartGCS(t)
	return func(t *testing.T, root string) *Store { return openBucket(t, g.Bucket(t, root)) }, g
}

func s3Stores(t *testing.T) (backend, *objstoretest.S3) {
	b := objstoretest.StartS3(t)
	return func(t *testing.T, root string) *Store { return openBucket(t, b.Bucket(t, root)) }, b
}

// objectStores opens the store fixture's copy in each object store, with
// listings of pageSize entries per request (0: the production size).
func objectStores(t *testing.T, pageSize int) map[string]func(*testing.T) (*Store, string) {
	g, _ := gcsStores(t)
	s3, _ := s3Stores(t)
	open := func(put backend) func(*testing.T) (*Store, string) {
		return func(t *testing.T) (*Store, string) {
			root := storeFixture(t)
			s := put(t, root)
			s.listPage = pageSize
			return s, root
		}
	}
	return map[string]func(*testing.T) (*Store, string){"gcs": open(g), "s3": open(s3)}
}

// TestObjectStoreCatalog runs the file:// catalog tests against GCS and S3
// APIs, with the production page size and with one entry per list request
// (every listing paged).
func TestObjectStoreCatalog(t *testing.T) {
	for _, page := range []int{0, 1} {
		for name, open := range objectStores(t, page) {
			t.Run(name+"/page="+strconv.Itoa(page), func(t *testing.T) {
				t.Run("List", func(t *testing.T) { testStoreList(t, open) })
				t.Run("ListFilters", func(t *testing.T) { testStoreListFilters(t, open) })
				t.Run("Get", func(t *testing.T) { testStoreGet(t, open) })
				t.Run("LatestAndTests", func(t *testing.T) { testStoreLatestAndTests(t, open) })
				t.Run("ListingBounds", func(t *testing.T) { testListingBounds(t, open) })
			})
		}
	}
}

// readerStore is a store of test "resume" with two finished runs on two
// dates, each with server_summary.json, stats.jsonl and a valid
// psi_series.json.
func readerStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	psi, err := artifact.PSISeriesJSON(artifact.NewPSISeries(harvest.EmptyResult(), tsA, tsA+600))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		ts  int64
		tag string
	}{{tsA, "abc"}, {tsB, "def"}} {
		dir := filepath.Join(root, "runs", "resume", "run_date="+artifactDate(r.ts), "run_ts="+itoa(r.ts), "run_tag="+r.tag)
		storedRunFiles(t, dir, "resume", r.tag, r.ts, string(psi))
	}
	return root
}

func artifactDate(ts int64) string { return artifact.DataTimestamp(ts)[:10] }

const opList = "List(test resume)"

// TestObjectStoreRead reads whole runs through GCS and S3 and compares
// them with the same runs read through file://; it counts each
// operation's requests cold (a new Store) and warm (the same call again on
// that Store), and pins that the date level of a listing is paged when a
// list request holds one entry.
func TestObjectStoreRead(t *testing.T) {
	ctx := context.Background()
	root := readerStore(t)
	fileStore, err := OpenStore(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fileStore.Close() })
	want, err := fileStore.Run(ctx, IDLatest, PartAll)
	if err != nil {
		t.Fatal(err)
	}
	if want.Entry.ID != "resume/1710324000/def" || want.Summary == nil || want.PSI == nil || metrics(want.Rows.All()...) != wantRows || len(want.Problems) != 0 {
		t.Fatalf("file:// latest: %s summary %v psi %v rows %s problems %v", want.Entry.ID, want.Summary != nil, want.PSI != nil, metrics(want.Rows.All()...), want.Problems)
	}
	wantList, err := fileStore.List(ctx, ListOptions{TestName: "resume"})
	if err != nil {
		t.Fatal(err)
	}

	gcs, g := gcsStores(t)
	s3, b := s3Stores(t)
	for _, be := range []struct {
		name  string
		put   backend
		log   *objstoretest.Log
		pages []int
	}{{"gcs", gcs, g.Log, []int{0, 1}}, {"s3", s3, b.Log, []int{0, 1}}} {
		t.Run(be.name, func(t *testing.T) {
			type op struct {
				name string
				do   func(*Store) error
			}
			ops := []op{
				{opList, func(s *Store) error {
					got, err := s.List(ctx, ListOptions{TestName: "resume"})
					if err == nil && !reflect.DeepEqual(got, wantList) {
						err = fmt.Errorf("listing differs from file://:\n%+v\nwant\n%+v", got, wantList)
					}
					return err
				}},
				{"Run(latest)", func(s *Store) error {
					got, err := s.Run(ctx, IDLatest, PartAll)
					if err == nil && !reflect.DeepEqual(got, want) {
						err = fmt.Errorf("run differs from file://:\n%+v\nwant\n%+v", got, want)
					}
					return err
				}},
				{"Read of one whole run", func(s *Store) error {
					got := s.Read(ctx, want.Entry, PartAll)
					if !reflect.DeepEqual(got, want) {
						return fmt.Errorf("read differs from file://:\n%+v\nwant\n%+v", got, want)
					}
					return nil
				}},
			}
			for _, page := range be.pages {
				for _, o := range ops {
					s := be.put(t, root)
					s.listPage = page
					be.log.Take()
					var counts, listed [2]int
					for i := range counts {
						if err := o.do(s); err != nil {
							t.Fatalf("%s (page %d, call %d): %v", o.name, page, i+1, err)
						}
						var lists map[string]int
						counts[i], _, lists = be.log.Take()
						for _, n := range lists {
							listed[i] += n
						}
						if o.name == opList {
							// Two run_date directories: one list request at
							// the production size, two at one entry a request.
							want := 1
							if page == 1 {
								want = 2
							}
							if n := lists["runs/resume/"]; n != want {
								t.Errorf("page size %d, call %d: %d list requests for runs/resume/, want %d; lists %v", page, i+1, n, want, lists)
							}
						}
					}
					t.Logf("%-22s page size %d: cold %2d requests (%d lists, %d object reads), warm %2d (%d lists, %d object reads)",
						o.name, page, counts[0], listed[0], counts[0]-listed[0], counts[1], listed[1], counts[1]-listed[1])
					if counts[0] == 0 {
						t.Errorf("%s: no request reached the store", o.name)
					}
				}
			}
		})
	}
}
