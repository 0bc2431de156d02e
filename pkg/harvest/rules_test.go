package harvest

// Table tests of the block rules on hand-made decoded series (no
// Prometheus): each case pins one sentence of server-telemetry.md.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

func ser(labels map[string]string, pts ...float64) promql.Series {
	// pts are (t, v) pairs
	s := promql.Series{Labels: labels}
	for i := 0; i+1 < len(pts); i += 2 {
		s.Samples = append(s.Samples, promql.Sample{T: int64(pts[i]), V: pts[i+1]})
	}
	return s
}

func L(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func pf(x *float64) string {
	if x == nil {
		return "null"
	}
	return fmt.Sprint(*x)
}

func pi[T int | int64](x *T) string {
	if x == nil {
		return "null"
	}
	return fmt.Sprint(*x)
}

func TestQueriesAreTheSpecsPromQL(t *testing.T) {
	sel := DefaultSelectors()
	cases := []struct{ name, got, want string }{
		{"packing", PackingQuery(sel), `ate_workerpool_workers{ate_workerpool_name="benchmark-ateom"}`},
		{"node psi cpu", NodePSIQuery(sel, "cpu"),
			`sum by (instance) (rate(container_pressure_cpu_waiting_seconds_total{container="node"}[1m])) * 100 and on (instance) ` +
				`sum by (instance) (rate(container_pressure_cpu_waiting_seconds_total{pod=~"benchmark-ateom.*", container="", id=~".*[/-]pod[^/]+(\\.slice)?"}[1m])) * 100`},
		{"pod psi io", PodPSIQuery(sel, "io"),
			`sum by (pod) (rate(container_pressure_io_waiting_seconds_total{pod=~"benchmark-ateom.*", container="", id=~".*[/-]pod[^/]+(\\.slice)?"}[1m])) * 100`},
		{"ws node", WorkingSetQuery(sel, "node"),
			`max by (instance) (container_memory_working_set_bytes{container="node"}) and on (instance) count by (instance) (rate(container_cpu_usage_seconds_total{namespace="benchmark-workloads", container="ateom"}[1m]) > 0)`},
		{"ws worker", WorkingSetQuery(sel, "worker"),
			`max by (pod) (container_memory_working_set_bytes{namespace="benchmark-workloads", container="ateom"}) and on (pod) (rate(container_cpu_usage_seconds_total{namespace="benchmark-workloads", container="ateom"}[1m]) > 0)`},
		{"ws atelet", WorkingSetQuery(sel, "atelet"),
			`max by (pod, instance) (container_memory_working_set_bytes{namespace="ate-system", container="atelet"}) and on (instance) count by (instance) (rate(container_cpu_usage_seconds_total{namespace="benchmark-workloads", container="ateom"}[1m]) > 0)`},
		{"ws actor", WorkingSetQuery(sel, "actor"), `sum by (instance, exported_instance) (ate_actor_stats_memory_working_set_bytes)`},
		{"actors", SampledActorsQuery, `sum by (instance, exported_instance) (ate_actor_stats_sampled_actors)`},
		{"oom node", OOMNodeSelector, `container_oom_events_total{id="/"}`},
		{"oom pod", OOMPodSelector(sel), `container_oom_events_total{namespace="benchmark-workloads", pod=~"benchmark-ateom.*"}`},
		{"snap mem", SnapshotSelectors()[0], `{__name__=~"atelet_snapshot_size_bytes_(bucket|sum|count)", file_name=~"pages.img|memory-ranges"}`},
		{"snap all files", SnapshotSelectors()[1], `atelet_snapshot_size_bytes_sum`},
		{"restore", SnapshotSelectors()[2], `{__name__=~"ate_actor_restore_duration_seconds_(bucket|sum|count)", ate_snapshot_phase="total"}`},
		{"checkpoint", SnapshotSelectors()[3], `{__name__=~"ate_actor_checkpoint_duration_seconds_(bucket|sum|count)", ate_snapshot_phase="total"}`},
		{"quoted selector", PackingQuery(Selectors{WorkerPool: `a"b\c`}), `ate_workerpool_workers{ate_workerpool_name="a\"b\\c"}`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

func TestShiftIsIntegerDivision(t *testing.T) {
	for _, c := range []struct{ lag, want int64 }{{70, 35}, {71, 35}, {0, 0}, {1, 0}, {90, 45}} {
		if got := (Params{LagS: c.lag}).Shift(); got != c.want {
			t.Errorf("lag %d: shift %d, want %d", c.lag, got, c.want)
		}
	}
}

func TestPackingRules(t *testing.T) {
	steady := Params{SteadyStart: 10, SteadyEnd: 30}
	old := func(state string, pts ...float64) promql.Series {
		return ser(L("instance", "collector:8888", "exported_instance", "ateapi-old", "ate_worker_state", state), pts...)
	}
	nw := func(state string, pts ...float64) promql.Series {
		return ser(L("instance", "collector:8888", "exported_instance", "ateapi-new", "ate_worker_state", state), pts...)
	}
	type pt struct {
		t           int64
		busy, total float64
		ratio       string
	}
	cases := []struct {
		name    string
		series  []promql.Series
		want    []pt
		wantP50 string
		wantN   int // ratios in the summary, checked through min/max presence
	}{
		{
			name: "frozen exited ateapi loses to the process that runs latest",
			series: []promql.Series{
				old("partial", 0, 1, 10, 1, 20, 1), old("idle", 0, 3, 10, 3, 20, 3),
				nw("partial", 10, 2, 20, 2, 30, 4), nw("at_capacity", 10, 1, 20, 1, 30, 0), nw("idle", 10, 1, 20, 1, 30, 0),
			},
			want:    []pt{{0, 1, 4, "0.25"}, {10, 3, 4, "0.75"}, {20, 3, 4, "0.75"}, {30, 4, 4, "1"}},
			wantP50: "0.75",
		},
		{
			name: "tie on last-seen goes to the larger key; missing state is unknown and counts in total",
			series: []promql.Series{
				ser(L("instance", "b", "ate_worker_state", "partial"), 10, 1), ser(L("instance", "b"), 10, 2),
				ser(L("instance", "a", "ate_worker_state", "partial"), 10, 5),
			},
			want:    []pt{{10, 1, 3, "0.3333"}},
			wantP50: "0.3333",
		},
		{
			name: "zero pool: ratio null, excluded from summary; outside steady excluded",
			series: []promql.Series{
				ser(L("instance", "x", "ate_worker_state", "idle"), 0, 2, 10, 0, 20, 2, 40, 2),
				ser(L("instance", "x", "ate_worker_state", "at_capacity"), 0, 2, 10, 0, 20, 1, 40, 2),
			},
			want:    []pt{{0, 2, 4, "0.5"}, {10, 0, 0, "null"}, {20, 1, 3, "0.3333"}, {40, 2, 4, "0.5"}},
			wantP50: "0.3333",
		},
		{
			name: "scale-up: total follows the states present",
			series: []promql.Series{
				ser(L("instance", "x", "ate_worker_state", "idle"), 10, 6, 20, 2),
				ser(L("instance", "x", "ate_worker_state", "partial"), 10, 0, 20, 7),
			},
			want:    []pt{{10, 0, 6, "0"}, {20, 7, 9, "0.7778"}},
			wantP50: "0.7778",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := packingFrom(c.series, steady)
			if len(got.Timeseries) != len(c.want) {
				t.Fatalf("points %d, want %d: %+v", len(got.Timeseries), len(c.want), got.Timeseries)
			}
			for i, w := range c.want {
				g := got.Timeseries[i]
				if g.Timestamp != w.t || g.Busy != w.busy || g.Total != w.total || pf(g.Ratio) != w.ratio {
					t.Errorf("point %d: got {%d %v %v %s}, want %+v", i, g.Timestamp, g.Busy, g.Total, pf(g.Ratio), w)
				}
			}
			if pf(got.Summary.P50) != c.wantP50 {
				t.Errorf("summary p50 %s, want %s", pf(got.Summary.P50), c.wantP50)
			}
		})
	}
}

func TestActiveActorsGridWalk(t *testing.T) {
	// shift 5: range over [105, 145]; timestamps come back as t-5.
	p := Params{Start: 100, End: 140, SteadyStart: 110, SteadyEnd: 130, LagS: 10}
	series := []promql.Series{
		ser(L("instance", "n1"), 105, 3, 115, 4, 125, 5, 145, 1),
		// a duplicate replica of n1's atelet: merged by max, never summed
		ser(L("instance", "collector-2", "exported_instance", "n1"), 115, 9, 125, 2),
		ser(L("instance", "n2"), 115, 0, 125, 2),
		// 135: nobody reported (a failed scrape): skipped
	}
	got, notices := activeActors(p, rangeRead{series: series})
	if len(notices) != 0 {
		t.Errorf("notices %v", notices)
	}
	want := []ActorsPoint{{100, 3, 1}, {110, 9, 1}, {120, 7, 2}, {140, 1, 1}}
	if fmt.Sprint(got.Timeseries) != fmt.Sprint(want) {
		t.Errorf("timeseries %v, want %v", got.Timeseries, want)
	}
	if pi(got.Atelets) != "2" {
		t.Errorf("atelets %s, want 2", pi(got.Atelets))
	}
	// steady totals (110, 120): 9 and 7
	if pf(got.Summary.Min) != "7" || pf(got.Summary.Max) != "9" || pf(got.Summary.P50) != "9" || pf(got.Summary.Avg) != "8" {
		t.Errorf("summary %s %s %s %s", pf(got.Summary.Min), pf(got.Summary.P50), pf(got.Summary.Max), pf(got.Summary.Avg))
	}

	none, n := activeActors(p, rangeRead{})
	if none.Atelets != nil || none.Summary.P50 != nil || none.Timeseries == nil || len(none.Timeseries) != 0 || len(n) != 1 {
		t.Errorf("no series: %+v %v, want null atelets, null summary, [] timeseries and a notice", none, n)
	}
	failedRead, n := activeActors(p, rangeRead{err: errors.New("boom")})
	if failedRead.Atelets != nil || len(n) != 1 || n[0].Block != BlockActiveActors {
		t.Errorf("failed read: %+v %v", failedRead, n)
	}
}

func TestWorkingSetBlockCountRules(t *testing.T) {
	p := Params{SteadyStart: 100, SteadyEnd: 200}
	S := func(tv ...float64) []promql.Sample {
		var out []promql.Sample
		for i := 0; i < len(tv); i += 2 {
			out = append(out, promql.Sample{T: int64(tv[i]), V: tv[i+1]})
		}
		return out
	}
	cases := []struct {
		name   string
		series [][]promql.Sample
		shift  int64
		count  string
		p50    string
		points string
	}{
		{"two series, one steady", [][]promql.Sample{S(50, 1, 100, 2), S(50, 3)}, 0, "1", "2", "[{50 4 3} {100 2 2}]"},
		{"samples but none steady: count 0, summary null", [][]promql.Sample{S(50, 1)}, 0, "0", "null", "[{50 1 1}]"},
		{"rounding to 4 decimals", [][]promql.Sample{S(150, 0.123456), S(150, 0.000049)}, 0, "2", "0.1235", "[{150 0.1235 0.1235}]"},
		{"shifted back before the steady test", [][]promql.Sample{S(135, 1, 235, 2)}, 35, "1", "2", "[{100 1 1} {200 2 2}]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWSFold(p)
			for i, s := range c.series {
				f.add(fmt.Sprint(i), s, 1, c.shift)
			}
			b, _ := f.block("node")
			if pi(b.Count) != c.count || pf(b.Summary.P50) != c.p50 || fmt.Sprint(b.Timeseries) != c.points {
				t.Errorf("count %s p50 %s points %v; want %s %s %s", pi(b.Count), pf(b.Summary.P50), b.Timeseries, c.count, c.p50, c.points)
			}
		})
	}
	if e := emptyWSBlock(); e.Count != nil || e.Timeseries == nil || e.Summary.P50 != nil {
		t.Errorf("a block without series: %+v; want count null, timeseries [], summary null", e)
	}
	// per_actor joins a process's memory and count by timestamp, skipping
	// missing and zero counts.
	if got := perActor(S(10, 100, 20, 200, 30, 300, 40, 400), S(10, 2, 30, 0, 40, 4, 50, 5)); fmt.Sprint(got) != "[{10 50} {40 100}]" {
		t.Errorf("perActor = %v", got)
	}
}

func gr(name string, growth float64, end *float64, restarted bool, kv ...string) promql.SeriesGrowth {
	return promql.SeriesGrowth{Labels: L(append([]string{"__name__", name}, kv...)...), Growth: growth, End: end, Restarted: restarted}
}

func TestSnapshotFigures(t *testing.T) {
	e := func(x float64) *float64 { return &x }
	// MEM: 4 checkpoints in the window, sizes in (1 MiB, 2 MiB] x3 and (2,4] x1.
	mem := promql.Growth{Series: []promql.SeriesGrowth{
		gr("atelet_snapshot_size_bytes_bucket", 0, nil, false, "le", "1.048576e+06"),
		gr("atelet_snapshot_size_bytes_bucket", 3, nil, false, "le", "2.097152e+06"),
		gr("atelet_snapshot_size_bytes_bucket", 4, nil, false, "le", "4.194304e+06"),
		gr("atelet_snapshot_size_bytes_bucket", 4, nil, false, "le", "+Inf"),
		gr("atelet_snapshot_size_bytes_sum", 6*MiB, nil, false),
		gr("atelet_snapshot_size_bytes_count", 2.5, e(10), true, "instance", "a"),
		gr("atelet_snapshot_size_bytes_count", 1.5, e(7), false, "instance", "b"),
	}}
	all := promql.Growth{Series: []promql.SeriesGrowth{
		gr("atelet_snapshot_size_bytes_sum", 6*MiB, nil, false),
		gr("atelet_snapshot_size_bytes_sum", 2*MiB, nil, false, "file_name", "pages.meta"),
	}}
	ck := promql.Growth{Series: []promql.SeriesGrowth{
		gr("ate_actor_checkpoint_duration_seconds_bucket", 4, nil, false, "le", "1"),
		gr("ate_actor_checkpoint_duration_seconds_bucket", 4, nil, false, "le", "+Inf"),
		gr("ate_actor_checkpoint_duration_seconds_sum", 2, nil, false),
		gr("ate_actor_checkpoint_duration_seconds_count", 4, e(9), false),
	}}
	reads := [4]growthRead{{g: mem}, {g: all}, {g: promql.Growth{}}, {g: ck}}
	s, notices := snapshotsFrom(reads, 100, 200)
	checks := map[string]string{
		"size_p50_mb":            "1.6667", // rank 2 of 4 in (1,2] holding 3: 1 + 1*(2/3)
		"size_p99_mb":            "3.92",   // rank 3.96: (2,4] holding 1: 2 + 2*(0.96/1)
		"size_avg_mb":            "1.5",
		"checkpoints_in_window":  "4",
		"checkpoints_cumulative": "17",
		"restore_p50_s":          "null", // family absent: null, not 0
		"restore_mean_s":         "null",
		"checkpoint_p50_s":       "0.5",
		"checkpoint_mean_s":      "0.5",
		"checkpoint_mb_s":        "4", // 8 MiB over 2 s of checkpointing
	}
	for _, f := range s.Fields() {
		want, ok := checks[f.Key]
		if !ok {
			continue
		}
		got := pf(f.Float)
		if f.Key == "checkpoints_in_window" || f.Key == "checkpoints_cumulative" {
			got = pi(f.Int)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", f.Key, got, want)
		}
	}
	if len(s.Fields()) != 18 {
		t.Errorf("%d snapshot keys, want 18", len(s.Fields()))
	}
	if s.Restarted != 1 {
		t.Errorf("restarted %d, want 1", s.Restarted)
	}
	var sawRestart, sawAbsent bool
	for _, n := range notices {
		sawRestart = sawRestart || (n.Field == "" && n.Reason[:1] == "1")
		sawAbsent = sawAbsent || n.Field == "restore_*_s, restore_mean_s"
	}
	if !sawRestart || !sawAbsent {
		t.Errorf("notices %v: want one for the restart and one for the absent restore family", notices)
	}

	// A failed read nulls its fields; a failed checkpoint read nulls
	// checkpoint_mb_s even though the size sum is known.
	reads[3] = growthRead{err: errors.New("HTTP 502")}
	s, _ = snapshotsFrom(reads, 100, 200)
	if s.CheckpointMBs != nil || s.CheckpointP50S != nil || s.CheckpointMeanS != nil || s.SizeAvgMB == nil {
		t.Errorf("failed checkpoint read: mb_s %s p50 %s mean %s size_avg %s", pf(s.CheckpointMBs), pf(s.CheckpointP50S), pf(s.CheckpointMeanS), pf(s.SizeAvgMB))
	}
}

func TestRatioAndRounding(t *testing.T) {
	e := func(x float64) *float64 { return &x }
	cases := []struct {
		num, den *float64
		scale    float64
		want     string
	}{
		{nil, e(1), 1, "null"}, {e(1), nil, 1, "null"}, {e(1), e(0), 1, "null"},
		{e(1), e(3), 1, "0.3333"}, {e(0.03125), e(1), 1, "0.0312"}, {e(3 * MiB), e(2), MiB, "1.5"},
	}
	for _, c := range cases {
		if got := pf(ratio(c.num, c.den, c.scale)); got != c.want {
			t.Errorf("ratio(%s, %s, %v) = %s, want %s", pf(c.num), pf(c.den), c.scale, got, c.want)
		}
	}
	for _, c := range []struct {
		x    float64
		want string
	}{{2.5, "2"}, {3.5, "4"}, {2.4999, "2"}, {math.NaN(), "null"}} {
		if got := pi(roundInt(&c.x)); got != c.want {
			t.Errorf("round(%v) = %s, want %s (Python round: ties to even)", c.x, got, c.want)
		}
	}
	_ = percentile.Round4
}

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
func TestSnapshotEdges(t *testing.T) {
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
func TestNoEventInWindow(t *testing.T) {
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
func TestFailedDeltaReadIsNull(t *testing.T) {
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
func TestPSICountsDistinctNonEmpty(t *testing.T) {
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
func TestOOMHostsAndAbsentFamily(t *testing.T) {
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
	for _, k := range oomKeys[2:] {
		if !hasNotice(notices, BlockOOM, k, "Kubernetes") {
			t.Errorf("no placeholder notice for %s until the Kubernetes facts are set", k)
		}
	}
}

// per_actor: "per process and timestamp, actor / sampled_actors ...;
// skipped where the count is missing or 0. Its max is the highest
// per-atelet average, not the largest actor."
func TestPerActorRules(t *testing.T) {
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
