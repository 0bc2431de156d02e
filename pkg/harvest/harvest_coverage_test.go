package harvest

// Rules of server-telemetry.md that the other tests pin only indirectly
// (through the oracle) or not at all: each case names its sentence.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/promql"
)

func fakeClient(t *testing.T, h promfake.Handler) *promql.Client {
	t.Helper()
	srv := promfake.New(t, h)
	c, err := promql.New(promql.Config{URL: srv.URL, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func emptyAnswer(r promfake.Request) promfake.Reply {
	if strings.HasSuffix(r.Path, "query_range") || strings.Contains(r.Form.Get("query"), "[") && !strings.HasPrefix(r.Form.Get("query"), "resets(") {
		return promfake.OK(promfake.Success("matrix", "[]"))
	}
	return promfake.OK(promfake.Success("vector", "[]"))
}

func hasNotice(ns []Notice, block, field, sub string) bool {
	for _, n := range ns {
		if n.Block == block && (field == "*" || n.Field == field) && strings.Contains(n.Reason, sub) {
			return true
		}
	}
	return false
}

// "Instant queries with edges A = steady_start + shift, B = steady_end +
// shift", shift = lag_s // 2.
func TestCoverageSnapshotEdges(t *testing.T) {
	for _, c := range []struct{ lag, a, b int64 }{{70, 1035, 2035}, {71, 1035, 2035}, {90, 1045, 2045}, {0, 1000, 2000}} {
		a, b := SnapshotWindow(Params{SteadyStart: 1000, SteadyEnd: 2000, LagS: c.lag})
		if a != c.a || b != c.b {
			t.Errorf("lag %d: (A, B) = (%d, %d), want (%d, %d)", c.lag, a, b, c.a, c.b)
		}
	}
}

// "NaN → null when no event happened" for window quantiles, and ratio()
// with a zero denominator is null, while a present family with no growth
// is a measured 0 checkpoints (a count, not null).
func TestCoverageNoEventInWindow(t *testing.T) {
	e := func(x float64) *float64 { return &x }
	flat := promql.Growth{Series: []promql.SeriesGrowth{
		gr("atelet_snapshot_size_bytes_bucket", 0, nil, false, "le", "1.048576e+06"),
		gr("atelet_snapshot_size_bytes_bucket", 0, nil, false, "le", "+Inf"),
		gr("atelet_snapshot_size_bytes_sum", 0, nil, false),
		gr("atelet_snapshot_size_bytes_count", 0, e(40), false),
	}}
	sums := promql.Growth{Series: []promql.SeriesGrowth{gr("atelet_snapshot_size_bytes_sum", 0, nil, false)}}
	ck := promql.Growth{Series: []promql.SeriesGrowth{
		gr("ate_actor_checkpoint_duration_seconds_bucket", 0, nil, false, "le", "1"),
		gr("ate_actor_checkpoint_duration_seconds_bucket", 0, nil, false, "le", "+Inf"),
		gr("ate_actor_checkpoint_duration_seconds_sum", 0, nil, false),
		gr("ate_actor_checkpoint_duration_seconds_count", 0, e(7), false),
	}}
	s, notices := snapshotsFrom([4]growthRead{{g: flat}, {g: sums}, {g: ck}, {g: ck}}, 100, 200)
	got := map[string]string{}
	for _, f := range s.Fields() {
		if f.Unit == "" {
			got[f.Key] = pi(f.Int)
		} else {
			got[f.Key] = pf(f.Float)
		}
	}
	for k, v := range got {
		want := "null"
		switch k {
		case "checkpoints_in_window":
			want = "0"
		case "checkpoints_cumulative":
			want = "40"
		}
		if v != want {
			t.Errorf("%s = %s, want %s", k, v, want)
		}
	}
	if !hasNotice(notices, BlockSnapshots, "size_*_mb, size_avg_mb", "no memory-image checkpoint") {
		t.Errorf("no notice says why the sizes are null: %v", notices)
	}
}

// "A failed or malformed read makes the field null (never 0, and a failed
// delta read is null even when the end value is known)": the memory-image
// counter reads fine at A and at B, but the raw-sample read its restart
// needs fails; every delta-derived field is null, with the reason.
func TestCoverageFailedDeltaReadIsNull(t *testing.T) {
	p := Params{Start: 1700000000, End: 1700003600, SteadyStart: 1700000600, SteadyEnd: 1700003000, LagS: 70, Sel: DefaultSelectors()}
	a, _ := SnapshotWindow(p)
	count := map[string]string{"__name__": "atelet_snapshot_size_bytes_count", "instance": "n1", "file_name": "pages.img"}
	c := fakeClient(t, func(r promfake.Request) promfake.Reply {
		q := r.Form.Get("query")
		if !strings.Contains(q, "file_name") {
			return emptyAnswer(r)
		}
		switch {
		case strings.HasPrefix(q, "resets("):
			return promfake.OK(promfake.Success("vector", promfake.Vector(promfake.Stream{
				Labels: map[string]string{"instance": "n1", "file_name": "pages.img"}, Points: []promfake.Point{{T: 1700003035, V: "1"}}})))
		case strings.Contains(q, "["):
			return promfake.HTML(502)
		}
		v := "9"
		if r.Form.Get("time") == fmt.Sprint(a) {
			v = "5"
		}
		return promfake.OK(promfake.Success("vector", promfake.Vector(promfake.Stream{Labels: count, Points: []promfake.Point{{T: 1700000000, V: v}}})))
	})
	s, notices := HarvestSnapshots(context.Background(), c, p)
	for name, v := range map[string]*float64{"size_p50_mb": s.SizeP50MB, "size_avg_mb": s.SizeAvgMB} {
		if v != nil {
			t.Errorf("%s = %v, want null", name, *v)
		}
	}
	if s.CheckpointsInWindow != nil {
		t.Errorf("checkpoints_in_window = %d, want null (the delta read failed)", *s.CheckpointsInWindow)
	}
	if !hasNotice(notices, BlockSnapshots, "size_*_mb, size_avg_mb, checkpoints_in_window, checkpoints_cumulative", "reading raw samples") {
		t.Errorf("no failure notice: %v", notices)
	}
}

// "nodes / pods = distinct non-empty instance / pod labels seen in any of
// the three results".
func TestCoveragePSICountsDistinctNonEmpty(t *testing.T) {
	p := Params{Start: 1700000000, End: 1700000100, SteadyStart: 1700000000, SteadyEnd: 1700000100, LagS: 70, Sel: DefaultSelectors()}
	pt := []promfake.Point{{T: 1700000000, V: "1"}, {T: 1700000010, V: "2"}}
	c := fakeClient(t, func(r promfake.Request) promfake.Reply {
		q := r.Form.Get("query")
		var streams []promfake.Stream
		switch {
		case strings.Contains(q, "pressure_cpu"):
			streams = []promfake.Stream{{Labels: map[string]string{"pod": "w-a", "instance": "n1"}, Points: pt}, {Labels: map[string]string{}, Points: pt}}
		case strings.Contains(q, "pressure_io"):
			streams = []promfake.Stream{{Labels: map[string]string{"pod": "w-b", "instance": "n1"}, Points: pt}, {Labels: map[string]string{"pod": "w-a", "instance": "n2"}, Points: pt}}
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(streams...)))
	})
	pod, _ := HarvestPodPSI(context.Background(), c, p)
	node, _ := HarvestNodePSI(context.Background(), c, p)
	if pi(pod.Count) != "2" || pi(node.Count) != "2" {
		t.Errorf("pods %s, nodes %s; want 2 and 2 (w-a, w-b / n1, n2; the unlabelled series is not counted)", pi(pod.Count), pi(node.Count))
	}
	// mem answered with no series: a measured nothing, P all null.
	if pod.Mem.Summary.P50 != nil || pod.CPU.Summary.P50 == nil {
		t.Errorf("mem p50 %s cpu p50 %s", pf(pod.Mem.Summary.P50), pf(pod.CPU.Summary.P50))
	}
}

// oom_events: "node: ... summed over series whose instance hosted a live
// worker pod during the run"; "null when the read failed or the family is
// absent".
func TestCoverageOOMHostsAndAbsentFamily(t *testing.T) {
	p := Params{Start: 1700000000, End: 1700003600, SteadyStart: 1700000600, SteadyEnd: 1700003000, LagS: 70, Sel: DefaultSelectors()}
	node := func(inst, v string) promfake.Stream {
		return promfake.Stream{Labels: map[string]string{"__name__": "container_oom_events_total", "id": "/", "instance": inst}, Points: []promfake.Point{{T: 1, V: v}}}
	}
	c := fakeClient(t, func(r promfake.Request) promfake.Reply {
		q := r.Form.Get("query")
		switch {
		case strings.HasPrefix(q, "count by (instance)"): // LIVE hosts over the run
			return promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{Labels: map[string]string{"instance": "n1"},
				Points: []promfake.Point{{T: 1700000100, V: "2"}}})))
		case strings.HasPrefix(q, "resets(") && strings.Contains(q, `id="/"`):
			return promfake.OK(promfake.Success("vector", promfake.Vector(
				promfake.Stream{Labels: map[string]string{"id": "/", "instance": "n1"}, Points: []promfake.Point{{T: 1, V: "0"}}},
				promfake.Stream{Labels: map[string]string{"id": "/", "instance": "n2"}, Points: []promfake.Point{{T: 1, V: "0"}}})))
		case q == OOMNodeSelector && r.Form.Get("time") == fmt.Sprint(p.Start):
			return promfake.OK(promfake.Success("vector", promfake.Vector(node("n1", "1"), node("n2", "5"))))
		case q == OOMNodeSelector:
			return promfake.OK(promfake.Success("vector", promfake.Vector(node("n1", "3"), node("n2", "9"))))
		}
		return emptyAnswer(r) // the worker pods' OOM family is absent
	})
	o, notices := HarvestOOM(context.Background(), c, p)
	if pi(o.Node) != "2" {
		t.Errorf("node = %s, want 2 (n1 grew 1 -> 3; n2 hosted no live worker, its 4 kills are left out)", pi(o.Node))
	}
	if o.Pod != nil || !hasNotice(notices, BlockOOM, "pod", "no series") {
		t.Errorf("pod = %s, want null with a notice (family absent): %v", pi(o.Pod), notices)
	}
	for _, k := range OOMKeys[2:] {
		if !hasNotice(notices, BlockOOM, k, "Kubernetes") {
			t.Errorf("no placeholder notice for %s until the Kubernetes facts are set", k)
		}
	}
}

