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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/thanostest"
	"github.com/substrate/density/pkg/cli"
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
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
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

// TestExportThanosEqualsPrometheus exports each scenario against Thanos
// Query over two deduplicated replicas and against a single Prometheus:
// the summaries are equal. For the steady run, equal again with one
// sidecar stopped, and with both stopped the export still exits 0 with
// nulls and notices.
func TestExportThanosEqualsPrometheus(t *testing.T) {
	for _, sc := range []string{"steady", "redeploy", "ladder-steps"} {
		t.Run(sc, func(t *testing.T) {
			stack := thanostest.Start(t, cache.Generated(t, sc).OM)
			run, prom := cache.Prometheus(t, sc)
			want, promReqs, promWall, _ := exportSummary(t, run, prom.URL)
			got, thanosReqs, thanosWall, _ := exportSummary(t, run, stack.URL)
			t.Logf("%s export: prometheus %d requests in %v, thanos %d requests in %v", sc,
				promReqs, promWall.Round(time.Millisecond), thanosReqs, thanosWall.Round(time.Millisecond))
			checkThanos(t, "both replicas", want, got)
			if sc != "steady" {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := stack.StopSidecar(ctx, 1); err != nil {
				t.Fatal(err)
			}
			one, _, _, printed := exportSummary(t, run, stack.URL)
			checkThanos(t, "one replica", want, one)
			t.Logf("with one sidecar stopped the export printed:\n%s", printed)
			if err := stack.StopSidecar(ctx, 0); err != nil {
				t.Fatal(err)
			}
			none, _, _, printed := exportSummary(t, run, stack.URL)
			t.Logf("with both sidecars stopped the export printed:\n%s", printed)
			if !strings.Contains(printed, "null: no series of") {
				t.Errorf("with both sidecars stopped the export does not say why its values are null:\n%s", printed)
			}
			packing, _ := none["cluster_packing"].(map[string]any)
			summary, _ := packing["summary"].(map[string]any)
			if summary == nil || summary["p50"] != nil {
				t.Errorf("with both sidecars stopped cluster_packing.summary = %v, want p50 null", packing["summary"])
			}
		})
	}
}

// thanosApprox are the fields Thanos Query computes slightly differently
// from Prometheus 2.42 over the same samples, its Prometheus 3 engine
// taking range selectors left-open (docs/backends.md): the PSI stall
// summaries (rates) and the worker working set at a redeploy.
var thanosApprox = map[string]bool{
	"node_psi.cpu_stall_pct": true, "node_psi.mem_stall_pct": true, "node_psi.io_stall_pct": true,
	"pod_psi.cpu_stall_pct": true, "pod_psi.mem_stall_pct": true, "pod_psi.io_stall_pct": true,
	"working_set.worker": true,
}

// checkThanos asserts Thanos's summary equals Prometheus's in every field
// but thanosApprox, and in those within 1 % but for at most two values
// (the points where pods go away).
func checkThanos(t *testing.T, label string, want, got map[string]any) {
	t.Helper()
	far := 0
	for _, k := range diffKeys(want, got) {
		if !thanosApprox[k] {
			t.Errorf("%s: thanos summary differs from prometheus in %s", label, k)
			continue
		}
		top, sub, _ := strings.Cut(k, ".")
		a, _ := want[top].(map[string]any)
		b, _ := got[top].(map[string]any)
		n, _ := thanostest.FarValues(a[sub], b[sub], 0.01)
		t.Logf("%s: %s differs (%d values beyond 1 %%)", label, k, n)
		far += n
	}
	if far > 2 {
		t.Errorf("%s: %d values differ from prometheus by more than 1 %%", label, far)
	}
}
