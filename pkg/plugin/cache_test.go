package plugin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// countingProxy counts the requests that reach Prometheus.
type countingProxy struct {
	*httptest.Server
	n atomic.Int64
}

func newCountingProxy(t testing.TB, target string) *countingProxy {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &countingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.n.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// dashboard is one load of a dashboard over a run: every query type.
func dashboard(e *env) []backend.DataQuery {
	from, to := e.truth.Start-600, e.truth.End+600
	var qs []backend.DataQuery
	for i, m := range []map[string]any{
		{"queryType": "runs"}, {"queryType": "annotations"},
		{"queryType": "packing", "run": e.runID}, {"queryType": "psi", "run": e.runID, "scope": "node", "resource": "cpu"},
		{"queryType": "psi", "run": e.runID, "scope": "pod", "resource": "memory"}, {"queryType": "snapshots", "run": e.runID},
		{"queryType": "activeActors", "run": e.runID}, {"queryType": "workingSet", "run": e.runID, "block": "node"},
		{"queryType": "workingSet", "run": e.runID, "block": "per_actor"}, {"queryType": "oomEvents", "run": e.runID},
		{"queryType": "clusterFacts", "run": e.runID}, {"queryType": "frontier", "run": e.runID}, {"queryType": "summary", "run": e.runID},
	} {
		qs = append(qs, q(string(rune('A'+i)), from, to, m))
	}
	return qs
}

// loadDashboard sends one dashboard load and returns how long it took.
func loadDashboard(t testing.TB, e *env) time.Duration {
	t.Helper()
	t0 := time.Now()
	resp := e.query(t, e.client(t), dashboard(e)...)
	took := time.Since(t0)
	for ref, r := range resp {
		if r.Error != nil {
			t.Fatalf("query %s: %v", ref, r.Error)
		}
	}
	return took
}

// A finished run's second dashboard load does not touch Prometheus; with
// the cache off (cacheEntries 0) it costs the same as the first. A live
// run is reused only for liveTTL.
func TestCacheOfFinishedRuns(t *testing.T) {
	e := newEnv(t, "steady")
	p := newCountingProxy(t, e.prom.URL)
	e.promURL = p.URL
	e.jsonData["discoverRuns"] = false // the runs table then reads only the store
	d1 := loadDashboard(t, e)
	first := p.n.Load()
	d2 := loadDashboard(t, e)
	second := p.n.Load() - first
	t.Logf("finished run, cache on: first load %d Prometheus requests in %v, second load %d in %v", first, d1, second, d2)
	if first == 0 || second != 0 {
		t.Fatalf("first load %d requests, second %d; want >0 then 0", first, second)
	}

	off := newEnv(t, "steady")
	poff := newCountingProxy(t, off.prom.URL)
	off.promURL = poff.URL
	off.jsonData["discoverRuns"] = false
	off.jsonData["cacheEntries"] = 0
	loadDashboard(t, off)
	a := poff.n.Load()
	loadDashboard(t, off)
	b := poff.n.Load() - a
	t.Logf("cache off: first load %d requests, second load %d", a, b)
	// Every load reads each block at least once (panels only share reads
	// that are in flight at the same time).
	if a < first || b < first {
		t.Fatalf("without the cache the loads made %d and %d requests; one read of every block is %d", a, b, first)
	}

	live := newEnv(t, "steady")
	pl := newCountingProxy(t, live.prom.URL)
	live.promURL = pl.URL
	live.jsonData["discoverRuns"] = false
	live.now = time.Unix(live.truth.End+30, 0) // younger than the atelet lag
	loadDashboard(t, live)
	l1 := pl.n.Load()
	loadDashboard(t, live)
	if pl.n.Load() != l1 {
		t.Fatalf("a load within %s re-read Prometheus", liveTTL)
	}
	live.now = live.now.Add(liveTTL + time.Second)
	loadDashboard(t, live)
	if pl.n.Load() == l1 {
		t.Fatalf("a young run was still cached after %s", liveTTL)
	}
	r := live.one(t, live.client(t), map[string]any{"queryType": "snapshots", "run": live.runID})
	if !hasNotice(r.Frames[0], "less than the atelet lag") {
		t.Errorf("young run without the lag notice: %+v", r.Frames[0].Meta)
	}
}

// TestCachedLatency reports the latency of a cached dashboard query
// through the gRPC protocol (measured, never asserted).
func TestCachedLatency(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	loadDashboard(t, e)
	qs := []backend.DataQuery{q("A", e.truth.Start-600, e.truth.End+600, map[string]any{"queryType": "packing", "run": e.runID})}
	lat := make([]time.Duration, 200)
	for i := range lat {
		t0 := time.Now()
		resp, err := c.QueryData(context.Background(), &backend.QueryDataRequest{PluginContext: e.pluginContext(), Queries: qs})
		lat[i] = time.Since(t0)
		if err != nil || resp.Responses["A"].Error != nil {
			t.Fatalf("query %d: %v %v", i, err, resp.Responses["A"].Error)
		}
	}
	slices.Sort(lat)
	t.Logf("cached packing query over gRPC, 200 runs: p50 %v, p90 %v, p99 %v, max %v",
		lat[100], lat[180], lat[198], lat[199])
}

func TestBlockCache(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newBlockCache(2)
	calls := 0
	get := func(key string, ttl time.Duration, at time.Time) (any, bool) {
		return c.get(context.Background(), key, at, func() (any, time.Duration) { calls++; return key + "-v", ttl })
	}
	if v, hit := get("a", -1, now); hit || v != "a-v" {
		t.Fatalf("first get: %v %v", v, hit)
	}
	if _, hit := get("a", -1, now.Add(time.Hour)); !hit {
		t.Fatal("a finished entry expired")
	}
	get("b", time.Second, now)
	if _, hit := get("b", time.Second, now.Add(2*time.Second)); hit {
		t.Fatal("a live entry outlived its TTL")
	}
	get("c", -1, now) // evicts the least recently used (a was used after b's refresh? b is newest)
	if _, _, n := c.stats(); n != 2 {
		t.Fatalf("%d entries, capacity 2", n)
	}
	if _, hit := get("a", -1, now); hit {
		t.Fatal("the least recently used entry was not evicted")
	}
	if _, hit := get("z", 0, now); hit {
		t.Fatal("z hit")
	}
	if _, hit := get("z", 0, now); hit {
		t.Fatal("a ttl-0 answer was kept")
	}

	// Concurrent misses of one key compute once.
	c2 := newBlockCache(8)
	var n atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			c2.get(context.Background(), "k", now, func() (any, time.Duration) {
				n.Add(1)
				<-release
				return 1, -1
			})
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if n.Load() != 1 {
		t.Fatalf("10 concurrent misses computed %d times", n.Load())
	}
	_ = calls
}

func BenchmarkCachedPackingQuery(b *testing.B) {
	e := newEnv(b, "steady")
	c := e.client(b)
	loadDashboard(b, e)
	qs := []backend.DataQuery{q("A", e.truth.Start-600, e.truth.End+600, map[string]any{"queryType": "packing", "run": e.runID})}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.QueryData(context.Background(), &backend.QueryDataRequest{PluginContext: e.pluginContext(), Queries: qs}); err != nil {
			b.Fatal(err)
		}
	}
}

