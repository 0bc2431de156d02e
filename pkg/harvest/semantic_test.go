package harvest_test

// Checks against the simulator's semantic truth (what really happened in
// the simulated cluster), independent of both PromQL and the oracle.

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/substrate/density/internal/oracle"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
)

// TestOOMEventsMatchKills: oom_events.node counts the global OOM kills of
// nodes that hosted a live worker (the system node's kill is left out);
// oom_events.pod counts kills charged to worker pods and their containers.
func TestOOMEventsMatchKills(t *testing.T) {
	for _, name := range []string{"steady", "ladder", "demo"} {
		t.Run(name, func(t *testing.T) {
			e := loadScenario(t, name)
			res := harvestOf(t, e.prom(t), e.params())
			var node, pod, systemNode int64
			for _, k := range e.truth.OOMKills {
				if k.T <= e.truth.Start || k.T > e.truth.End {
					continue
				}
				switch {
				case k.Kind == "node" && k.WorkerNode:
					node++
				case k.Kind == "node":
					systemNode++
				default:
					pod++
				}
			}
			if got := iv(res.OOM.Node); got != iv(&node) {
				t.Errorf("oom_events.node = %s, want %d (kills on worker nodes; %d on other nodes excluded)", got, node, systemNode)
			}
			if got := iv(res.OOM.Pod); got != iv(&pod) {
				t.Errorf("oom_events.pod = %s, want %d", got, pod)
			}
		})
	}
}

// TestPackingFollowsLiveAteapi: wherever the really running ateapi has
// exported a sample in the last lookback, the packing point carries that
// process's values, never the frozen re-export of an exited one.
func TestPackingFollowsLiveAteapi(t *testing.T) {
	for _, name := range []string{"redeploy", "demo"} {
		t.Run(name, func(t *testing.T) {
			e := loadScenario(t, name)
			res := harvestOf(t, e.prom(t), e.params())
			checked, frozenAround := 0, 0
			for _, pt := range res.Packing.Timeseries {
				live := e.truth.LiveProcess(pt.Timestamp)
				if live == "" {
					continue
				}
				var last *struct{ busy, total float64 }
				for _, ws := range e.truth.WorkerStates {
					if ws.Process == live && ws.Pool == e.truth.PoolName && !ws.Frozen && ws.T <= pt.Timestamp && ws.T >= pt.Timestamp-300 {
						last = &struct{ busy, total float64 }{ws.Partial + ws.AtCapacity, ws.Idle + ws.Partial + ws.AtCapacity}
					}
				}
				if last == nil {
					continue
				}
				for _, ws := range e.truth.WorkerStates {
					if ws.Frozen && ws.T <= pt.Timestamp && ws.T >= pt.Timestamp-300 {
						frozenAround++
						break
					}
				}
				checked++
				if pt.Busy != last.busy || pt.Total != last.total {
					t.Errorf("t=%d: busy/total %v/%v, live ateapi %s exported %v/%v", pt.Timestamp, pt.Busy, pt.Total, live, last.busy, last.total)
				}
			}
			if checked == 0 || frozenAround == 0 {
				t.Errorf("checked %d points, %d with a frozen re-export in reach: the scenario no longer exercises the redeploy", checked, frozenAround)
			}
		})
	}
}

// TestActiveAteletsMatchTruth: atelets = distinct atelet processes that
// exported sampled actors (a duplicate collector replica is not a second
// atelet).
func TestActiveAteletsMatchTruth(t *testing.T) {
	for _, name := range []string{"steady", "ladder", "demo"} {
		t.Run(name, func(t *testing.T) {
			e := loadScenario(t, name)
			res := harvestOf(t, e.prom(t), e.params())
			seen := map[string]bool{}
			for _, s := range e.truth.SampledActors {
				seen[s.Atelet] = true
			}
			if got, want := iv(res.ActiveActors.Atelets), strconv.Itoa(len(seen)); got != want {
				t.Errorf("atelets = %s, want %d", got, len(seen))
			}
		})
	}
}

