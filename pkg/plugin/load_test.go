package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"go.uber.org/goleak"

	"github.com/substrate/density/internal/faultdoc"
)

// loadMix is the mix of query types of the load test: every query type,
// PSI and working set in several shapes.
func loadMix(e *env) []map[string]any {
	id := e.runID
	return []map[string]any{
		{"queryType": "packing", "run": id},
		{"queryType": "psi", "run": id, "scope": "node", "resource": "cpu"},
		{"queryType": "psi", "run": id, "scope": "pod", "resource": "memory"},
		{"queryType": "psi", "run": id, "scope": "node", "resource": "io"},
		{"queryType": "snapshots", "run": id},
		{"queryType": "activeActors", "run": id},
		{"queryType": "workingSet", "run": id, "block": "node"},
		{"queryType": "workingSet", "run": id, "block": "per_actor"},
		{"queryType": "oomEvents", "run": id},
		{"queryType": "clusterFacts", "run": id},
		{"queryType": "frontier", "run": id},
		{"queryType": "summary", "run": id},
		{"queryType": "runs"},
		{"queryType": "annotations"},
		{"queryType": "tests"},
	}
}

// inFlightProxy sits in front of the real Prometheus and records the most
// requests it had upstream at once. It reads each answer whole before
// answering, and counts a request only while it is upstream, so a count
// can never exceed what the client had in flight (no overlap between one
// request's tail and the next one's start).
type inFlightProxy struct {
	*httptest.Server
	upstream *http.Client
	cur, max atomic.Int64
	total    atomic.Int64
}