// A cancelled read still yields each block as a Result (nulls with a
// notice, never a nil Result a handler would panic on).
func TestEmptyBlocks(t *testing.T) {
	e := newEnv(t, "steady")
	d, err := newDatasource(context.Background(), e.settings(), func() time.Time { return e.now })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Dispose()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, b := range harvest.BlockNames() {
		got := d.block(ctx, runsEntryOf(e), b)
		if got.result == nil || len(got.notices) == 0 {
			t.Errorf("%s: cancelled read gave %+v", b, got)
		}
	}
}

// runsEntryOf is the scenario's stored run as the catalog describes it.
func runsEntryOf(e *env) runs.Entry {
	tr := e.truth
	return runs.Entry{Run: runs.Run{ID: e.runID, TestName: tr.TestName, Tag: tr.Tag, Start: tr.Start, End: tr.End,
		SteadyStart: tr.SteadyStart, SteadyEnd: tr.SteadyEnd}, Source: runs.SourceStore, EndKnown: true}
}

// Caching: blocks are keyed by run and "settings that change the result":
// another window of the same id, another steady window, lag or selector is
// another entry.
func TestCacheKey(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	base := runs.Entry{Run: runs.Run{ID: "range", Start: 100, End: 200, SteadyStart: 120, SteadyEnd: 180}}
	d := fakeDatasource(t, srv.URL, map[string]any{})
	k := d.blockKey(base, harvest.BlockPacking)
	if d.blockKey(base, harvest.BlockPacking) != k {
		t.Fatal("the key is not stable")
	}
	variants := map[string]func(e *runs.Entry){
		"end":          func(e *runs.Entry) { e.End = 210 },
		"steady start": func(e *runs.Entry) { e.SteadyStart = 121 },
		"steady end":   func(e *runs.Entry) { e.SteadyEnd = 181 },
	}
	for name, mod := range variants {
		v := base
		mod(&v)
		if d.blockKey(v, harvest.BlockPacking) == k {
			t.Errorf("%s: same cache key", name)
		}
	}
	if d.blockKey(base, harvest.BlockSnapshots) == k {
		t.Error("two blocks share a key")
	}
	for _, jd := range []map[string]any{{"ateletLagSeconds": 90}, {"workerPool": "other"}, {"workerPodRegex": "w-.*"}} {
		if fakeDatasource(t, srv.URL, jd).blockKey(base, harvest.BlockPacking) == k {
			t.Errorf("settings %v: same cache key", jd)
		}
	}
}
