package runs

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"

	// The cloud drivers the binaries link, for gs:// and s3:// here.
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// The results store over real object-store APIs: fake-gcs-server (GCS JSON
// and XML APIs) through gcsblob, gofakes3 (S3 API, path style) through
// s3blob, each behind a proxy on 127.0.0.1 that counts the requests and
// pages delimited listings as the real services do (neither fake counts
// common prefixes toward a page). Every object is written from a file://
// store's files, so the layouts are the file:// tests' own.

// requestLog counts requests by method and path, and list requests by
// prefix.
type requestLog struct {
	mu     sync.Mutex
	byPath map[string]int
	lists  map[string]int
}

func (l *requestLog) add(method, path, listPrefix string, isList bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byPath[method+" "+path]++
	if isList {
		l.lists[listPrefix]++
	}
}

// take returns the counts since the last take and resets them.
func (l *requestLog) take() (total int, byPath, lists map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.byPath {
		total += n
	}
	byPath, lists = l.byPath, l.lists
	l.byPath, l.lists = map[string]int{}, map[string]int{}
	return total, byPath, lists
}

func newRequestLog() *requestLog {
	return &requestLog{byPath: map[string]int{}, lists: map[string]int{}}
}

// gcsBackend is a fake-gcs-server behind a counting proxy that STORAGE_EMULATOR_HOST names.
type gcsBackend struct {
	srv     *fakestorage.Server
	log     *requestLog
	buckets int    // buckets made, for unique names
	proxy   string // the counting proxy's URL
}

func startGCS(t *testing.T) *gcsBackend {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0, PublicHost: "127.0.0.1", Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	up, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	g := &gcsBackend{srv: srv, log: newRequestLog()}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(up)
		r.Out.Host = up.Host // the fake routes its XML API by host
	}}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isList := r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/storage/v1/b/") && strings.HasSuffix(r.URL.Path, "/o")
		g.log.add(r.Method, r.URL.Path, r.URL.Query().Get("prefix"), isList)
		if isList && r.URL.Query().Get("delimiter") != "" {
			pagedGCSList(w, r, up)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	g.proxy = proxy.URL
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(proxy.URL, "http://"))
	return g
}