func newInFlightProxy(t *testing.T, target string) *inFlightProxy {
	t.Helper()
	p := &inFlightProxy{upstream: &http.Client{Transport: &http.Transport{}}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := p.cur.Add(1)
		p.total.Add(1)
		for {
			m := p.max.Load()
			if n <= m || p.max.CompareAndSwap(m, n) {
				break
			}
		}
		status, header, body, err := p.forward(r, target)
		p.cur.Add(-1)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	return p
}

func (p *inFlightProxy) forward(r *http.Request, target string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Accept-Encoding")
	resp, err := p.upstream.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	h := resp.Header.Clone()
	h.Del("Content-Length")
	return resp.StatusCode, h, body, nil
}

// close stops the proxy and its upstream connections.
func (p *inFlightProxy) close() {
	p.Close()
	p.upstream.CloseIdleConnections()
}

// loadEnv is one datasource instance of the load test.
type loadEnv struct {
	name string
	e    *env
	mix  []map[string]any
}

// TestLoadQueryData sends 500 concurrent QueryData calls of mixed query
// types over gRPC, half on a finished run (cached forever once read) and
// half on a live one (ended 30 s ago, younger than the atelet lag; the
// plugin's clock is frozen there, and its cache is off so every call
// harvests, sharing only reads in flight). Run with -race. It asserts:
// every answer equals the same query run alone on a separate instance,
// Prometheus never has more requests in flight from one instance than its
// maxConcurrentQueries, and no goroutine outlives the instances (disposed
// by a settings change, as Grafana does). Latencies are reported, never
// asserted.
func TestLoadQueryData(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const (
		calls    = 500
		maxQ     = 4
		lagNow   = 30   // live: now = end + 30 s (lag 70 s)
		pastLag  = 3600 // finished: now = end + 1 h
		settleBy = 20 * time.Second
	)
	mk := func(name string, ago int64, cache int, proxy bool) (*loadEnv, *inFlightProxy) {
		e := newEnv(t, "steady")
		e.uid = "load-" + name + "-" + e.uid
		e.now = time.Unix(e.truth.End+ago, 0)
		e.jsonData["discoverRuns"] = false
		e.jsonData["cacheEntries"] = cache
		e.jsonData["maxConcurrentQueries"] = maxQ
		var p *inFlightProxy
		if proxy {
			p = newInFlightProxy(t, e.prom.URL)
			e.promURL = p.URL
		}
		e.client(t) // sets its clock
		return &loadEnv{name: name, e: e, mix: loadMix(e)}, p
	}
	finishedRef, _ := mk("finished-sequential", pastLag, 0, false)
	liveRef, _ := mk("live-sequential", lagNow, 0, false)
	finished, pf := mk("finished", pastLag, 256, true)
	live, pl := mk("live", lagNow, 0, true)

	// Warm the gRPC connection before taking the goroutine baseline.
	warm := finishedRef.e.query(t, pluginClient, q("W", 0, 1, map[string]any{"queryType": "tests"}))
	if warm["W"].Error != nil {
		t.Fatal(warm["W"].Error)
	}
	baseline := goleak.IgnoreCurrent()

	// The reference: each query alone, one after the other.
	ref := map[string][]string{}
	for _, le := range []*loadEnv{finishedRef, liveRef} {
		for i, m := range le.mix {
			ref[le.name] = append(ref[le.name], answerOf(t, le.e, m, fmt.Sprintf("%s #%d", le.name, i)))
		}
	}

	// 500 calls at once, alternating runs, cycling through the mix.
	type result struct {
		env     *loadEnv
		i       int
		took    time.Duration
		answer  string
		refName string
	}
	results := make([]result, calls)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for k := range calls {
		le, refName := finished, finishedRef.name
		if k%2 == 1 {
			le, refName = live, liveRef.name
		}
		i := (k / 2) % len(le.mix)
		wg.Go(func() {
			<-start
			t0 := time.Now()
			a := answerOf(t, le.e, le.mix[i], fmt.Sprintf("%s call %d", le.name, k))
			results[k] = result{env: le, i: i, took: time.Since(t0), answer: a, refName: refName}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)

	for k, r := range results {
		if want := ref[r.refName][r.i]; r.answer != want {
			t.Errorf("call %d (%s, %v) differs from the same query run alone:\n got %.600s\nwant %.600s", k, r.env.name, r.env.mix[r.i], r.answer, want)
		}
	}
	var table []string
	for _, le := range []struct {
		name string
		p    *inFlightProxy
	}{{"finished", pf}, {"live", pl}} {
		var lat []time.Duration
		for _, r := range results {
			if r.env.name == le.name {
				lat = append(lat, r.took)
			}
		}
		slices.Sort(lat)
		t.Logf("%s run: %d concurrent calls, latency p50 %v, p99 %v, max %v; Prometheus requests %d, at most %d in flight (limit %d)",
			le.name, len(lat), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
			lat[len(lat)-1].Round(time.Millisecond), le.p.total.Load(), le.p.max.Load(), maxQ)
		table = append(table, fmt.Sprintf("| %s | %d | %v | %v | %v | %d | %d | %d |", le.name, len(lat),
			lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond),
			le.p.total.Load(), le.p.max.Load(), maxQ))
		if le.p.total.Load() == 0 {
			t.Errorf("%s run: no request reached Prometheus", le.name)
		}
		if le.p.max.Load() > maxQ {
			t.Errorf("%s run: %d Prometheus requests in flight, above maxConcurrentQueries %d", le.name, le.p.max.Load(), maxQ)
		}
	}
	t.Logf("%d calls in %v", calls, wall.Round(time.Millisecond))
	if faultdoc.Requested(*reliabilityDoc) {
		defer func() {
			if t.Failed() {
				return
			}
			race := "without"
			if raceEnabled {
				race = "with"
			}
			faultdoc.WriteBlock(t, "load", fmt.Sprintf("<!-- BEGIN load -->\n## Load\n\n"+
				"`TestLoadQueryData` (pkg/plugin/load_test.go), run %s the race detector: %d concurrent `QueryData` calls over gRPC "+
				"(`experimental/datasourcetest`), one query each, cycling through %d query types, half on a finished run (cache on, cold at the start) "+
				"and half on a live one (ended 30 s before the plugin's clock, younger than the 70 s atelet lag; cache off, so every call harvests and "+
				"only reads in flight are shared). All %d calls took %v. Asserted: every answer equals the same query run alone on a separate instance, "+
				"no data race, Prometheus requests in flight per instance (counted by a proxy in front of the real Prometheus 2.42) never above "+
				"`maxConcurrentQueries`, and no goroutine left once the instances are disposed. Latencies are measured, not asserted "+
				"(2 shared cores; compare within this table only).\n\n"+
				"| run | calls | p50 | p99 | max | Prometheus requests | max in flight | maxConcurrentQueries |\n|---|---|---|---|---|---|---|---|\n%s\n<!-- END load -->\n",
				race, calls, len(finished.mix), calls, wall.Round(time.Millisecond), strings.Join(table, "\n")))
		}()
	}

	// Shut down: Grafana replaces an instance when its settings change and
	// disposes the old one (after the SDK's 5 s grace); then nothing the
	// load started may be left running.
	for _, le := range []*loadEnv{finishedRef, liveRef, finished, live} {
		replaceInstance(t, le.e)
	}
	pf.upstream.CloseIdleConnections()
	pl.upstream.CloseIdleConnections()
	deadline := time.Now().Add(settleBy)
	for {
		err := goleak.Find(baseline)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines left %v after the instances were disposed:\n%v", settleBy, err)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	pf.close()
	pl.close()
}

// answerOf sends one query and returns its answer in a comparable form:
// the error, or the frames as JSON with their notices sorted.
func answerOf(t *testing.T, e *env, model map[string]any, what string) string {
	m := map[string]any{}
	for k, v := range model {
		m[k] = v
	}
	resp, err := pluginClient.QueryData(context.Background(), &backend.QueryDataRequest{
		PluginContext: e.pluginContext(),
		Queries:       []backend.DataQuery{q("A", e.truth.Start-600, e.truth.End+600, m)},
	})
	if err != nil {
		t.Errorf("%s: QueryData: %v", what, err)
		return ""
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		t.Errorf("%s (%v): %v", what, model, r.Error)
		return "error: " + r.Error.Error()
	}
	// The data links name the datasource, which differs between the
	// reference and the loaded instance.
	return strings.ReplaceAll(framesJSON(t, r.Frames), e.uid, "<datasource uid>")
}

func framesJSON(t *testing.T, frames data.Frames) string {
	var parts []string
	for _, f := range frames {
		if f.Meta != nil {
			slices.SortFunc(f.Meta.Notices, func(a, b data.Notice) int { return strings.Compare(a.Text, b.Text) })
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Errorf("encoding frame %s: %v", f.Name, err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

// replaceInstance makes Grafana's instance manager replace e's instance
// (a settings change), which disposes the old one; the new instance has
// invalid settings, so it opens nothing.
func replaceInstance(t *testing.T, e *env) {
	t.Helper()
	pc := e.pluginContext()
	s := *pc.DataSourceInstanceSettings
	s.Updated = s.Updated.Add(time.Hour)
	s.JSONData = []byte(`{"kubernetesAccess": "disposed"}`)
	pc.DataSourceInstanceSettings = &s
	resp, err := pluginClient.QueryData(context.Background(), &backend.QueryDataRequest{PluginContext: pc,
		Queries: []backend.DataQuery{q("A", 0, 1, map[string]any{"queryType": "tests"})}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Responses["A"].Error == nil {
		t.Fatalf("the replacement instance of %s has valid settings", e.uid)
	}
}
