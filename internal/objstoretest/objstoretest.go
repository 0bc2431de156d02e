// Package objstoretest serves object stores on 127.0.0.1 for tests of the
// results store over real object-store APIs: fake-gcs-server (GCS JSON and
// XML APIs, reached by gcsblob through STORAGE_EMULATOR_HOST) and gofakes3
// (S3 API, path style, reached by s3blob through its endpoint URL
// parameter). Each sits behind a proxy that counts the requests and pages
// delimited listings as the real services do: neither fake counts common
// prefixes toward a page. Importing the package registers the gs:// and
// s3:// drivers.
package objstoretest

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"

	// The cloud drivers the binaries link.
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// Log counts requests by method and path, and list requests by prefix.
type Log struct {
	mu     sync.Mutex
	byPath map[string]int
	lists  map[string]int
}

func (l *Log) add(method, path, listPrefix string, isList bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byPath[method+" "+path]++
	if isList {
		l.lists[listPrefix]++
	}
}

// Take returns the counts since the last take and resets them.
func (l *Log) Take() (total int, byPath, lists map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.byPath {
		total += n
	}
	byPath, lists = l.byPath, l.lists
	l.byPath, l.lists = map[string]int{}, map[string]int{}
	return total, byPath, lists
}

func newLog() *Log {
	return &Log{byPath: map[string]int{}, lists: map[string]int{}}
}

// GCS is a fake-gcs-server behind a counting proxy that STORAGE_EMULATOR_HOST names.
type GCS struct {
	Server   *fakestorage.Server // the fake, without the proxy
	Log      *Log
	buckets  int    // buckets made, for unique names
	ProxyURL string // the counting proxy: STORAGE_EMULATOR_HOST
}

func StartGCS(t testing.TB) *GCS {
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
	g := &GCS{Server: srv, Log: newLog()}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(up)
		r.Out.Host = up.Host // the fake routes its XML API by host
	}}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isList := r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/storage/v1/b/") && strings.HasSuffix(r.URL.Path, "/o")
		g.Log.add(r.Method, r.URL.Path, r.URL.Query().Get("prefix"), isList)
		if isList && r.URL.Query().Get("delimiter") != "" {
			pagedGCSList(w, r, up)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	g.ProxyURL = proxy.URL
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
func walkFiles(t testing.TB, root string, put func(key string, content []byte)) {
	t.Helper()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := r.ReadFile(p)
		if err != nil {
			return err
		}
		put(p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Keys are the slash keys of the files under root: the objects Bucket
// copies from it.
func Keys(t testing.TB, root string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	walkFiles(t, root, func(key string, _ []byte) { keys[key] = true })
	return keys
}

// ObjectRequests are the requests of one Take of a GCS by what they name:
// list requests by prefix, and the other requests by the object key they
// name (a read or a stat, of a stored object or of an absent one).
type ObjectRequests struct {
	Total, Lists int
	Listed       map[string]int // list requests by prefix
	ByKey        map[string]int
	Other        []string // requests naming no object of the bucket
}

// Reads are the requests that are not lists.
func (r ObjectRequests) Reads() int { return r.Total - r.Lists }

// PerPrefix is the most list requests of one prefix.
func (r ObjectRequests) PerPrefix() int {
	n := 0
	for _, v := range r.Listed {
		n = max(n, v)
	}
	return n
}

// TakeObjects takes the requests counted since the last take and sorts
// them by what they name in bucket. gcsblob reads an object through the
// XML API (GET /<bucket>/<key>) and stats it through the JSON API
// (GET /storage/v1/b/<bucket>/o/<key>).
func (g *GCS) TakeObjects(bucket string) ObjectRequests {
	total, byPath, lists := g.Log.Take()
	r := ObjectRequests{Total: total, Listed: lists, ByKey: map[string]int{}}
	for _, n := range lists {
		r.Lists += n
	}
	listPath := "GET /storage/v1/b/" + bucket + "/o"
	for p, n := range byPath {
		if p == listPath {
			continue
		}
		key, ok := "", false
		for _, prefix := range []string{"GET /storage/v1/b/" + bucket + "/o/", "GET /download/storage/v1/b/" + bucket + "/o/", "GET /" + bucket + "/"} {
			if k, found := strings.CutPrefix(p, prefix); found {
				key, ok = k, true
				break
			}
		}
		if !ok {
			r.Other = append(r.Other, fmt.Sprintf("%s (%d)", p, n))
			continue
		}
		r.ByKey[key] += n
	}
	return r
}

// Bucket copies the directory tree at root (a file:// store) into a new
// bucket and returns its gs:// URL.
func (g *GCS) Bucket(t testing.TB, root string) string {
	t.Helper()
	g.buckets++
	bucket := fmt.Sprintf("results-%d", g.buckets)
	g.Server.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	walkFiles(t, root, func(key string, content []byte) {
		g.Server.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key}, Content: content})
	})
	return "gs://" + bucket
}

// S3 is gofakes3 (in memory) behind a counting proxy.
type S3 struct {
	URL     string // the counting proxy
	Log     *Log
	buckets int // buckets made, for unique names
}

func StartS3(t testing.TB) *S3 {
	t.Helper()
	faker := gofakes3.New(s3mem.New())
	h := faker.Server()
	b := &S3{Log: newLog()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isList := r.Method == http.MethodGet && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 && r.URL.Query().Has("list-type")
		b.Log.add(r.Method, r.URL.Path, r.URL.Query().Get("prefix"), isList)
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
	b.URL = srv.URL
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

// Bucket copies the directory tree at root (a file:// store) into a new
// bucket through the S3 API and returns its s3:// URL (path style, the
// proxy as endpoint); the requests of the copy are not counted.
func (b *S3) Bucket(t testing.TB, root string) string {
	t.Helper()
	ctx := context.Background()
	b.buckets++
	bucket := fmt.Sprintf("results-%d", b.buckets)
	u := "s3://" + bucket + "?" + url.Values{"endpoint": {b.URL}, "use_path_style": {"true"}, "region": {"us-east-1"}, "disable_https": {"true"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, b.URL+"/"+bucket, nil)
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
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b.Log.Take()
	return u
}
