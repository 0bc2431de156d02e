package plugin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
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

// faultyProxy is a proxy in front of Prometheus that answers 500 while
// failing is set and delays each request by delay; it counts the requests
// that reach it.
type faultyProxy struct {
	*httptest.Server
	n       atomic.Int64
	failing atomic.Bool
	delay   atomic.Int64 // nanoseconds
}

func newFaultyProxy(t testing.TB, target string) *faultyProxy {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &faultyProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.n.Add(1)
		if p.failing.Load() {
			http.Error(w, "injected failure", http.StatusInternalServerError)
			return
		}
		if d := time.Duration(p.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// packingOutcome is how a packing answer read: "ok" with a non-null
// steady-window ratio and no failed-read notice, else what went wrong.
func packingOutcome(r backend.DataResponse) string {
	if r.Error != nil {
		return "error: " + r.Error.Error()
	}
	for _, f := range r.Frames {
		for _, n := range notices(data.Frames{f}) {
			if strings.Contains(n, "failed") || strings.Contains(n, "cancel") {
				return "notice: " + n
			}
		}
	}
	if len(r.Frames) < 2 || len(nonNullNumbers(r.Frames[1:2])) == 0 {
		return "no numbers"
	}
	return "ok"
}

// A failed read of a finished run is kept 10 s, not for good: one 500
// from Prometheus fails the packing panel; a query within 10 s shares the
// failure without a request; one after 10 s reads again and succeeds, and
// that answer is kept for good.
func TestCacheFailedReadOfFinishedRunReadAgain(t *testing.T) {
	e := newEnv(t, "steady")
	p := newFaultyProxy(t, e.prom.URL)
	e.promURL = p.URL
	e.jsonData["discoverRuns"] = false // the run comes from the store alone
	e.jsonData["preferStored"] = false // packing is harvested from Prometheus
	packing := map[string]any{"queryType": "packing", "run": e.runID}
	query := func() backend.DataResponse {
		return e.query(t, e.client(t), q("A", e.truth.Start-600, e.truth.End+600, packing))["A"]
	}

	p.failing.Store(true)
	first := query()
	n1 := p.n.Load()
	if got := packingOutcome(first); got == "ok" || n1 == 0 {
		t.Fatalf("with Prometheus failing: %s after %d requests; want a failure", got, n1)
	}
	p.failing.Store(false)

	e.now = e.now.Add(retryTTL - time.Second)
	second := query()
	if got := packingOutcome(second); got == "ok" || p.n.Load() != n1 {
		t.Fatalf("within 10 s: %s after %d new requests; want the shared failure and none", got, p.n.Load()-n1)
	}

	e.now = e.now.Add(2 * time.Second)
	third := query()
	n3 := p.n.Load()
	t.Logf("failed read: %d requests; within 10 s: 0; after 10 s: %d (%s)", n1, n3-n1, packingOutcome(third))
	if got := packingOutcome(third); got != "ok" || n3 == n1 {
		t.Fatalf("after 10 s: %s after %d new requests; want read again and ok", got, n3-n1)
	}

	e.now = e.now.Add(1000 * time.Hour)
	if got := packingOutcome(query()); got != "ok" || p.n.Load() != n3 {
		t.Fatalf("a finished run read without failure, 1000 h later: %s after %d new requests; want kept", got, p.n.Load()-n3)
	}
}

// One viewer's cancellation never fails another's identical query: viewer
// A (500 ms deadline) starts the packing read of a slow Prometheus, viewer
// B (no deadline) joins it; A fails at its deadline, B gets the numbers,
// and the read, finished after both left, is kept.
func TestCacheCancelledViewerDoesNotFailAnother(t *testing.T) {
	e := newEnv(t, "steady")
	p := newFaultyProxy(t, e.prom.URL)
	e.promURL = p.URL
	e.jsonData["discoverRuns"] = false
	e.jsonData["preferStored"] = false
	c := e.client(t)
	qs := []backend.DataQuery{q("A", e.truth.Start-600, e.truth.End+600, map[string]any{"queryType": "packing", "run": e.runID})}
	e.one(t, c, map[string]any{"queryType": "runs"}) // the store listing is read before the clock starts
	p.delay.Store(int64(1500 * time.Millisecond))

	type answer struct {
		resp *backend.QueryDataResponse
		err  error
		took time.Duration
	}
	ask := func(ctx context.Context, out chan<- answer) {
		t0 := time.Now()
		resp, err := c.QueryData(ctx, &backend.QueryDataRequest{PluginContext: e.pluginContext(), Queries: qs})
		out <- answer{resp, err, time.Since(t0)}
	}
	ctxA, cancelA := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelA()
	aDone, bDone := make(chan answer, 1), make(chan answer, 1)
	go ask(ctxA, aDone)
	waitFor(t, func() bool { return p.n.Load() > 0 }) // A's read has started
	go ask(context.Background(), bDone)

	a := <-aDone
	<-ctxA.Done() // the client may return at its deadline before the context's timer fires
	if a.err == nil && a.resp.Responses["A"].Error == nil || ctxA.Err() != context.DeadlineExceeded {
		t.Fatalf("viewer A answered without an error, or before its deadline: %+v (ctx %v)", a, ctxA.Err())
	}
	b := <-bDone
	if b.err != nil {
		t.Fatalf("viewer B: %v", b.err)
	}
	requests := p.n.Load()
	t.Logf("A: %v after %v; B: %s after %v; %d Prometheus requests", a.err, a.took, packingOutcome(b.resp.Responses["A"]), b.took, requests)
	if got := packingOutcome(b.resp.Responses["A"]); got != "ok" {
		t.Fatalf("viewer B: %s; want the numbers", got)
	}
	// B shared A's read (one read of the block, not two): a third viewer
	// is answered from the cache.
	if got := packingOutcome(e.one(t, c, map[string]any{"queryType": "packing", "run": e.runID})); got != "ok" || p.n.Load() != requests {
		t.Fatalf("a third viewer: %s after %d new requests; want the kept read", got, p.n.Load()-requests)
	}
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
	k := d.key(keyBlock, base, harvest.BlockPacking)
	if d.key(keyBlock, base, harvest.BlockPacking) != k {
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
		if d.key(keyBlock, v, harvest.BlockPacking) == k {
			t.Errorf("%s: same cache key", name)
		}
	}
	if d.key(keyBlock, base, harvest.BlockSnapshots) == k {
		t.Error("two blocks share a key")
	}
	if d.key(keyStoredFile, base, harvest.BlockPacking) == k {
		t.Error("two kinds share a key")
	}
	for _, jd := range []map[string]any{{"ateletLagSeconds": 90}, {"workerPool": "other"}, {"workerPodRegex": "w-.*"}} {
		if fakeDatasource(t, srv.URL, jd).key(keyBlock, base, harvest.BlockPacking) == k {
			t.Errorf("settings %v: same cache key", jd)
		}
	}
}