// per_actor: "per process and timestamp, actor / sampled_actors ...;
// skipped where the count is missing or 0. Its max is the highest
// per-atelet average, not the largest actor."
func TestCoveragePerActorRules(t *testing.T) {
	const gib = 1 << 30
	// lag 10: shift 5; reads over [105, 145], timestamps moved back by 5.
	p := Params{Start: 100, End: 140, SteadyStart: 100, SteadyEnd: 120, LagS: 10, Sel: DefaultSelectors()}
	g := func(v float64) string { return fmt.Sprint(v * gib) }
	c := fakeClient(t, func(r promfake.Request) promfake.Reply {
		if r.Form.Get("query") != ActorMemoryQuery {
			return promfake.OK(promfake.Success("matrix", "[]"))
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(
			promfake.Stream{Labels: map[string]string{"instance": "n1"}, Points: []promfake.Point{{T: 105, V: g(2)}, {T: 115, V: g(4)}, {T: 125, V: g(6)}}},
			promfake.Stream{Labels: map[string]string{"instance": "n2"}, Points: []promfake.Point{{T: 105, V: g(3)}}},
		)))
	})
	sampled := func(context.Context) rangeRead {
		return rangeRead{series: []promql.Series{
			ser(L("instance", "n1"), 105, 2, 115, 0), // 115: count 0; 125: missing
			ser(L("instance", "n2"), 105, 1),
		}}
	}
	w, _ := workingSet(context.Background(), c, p, sampled)
	pa := w.PerActor
	// n1: 2 GiB / 2 actors = 1 at t=100; n2: 3 GiB / 1 = 3 at t=100.
	if got := fmt.Sprint(pa.Timeseries); got != "[{100 4 3}]" {
		t.Errorf("per_actor timeseries %s, want [{100 4 3}]", got)
	}
	if pf(pa.Summary.Max) != "3" || pf(pa.Summary.Min) != "1" || pi(pa.Count) != "2" {
		t.Errorf("per_actor max %s min %s count %s; want 3, 1, 2", pf(pa.Summary.Max), pf(pa.Summary.Min), pi(pa.Count))
	}
	// actor itself: every sample, shifted back, in GiB.
	if got := fmt.Sprint(w.Actor.Timeseries); got != "[{100 5 3} {110 4 4} {120 6 6}]" {
		t.Errorf("actor timeseries %s", got)
	}
}
