package ladder

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

var cache *promtest.Cache

func TestMain(m *testing.M) {
	cache = promtest.NewCache()
	code := m.Run()
	cache.Close()
	os.Exit(code)
}

const scenario = "ladder-steps"

func readLadder(t testing.TB, dir string) runs.Ladder {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, runs.FileLogs))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lad, err := runs.ReadLadder(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return lad
}

func client(t testing.TB, url string, log *promql.Log) *promql.Client {
	t.Helper()
	c, err := promql.New(promql.Config{URL: url, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	if log != nil {
		c = c.Recording(log)
	}
	return c
}

func builtin(t testing.TB) Profile {
	p, err := Builtin().Expand(DefaultVars())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	}
	return "?"
}

// checkRows compares every key of every row with the simulator's truth.
func checkRows(t *testing.T, rows []artifact.Row, tr *simrun.Truth) int {
	t.Helper()
	lt := tr.Ladder
	if len(rows) != len(lt.Rows)+1 {
		t.Fatalf("%d rows, want %d", len(rows), len(lt.Rows)+1)
	}
	n := 0
	cmp := func(metric string, got artifact.Object, want []simrun.KV) {
		if len(got) != len(want) {
			t.Errorf("%s: keys %v, want %d keys", metric, got.Keys(), len(want))
		}
		for i, kv := range want {
			w := "null"
			if kv.Value != nil {
				w = *kv.Value
			}
			if i >= len(got) || got[i].Key != kv.Key || text(got[i].Value) != w {
				g := "missing"
				if i < len(got) {
					g = got[i].Key + "=" + text(got[i].Value)
				}
				t.Errorf("%s key %d: %s, want %s=%s", metric, i, g, kv.Key, w)
			}
			n++
		}
	}
	for i, want := range lt.Rows {
		if rows[i].Metric != want.Metric {
			t.Errorf("row %d metric %s, want %s", i, rows[i].Metric, want.Metric)
		}
		cmp(want.Metric, rows[i].Measurements, want.Values)
	}
	last := rows[len(rows)-1]
	if last.Metric != MetricSummary {
		t.Errorf("last row %s", last.Metric)
	}
	cmp(MetricSummary, last.Measurements, lt.Summary)
	return n
}

func TestLadderPrometheus(t *testing.T) {
	run, srv := cache.Prometheus(t, scenario)
	lad := readLadder(t, run.Dir)
	var log promql.Log
	res := Evaluate(context.Background(), client(t, srv.URL, &log), lad, builtin(t), DefaultOptions())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	rows := res.StatsRows(run.Truth.Start, run.Truth.Tag, run.Truth.TestName)
	n := checkRows(t, rows, run.Truth)
	skipped := 0
	for _, note := range res.Notices {
		if strings.Contains(note, "skipped") {
			skipped++
		}
	}
	if skipped != len(run.Truth.Ladder.Skipped) || !strings.Contains(strings.Join(res.Notices, "\n"), "step 5/5 has no end") ||
		!strings.Contains(strings.Join(res.Notices, "\n"), "step 3/5 lasted 20.000 s") {
		t.Errorf("notices %q", res.Notices)
	}
	if !strings.Contains(strings.Join(res.Notices, "\n"), "restarted") {
		t.Errorf("no restart notice in %q", res.Notices)
	}
	t.Logf("%d keys equal the truth; %d requests", n, len(log.Queries()))
}

func TestLadderVictoriaMetricsCounters(t *testing.T) {
	run, srv := cache.VictoriaMetrics(t, scenario)
	lad := readLadder(t, run.Dir)
	prof := Profile{}
	for _, f := range builtin(t) {
		if f.Reduce == ReduceGrowth || f.Reduce == ReduceGrowthRate {
			prof = append(prof, f)
		}
	}
	res := Evaluate(context.Background(), client(t, srv.URL, nil), lad, prof, DefaultOptions())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := map[string]string{}
	for _, r := range run.Truth.Ladder.Rows {
		for _, kv := range r.Values {
			if kv.Value != nil {
				want[r.Metric+" "+kv.Key] = *kv.Value
			}
		}
	}
	n := 0
	for _, r := range res.StatsRows(run.Truth.Start, "", "") {
		for _, f := range r.Measurements {
			if w, ok := want[r.Metric+" "+f.Key]; ok && r.Metric != MetricSummary {
				if text(f.Value) != w {
					t.Errorf("%s %s = %s, want %s", r.Metric, f.Key, text(f.Value), w)
				}
				n++
			}
		}
	}
	if n < 3*9 {
		t.Errorf("only %d counter keys compared", n)
	}
}

func TestLadderFailedReadWritesNoRows(t *testing.T) {
	run, srv := cache.Prometheus(t, scenario)
	lad := readLadder(t, run.Dir)
	for _, bad := range []string{"pg_stat_activity_count", "locust_server_duration_milliseconds_bucket", "locust_requests_total"} {
		t.Run(bad, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res := Evaluate(ctx, client(t, promfake.FailingProxy(t, srv.URL, bad), nil), lad, builtin(t), DefaultOptions())
			if res.Err == nil || res.Rows != nil || res.StatsRows(1, "", "") != nil {
				t.Fatalf("a failed read still gave rows: %+v", res)
			}
			if !strings.Contains(strings.Join(res.Notices, "\n"), "no ladder rows written") {
				t.Errorf("notices %q", res.Notices)
			}
		})
	}
}

