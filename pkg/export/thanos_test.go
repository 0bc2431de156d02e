package export

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/thanostest"
)

// countingProxy forwards to target and counts the requests.
func countingProxy(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// exportSummary exports the run against base (through a counting proxy) and
// returns server_summary.json without metadata.prom_url, the request count,
// the wall time and what the export printed.
func exportSummary(t *testing.T, run *promtest.Run, base string) (map[string]any, int64, time.Duration, string) {
	t.Helper()
	tr := run.Truth
	dir := copyRun(t, run)
	u, n := countingProxy(t, base)
	args := []string{"--run-dir", dir, "--prometheus-url", u, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts"}
	e := newEnv(nil, nil)
	t0 := time.Now()
	if code := Main(context.Background(), args, e.Env); code != ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	wall := time.Since(t0)
	b, err := os.ReadFile(filepath.Join(dir, "server_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if md, ok := doc["metadata"].(map[string]any); ok {
		delete(md, "prom_url")
	}
	return doc, n.Load(), wall, e.out.String() + e.errOut.String()
}

// diffKeys names the top-level (and metadata) keys whose values differ.
func diffKeys(a, b map[string]any) []string {
	var out []string
	for k := range a {
		if !reflect.DeepEqual(a[k], b[k]) {
			if am, ok := a[k].(map[string]any); ok {
				if bm, ok := b[k].(map[string]any); ok {
					for kk := range am {
						if !reflect.DeepEqual(am[kk], bm[kk]) {
							out = append(out, k+"."+kk)
						}
					}
					for kk := range bm {
						if _, ok := am[kk]; !ok {
							out = append(out, k+"."+kk)
						}
					}
					continue
				}
			}
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// TestExportTwiceSameSummary pins the comparison the Thanos test relies on:
// two exports of one run against one Prometheus differ in nothing but
// metadata.prom_url.
func TestExportTwiceSameSummary(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	a, _, _, _ := exportSummary(t, run, prom.URL)
	b, _, _, _ := exportSummary(t, run, prom.URL)
	if d := diffKeys(a, b); len(d) > 0 {
		t.Errorf("two exports differ in %v", d)
	}
}

// TestExportThanosEqualsPrometheus exports the steady run against Thanos
// Query over two deduplicated replicas and against a single Prometheus: the
// summaries are equal, and equal again with one sidecar stopped.
func TestExportThanosEqualsPrometheus(t *testing.T) {
	stack := thanostest.Start(t, cache.Generated(t, "steady").OM)
	run, prom := cache.Prometheus(t, "steady")
	want, promReqs, promWall, _ := exportSummary(t, run, prom.URL)
	got, thanosReqs, thanosWall, _ := exportSummary(t, run, stack.URL)
	t.Logf("export: prometheus %d requests in %v, thanos %d requests in %v",
		promReqs, promWall.Round(time.Millisecond), thanosReqs, thanosWall.Round(time.Millisecond))
	if d := diffKeys(want, got); len(d) > 0 {
		t.Errorf("thanos summary differs from prometheus in %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stack.StopSidecar(ctx, 1); err != nil {
		t.Fatal(err)
	}
	one, _, _, printed := exportSummary(t, run, stack.URL)
	if d := diffKeys(want, one); len(d) > 0 {
		t.Errorf("with one sidecar stopped the summary differs in %v\n%s", d, printed)
	}
	t.Logf("with one sidecar stopped the export printed:\n%s", printed)
}