// TestNoAteletNullsNeverZeros: without atelet and ateapi metrics every
// field they feed is null (with a notice), never 0; cAdvisor-fed fields
// are still measured.
func TestNoAteletNullsNeverZeros(t *testing.T) {
	e := loadScenario(t, "no-atelet")
	res := harvestOf(t, e.prom(t), e.params())
	kvs := flatten(res)
	for _, x := range only(kvs, "cluster_packing.summary.", "snapshots.", "active_actors.summary.", "active_actors.atelets",
		"working_set.actor.summary.", "working_set.actor.count", "working_set.per_actor.summary.", "working_set.per_actor.count",
		"working_set.atelet.summary.", "working_set.atelet.count") { // no atelet pods either
		if x.val != "null" {
			t.Errorf("%s = %s, want null", x.path, x.val)
		}
	}
	for _, x := range exact(kvs, "cluster_packing.timeseries.len", "active_actors.timeseries.len", "working_set.actor.timeseries.len", "working_set.per_actor.timeseries.len") {
		if x.val != "0" {
			t.Errorf("%s = %s, want 0 ([])", x.path, x.val)
		}
	}
	for _, x := range exact(kvs, "node_psi.cpu_stall_pct.p50", "pod_psi.io_stall_pct.p50", "working_set.node.summary.p50",
		"working_set.worker.count", "node_psi.nodes", "pod_psi.pods", "oom_events.node", "oom_events.pod") {
		if x.val == "null" {
			t.Errorf("%s is null; cAdvisor data is present", x.path)
		}
	}
	want := map[string]bool{harvest.BlockPacking: false, harvest.BlockSnapshots: false, harvest.BlockActiveActors: false}
	wsNotes := map[string]bool{}
	for _, n := range res.Notices {
		if _, ok := want[n.Block]; ok && strings.Contains(n.Reason, "no series") {
			want[n.Block] = true
		}
		if n.Block == harvest.BlockWorkingSet {
			wsNotes[n.Field] = true
		}
	}
	for b, ok := range want {
		if !ok {
			t.Errorf("no 'no series' notice for %s: %v", b, res.Notices)
		}
	}
	if !wsNotes["actor"] || !wsNotes["per_actor"] {
		t.Errorf("working_set notices %v: want actor and per_actor", wsNotes)
	}
}

// TestLadderRestartNoticed: the atelet restart inside the window is
// reported, and the snapshot counts equal the exported counter growth
// (TestHarvestMatchesOracle/ladder/snapshots pins every value).
func TestLadderRestartNoticed(t *testing.T) {
	e := loadScenario(t, "ladder")
	res := harvestOf(t, e.prom(t), e.params())
	if res.Snapshots.Restarted == 0 {
		t.Errorf("no restarted series reported; the ladder restarts an atelet inside the window")
	}
	found := false
	for _, n := range res.Notices {
		found = found || (n.Block == harvest.BlockSnapshots && strings.Contains(n.Reason, "restarted"))
	}
	if !found {
		t.Errorf("no restart notice: %v", res.Notices)
	}
}

// TestOneFailingQueryAgainstRealPrometheus: a proxy in front of the real
// Prometheus answers 502 for the checkpoint-duration reads only. Exactly the
// fields that depend on them are null; every other key equals the oracle.
func TestOneFailingQueryAgainstRealPrometheus(t *testing.T) {
	e := loadScenario(t, "steady")
	_, srv := cache.Prometheus(t, "steady")
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	fail := regexp.MustCompile(`ate_actor_checkpoint_duration_seconds`)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if fail.MatchString(r.Form.Get("query")) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html><body><h1>502 Bad Gateway</h1></body></html>"))
			return
		}
		// the form was consumed: hand the proxy a re-encoded body
		r.Body = http.NoBody
		r.URL.RawQuery = r.Form.Encode()
		r.ContentLength = 0
		r.Method = http.MethodGet
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	res := harvestOf(t, newClient(t, front.URL), e.params())
	got, want := flatten(res), flatten(oracle.Expect(e.store, e.params()))
	nulls := map[string]bool{}
	for _, k := range []string{"checkpoint_p50_s", "checkpoint_p90_s", "checkpoint_p95_s", "checkpoint_p99_s", "checkpoint_mean_s", "checkpoint_mb_s"} {
		nulls["snapshots."+k] = true
	}
	var rest, restWant []kv
	for _, x := range got {
		if nulls[x.path] {
			if x.val != "null" {
				t.Errorf("%s = %s, want null (its read failed)", x.path, x.val)
			}
			continue
		}
		rest = append(rest, x)
	}
	for _, x := range want {
		if !nulls[x.path] {
			restWant = append(restWant, x)
		}
	}
	diffKV(t, "everything else", rest, restWant)
}

// TestGoldenServerSummary pins the bytes of server_summary.json and of the
// server_summary row for the steady scenario (rewrite with -update).
func TestGoldenServerSummary(t *testing.T) {
	e := loadScenario(t, "steady")
	p := e.params()
	res := harvest.Harvest(context.Background(), e.prom(t), p)
	md := artifact.ServerMetadata{TestName: e.truth.TestName, Tag: e.truth.Tag, PromURL: "http://prometheus.benchmarking.svc.cluster.local:9090",
		Start: p.Start, End: p.End, SteadyStart: p.SteadyStart, SteadyEnd: p.SteadyEnd, LagS: p.LagS}
	js, err := artifact.ServerSummaryJSON(md, res)
	if err != nil {
		t.Fatal(err)
	}
	line, err := artifact.ServerSummaryRow(md, res).MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		data []byte
	}{{"steady.server_summary.json", js}, {"steady.server_summary.jsonl", append(line, '\n')}} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, g.data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		if !bytes.Equal(g.data, want) {
			t.Errorf("%s differs from the golden file (run with -update after checking the change)", g.file)
		}
	}
}