// An operation named by --ladder-resume-name that has neither success nor
// failure series gets no failures_<op> key in any step row (ladder-steps.md,
// Decisions); the pause operation, which ran, keeps its key.
func TestLadderResumeOpWithoutSeriesHasNoFailuresKey(t *testing.T) {
	run, srv := cache.Prometheus(t, scenario)
	lad := readLadder(t, run.Dir)
	vars := DefaultVars()
	vars["resume_name"] = "NoSuchOp"
	prof, err := Builtin().Expand(vars)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.ResumeName = "NoSuchOp"
	res := Evaluate(context.Background(), client(t, srv.URL, nil), lad, prof, o)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	rows := res.StatsRows(run.Truth.Start, "", "")
	if len(rows) != len(run.Truth.Ladder.Rows)+1 {
		t.Fatalf("%d rows", len(rows))
	}
	pauseKey := "failures_" + snake(DefaultVars()["pause_name"])
	for _, r := range rows[:len(rows)-1] {
		if _, ok := r.Measurements.Get("failures_no_such_op"); ok {
			t.Errorf("%s has failures_no_such_op: %v", r.Metric, r.Measurements.Keys())
		}
		if v, ok := r.Measurements.Get(pauseKey); !ok || v == nil {
			t.Errorf("%s: %s = %v (present %v)", r.Metric, pauseKey, v, ok)
		}
		if v, ok := r.Measurements.Get("resume_rps"); !ok || v != nil {
			t.Errorf("%s: resume_rps = %v (present %v), want null", r.Metric, v, ok)
		}
	}
	if v, _ := rows[len(rows)-1].Measurements.Get("knee_step"); v != nil {
		t.Errorf("knee %v", v)
	}
}

func TestLadderUserProfile(t *testing.T) {
	run, srv := cache.Prometheus(t, scenario)
	lad := readLadder(t, run.Dir)
	y := `
- key: resume_rps
  query: 'locust_requests_total{name="${resume_name}", status="success"}'
  reduce: growth_rate
- key: commits
  query: pg_stat_database_xact_commit{datname="ate"}
  reduce: growth
- key: backends_min
  query: sum(pg_stat_database_numbackends)
  reduce: min
- key: missing_family
  query: no_such_metric_total
  reduce: growth
`
	p, err := ParseProfile([]byte(y), DefaultVars())
	if err != nil {
		t.Fatal(err)
	}
	res := Evaluate(context.Background(), client(t, srv.URL, nil), lad, p, DefaultOptions())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	rows := res.StatsRows(run.Truth.Start, "", "")
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	keys := rows[0].Measurements.Keys()
	if strings.Join(keys[7:], ",") != "resume_rps,commits,backends_min,missing_family" {
		t.Errorf("keys %v", keys)
	}
	if v, _ := rows[0].Measurements.Get("missing_family"); v != nil {
		t.Errorf("absent family gave %v", v)
	}
	want := ""
	for _, kv := range run.Truth.Ladder.Rows[0].Values {
		if kv.Key == "resume_rps" {
			want = *kv.Value
		}
	}
	if v, _ := rows[0].Measurements.Get("resume_rps"); text(v) != want {
		t.Errorf("resume_rps %v, want %s", v, want)
	}
	// Without resume_requests the knee cannot check failures: null, with a notice.
	if v, _ := rows[3].Measurements.Get("knee_step"); v != nil {
		t.Errorf("knee %v", v)
	}
	if v, _ := rows[3].Measurements.Get("first_short_step"); text(v) != "4" {
		t.Errorf("first short %v", v)
	}
}

func BenchmarkLadderEvaluate(b *testing.B) {
	run, srv := cache.Prometheus(b, scenario)
	lad := readLadder(b, run.Dir)
	prof := builtin(b)
	b.ResetTimer()
	var n int
	for b.Loop() {
		var log promql.Log
		res := Evaluate(context.Background(), client(b, srv.URL, &log), lad, prof, DefaultOptions())
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		n = len(log.Entries())
	}
	b.ReportMetric(float64(n), "queries/op")
}