// pagedGCSList answers a delimited object listing as GCS documents it:
// maxResults bounds items and prefixes together, in name order, and
// pageToken resumes after the last name. fake-gcs-server bounds the items
// alone and returns every prefix in one page, so a listing of "directories"
// would never page against it.
func pagedGCSList(w http.ResponseWriter, r *http.Request, up *url.URL) {
	q := r.URL.Query()
	maxResults, _ := strconv.Atoi(q.Get("maxResults"))
	after := q.Get("pageToken")
	q.Del("maxResults")
	q.Del("pageToken")
	u := *up
	u.Path, u.RawQuery = r.URL.Path, q.Encode()
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var full struct {
		Items    []json.RawMessage `json:"items"`
		Prefixes []string          `json:"prefixes"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&full) != nil {
		http.Error(w, "upstream listing failed", http.StatusBadGateway)
		return
	}
	type entry struct {
		name string
		item json.RawMessage
	}
	var all []entry
	for _, it := range full.Items {
		var o struct{ Name string }
		_ = json.Unmarshal(it, &o)
		all = append(all, entry{o.Name, it})
	}
	for _, p := range full.Prefixes {
		all = append(all, entry{name: p})
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	all = slices.DeleteFunc(all, func(e entry) bool { return after != "" && e.name <= after })
	out := map[string]any{"kind": "storage#objects"}
	if maxResults > 0 && len(all) > maxResults {
		all = all[:maxResults]
		out["nextPageToken"] = all[len(all)-1].name
	}
	items, prefixes := []json.RawMessage{}, []string{}
	for _, e := range all {
		if e.item != nil {
			items = append(items, e.item)
		} else {
			prefixes = append(prefixes, e.name)
		}
	}
	out["items"], out["prefixes"] = items, prefixes
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// walkFiles calls put with each file under root by its slash key.
func walkFiles(t *testing.T, root string, put func(key string, content []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p) // #nosec G304 -- a file of the test's own temporary store
		if err != nil {
			return err
		}
		put(filepath.ToSlash(rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// store copies the file:// store at root into a new bucket and opens it as gs://.
func (g *gcsBackend) store(t *testing.T, root string) *Store {
	t.Helper()
	g.buckets++
	bucket := fmt.Sprintf("results-%d", g.buckets)
	g.srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	walkFiles(t, root, func(key string, content []byte) {
		g.srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key}, Content: content})
	})
	s, err := OpenStore(context.Background(), "gs://"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// s3Backend is gofakes3 (in memory) behind a counting proxy.
type s3Backend struct {
	url     string
	log     *requestLog
	buckets int // buckets made, for unique names
}

func startS3(t *testing.T) *s3Backend {
	t.Helper()
	faker := gofakes3.New(s3mem.New())
	h := faker.Server()
	b := &s3Backend{log: newRequestLog()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isList := r.Method == http.MethodGet && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 && r.URL.Query().Has("list-type")
		b.log.add(r.Method, r.URL.Path, r.URL.Query().Get("prefix"), isList)
		if isList && r.URL.Query().Get("delimiter") != "" {
			pagedS3List(w, r, h)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	if host, _, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://")); err != nil || host != "127.0.0.1" {
		t.Fatalf("S3 server on %s", srv.URL)
	}
	b.url = srv.URL
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return b
}

// pagedS3List answers a delimited ListObjectsV2 as S3 documents it:
// max-keys bounds keys and common prefixes together, in name order, and
// the continuation token resumes after the last name. gofakes3's s3mem
// resumes after the first key under the last common prefix, so a page
// boundary among common prefixes would return a prefix again.
func pagedS3List(w http.ResponseWriter, r *http.Request, h http.Handler) {
	q := r.URL.Query()
	maxKeys, _ := strconv.Atoi(q.Get("max-keys"))
	after := q.Get("continuation-token")
	q.Del("max-keys")
	q.Del("continuation-token")
	up := r.Clone(r.Context())
	up.URL.RawQuery = q.Encode()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, up)
	var full gofakes3.ListBucketResultV2
	if rec.Code != http.StatusOK || xml.Unmarshal(rec.Body.Bytes(), &full) != nil {
		http.Error(w, "upstream listing failed", http.StatusBadGateway)
		return
	}
	type entry struct {
		name string
		obj  *gofakes3.Content
	}
	var all []entry
	for _, c := range full.Contents {
		all = append(all, entry{c.Key, c})
	}
	for _, p := range full.CommonPrefixes {
		all = append(all, entry{name: p.Prefix})
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	all = slices.DeleteFunc(all, func(e entry) bool { return after != "" && e.name <= after })
	out := full
	out.Contents, out.CommonPrefixes, out.IsTruncated, out.NextContinuationToken = nil, nil, false, ""
	out.ContinuationToken, out.MaxKeys = after, int64(maxKeys)
	if maxKeys > 0 && len(all) > maxKeys {
		all = all[:maxKeys]
		out.IsTruncated, out.NextContinuationToken = true, all[len(all)-1].name
	}
	for _, e := range all {
		if e.obj != nil {
			out.Contents = append(out.Contents, e.obj)
		} else {
			out.CommonPrefixes = append(out.CommonPrefixes, gofakes3.CommonPrefix{Prefix: e.name})
		}
	}
	out.KeyCount = int64(len(all))
	body, err := xml.Marshal(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(append([]byte(xml.Header), body...))
}

// store copies the file:// store at root into a new bucket (through the
// S3 API) and opens it as s3://.
func (b *s3Backend) store(t *testing.T, root string) *Store {
	t.Helper()
	ctx := context.Background()
	b.buckets++
	bucket := fmt.Sprintf("results-%d", b.buckets)
	u := "s3://" + bucket + "?" + url.Values{"endpoint": {b.url}, "use_path_style": {"true"}, "region": {"us-east-1"}, "disable_https": {"true"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, b.url+"/"+bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("creating bucket %s: %s", bucket, resp.Status)
	}
	w, err := blob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	walkFiles(t, root, func(key string, content []byte) {
		if err := w.WriteAll(ctx, key, content, nil); err != nil {
			t.Fatal(err)
		}
	})
	_ = w.Close()
	s, err := OpenStore(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	b.log.take()
	return s
}

// objectStores opens the store fixture's copy in each object store, with
// listings of pageSize entries per request (0: the production size).
func objectStores(t *testing.T, pageSize int) map[string]func(*testing.T) (*Store, string) {
	g, s3 := startGCS(t), startS3(t)
	open := func(put func(*testing.T, string) *Store) func(*testing.T) (*Store, string) {
		return func(t *testing.T) (*Store, string) {
			root := storeFixture(t)
			s := put(t, root)
			s.listPage = pageSize
			return s, root
		}
	}
	return map[string]func(*testing.T) (*Store, string){"gcs": open(g.store), "s3": open(s3.store)}
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

	g, s3 := startGCS(t), startS3(t)
	for _, be := range []struct {
		name  string
		put   func(*testing.T, string) *Store
		log   *requestLog
		pages []int
	}{{"gcs", g.store, g.log, []int{0, 1}}, {"s3", s3.store, s3.log, []int{0, 1}}} {
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
					be.log.take()
					var counts, listed [2]int
					for i := range counts {
						if err := o.do(s); err != nil {
							t.Fatalf("%s (page %d, call %d): %v", o.name, page, i+1, err)
						}
						var lists map[string]int
						counts[i], _, lists = be.log.take()
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

// TestGCSPrefixPaging pins why the proxy pages delimited listings itself:
// fake-gcs-server answers maxResults=1 over two run_date prefixes with both
// and no page token; through the proxy, as GCS does, one page holds one.
func TestGCSPrefixPaging(t *testing.T) {
	g := startGCS(t)
	g.store(t, readerStore(t))
	list := func(base string) (prefixes []string, token string) {
		t.Helper()
		q := url.Values{"prefix": {"runs/resume/"}, "delimiter": {"/"}, "maxResults": {"1"}}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, base+"/storage/v1/b/results-1/o?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Prefixes      []string `json:"prefixes"`
			NextPageToken string   `json:"nextPageToken"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return body.Prefixes, body.NextPageToken
	}
	if p, tok := list(g.srv.URL()); len(p) != 2 || tok != "" {
		t.Errorf("fake-gcs-server: prefixes %v, token %q; want both prefixes and no token (it pages prefixes now: drop pagedGCSList)", p, tok)
	}
	if p, tok := list(g.proxy); len(p) != 1 || tok == "" {
		t.Errorf("through the proxy: prefixes %v, token %q; want one prefix and a token", p, tok)
	}
}
