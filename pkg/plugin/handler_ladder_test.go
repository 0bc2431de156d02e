package plugin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// ladderRows are the simulator's expected ladder rows as stats.jsonl rows.
func ladderRows(tr *simrun.Truth) []artifact.Row {
	obj := func(kvs []simrun.KV) artifact.Object {
		o := make(artifact.Object, len(kvs))
		for i, kv := range kvs {
			o[i] = artifact.Field{Key: kv.Key}
			if kv.Value != nil {
				o[i].Value = *kv.Value
			}
		}
		return o
	}
	row := func(metric string, kvs []simrun.KV) artifact.Row {
		return artifact.Row{Timestamp: artifact.DataTimestamp(tr.Start), Tag: tr.Tag, TestName: tr.TestName, Metric: metric, Measurements: obj(kvs)}
	}
	var out []artifact.Row
	for _, r := range tr.Ladder.Rows {
		out = append(out, row(r.Metric, r.Values))
	}
	return append(out, row("ladder_summary", tr.Ladder.Summary))
}

func writeRows(t testing.TB, path string, rows []artifact.Row) {
	t.Helper()
	var b []byte
	for _, r := range rows {
		line, err := r.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkLadderFrame checks that frame f holds row i of kvs: every key a
// column, numbers equal to the text, null for null.
func checkLadderFrame(t *testing.T, f *data.Frame, i int, kvs []simrun.KV) {
	t.Helper()
	for _, kv := range kvs {
		got := num(t, field(t, f, kv.Key), i)
		var want *float64
		if kv.Value != nil {
			n, err := runs.ParsePyFloat(*kv.Value)
			if err != nil {
				t.Fatalf("%s: %v", kv.Key, err)
			}
			want = &n
		}
		if !eqPtr(got, want) {
			t.Errorf("row %d %s = %s, stored %s", i, kv.Key, fmtPtr(got), fmtPtr(want))
		}
	}
}

// A stored run's ladder is its stats.jsonl rows (the last set of them),
// with units, and costs no Prometheus request.
func TestLadderStoredRows(t *testing.T) {
	e := newEnv(t, "ladder-steps")
	tr := e.truth
	if tr.Ladder == nil || len(tr.Ladder.Rows) == 0 {
		t.Fatal("the ladder scenario has no ladder truth")
	}
	p := newCountingProxy(t, e.prom.URL)
	e.promURL = p.URL
	e.jsonData["discoverRuns"] = false
	rows := ladderRows(tr)
	// An earlier set (a re-export appended after it) must not show.
	stale := []artifact.Row{rows[0], rows[len(rows)-1]}
	stale[0].Measurements = append(artifact.Object(nil), stale[0].Measurements...)
	stale[0].Measurements[0].Value = "99"
	trial := artifact.Row{Timestamp: rows[0].Timestamp, Tag: tr.Tag, TestName: tr.TestName, Metric: artifact.MetricTrialSummary,
		Measurements: artifact.Object{{Key: "total_nodes", Value: "3"}}}
	writeRows(t, filepath.Join(e.runDir(), runs.FileStatsJSONL), append(append(stale, trial), rows...))

	r := e.one(t, e.client(t), map[string]any{"queryType": "ladder", "run": e.runID})
	if len(r.Frames) != 2 {
		t.Fatalf("%d frames, want steps and summary", len(r.Frames))
	}
	sum, steps := r.Frames[0], r.Frames[1] // the summary first, for alert rules
	if steps.Rows() != len(tr.Ladder.Rows) {
		t.Fatalf("%d step rows, stored %d", steps.Rows(), len(tr.Ladder.Rows))
	}
	for i, row := range tr.Ladder.Rows {
		checkLadderFrame(t, steps, i, row.Values)
	}
	if sum.Rows() != 1 {
		t.Fatalf("summary has %d rows", sum.Rows())
	}
	checkLadderFrame(t, sum, 0, tr.Ladder.Summary)
	for key, unit := range map[string]string{"step": "short", "users": "short", "target_rps": "reqps", "resume_rps": "reqps",
		"resume_p99_ms": "ms", "ateapi_memory_gb_max": "gbytes", "postgres_commits_per_s": "reqps"} {
		if got := field(t, steps, key).Config.Unit; got != unit {
			t.Errorf("%s unit %q, want %q", key, got, unit)
		}
	}
	if got := field(t, sum, "max_sustained_rps").Config.Unit; got != "reqps" {
		t.Errorf("max_sustained_rps unit %q", got)
	}
	if !hasNotice(sum, "source: results store") {
		t.Errorf("no results-store notice: %s", noticeTexts(r))
	}
	if n := p.n.Load(); n != 0 {
		t.Errorf("%d Prometheus requests for a stored ladder, want 0", n)
	}
	t.Logf("%d steps, %d columns, 0 Prometheus requests", steps.Rows(), len(steps.Fields))
}

// A stored run without ladder rows has its logs.txt evaluated over
// Prometheus: the frames equal the simulator's rows (the export's rounding)
// and name that source. Without logs.txt, and for a run outside the store:
// empty frames with a notice saying why.
func TestLadderWithoutRows(t *testing.T) {
	e := newEnv(t, "ladder-steps")
	tr := e.truth
	p := newCountingProxy(t, e.prom.URL)
	e.promURL = p.URL
	e.jsonData["discoverRuns"] = false
	r := e.one(t, e.client(t), map[string]any{"queryType": "ladder", "run": e.runID})
	if len(r.Frames) != 2 || r.Frames[1].Rows() != len(tr.Ladder.Rows) || r.Frames[0].Rows() != 1 {
		t.Fatalf("stored run with logs.txt and no rows: %d frames; notices %s", len(r.Frames), noticeTexts(r))
	}
	for i, row := range tr.Ladder.Rows {
		checkLadderFrame(t, r.Frames[1], i, row.Values)
	}
	checkLadderFrame(t, r.Frames[0], 0, tr.Ladder.Summary)
	if !hasNotice(r.Frames[0], "evaluated over Prometheus") || !hasNotice(r.Frames[0], "has no end") {
		t.Errorf("notices: %s", noticeTexts(r))
	}
	n := p.n.Load()
	if n == 0 {
		t.Error("no Prometheus request for a ladder evaluated from logs.txt")
	}
	// A finished run's evaluation is cached: the same query again reads
	// nothing.
	_ = e.one(t, e.client(t), map[string]any{"queryType": "ladder", "run": e.runID})
	t.Logf("%d steps from logs.txt in %d Prometheus requests; again: %d more", r.Frames[1].Rows(), n, p.n.Load()-n)

	if err := os.Remove(filepath.Join(e.runDir(), runs.FileLogs)); err != nil {
		t.Fatal(err)
	}
	bare := newEnv(t, "ladder-steps")
	bare.jsonData["discoverRuns"] = false
	if err := os.Remove(filepath.Join(bare.runDir(), runs.FileLogs)); err != nil {
		t.Fatal(err)
	}
	r = bare.one(t, bare.client(t), map[string]any{"queryType": "ladder", "run": bare.runID})
	if len(r.Frames) != 2 || r.Frames[0].Rows() != 0 || r.Frames[1].Rows() != 0 {
		t.Fatalf("stored run without rows or logs.txt: %d frames", len(r.Frames))
	}
	if !hasNotice(r.Frames[0], "no ladder rows") || !hasNotice(r.Frames[0], "no logs.txt") {
		t.Errorf("notices: %s", noticeTexts(r))
	}

	out := newEnv(t, "ladder-steps")
	delete(out.jsonData, "resultsStore")
	r = out.one(t, out.client(t), map[string]any{"queryType": "ladder", "run": "latest"})
	if len(r.Frames) != 2 || r.Frames[0].Rows() != 0 {
		t.Fatalf("run outside the store: %d frames", len(r.Frames))
	}
	if !hasNotice(r.Frames[0], "outside the results store") {
		t.Errorf("notices: %s", noticeTexts(r))
	}
}

// The setting ladderProfile replaces the built-in profile; a bad one is a
// notice on the ladder query, not a broken datasource.
func TestLadderProfileSetting(t *testing.T) {
	e := newEnv(t, "ladder-steps")
	tr := e.truth
	e.jsonData["discoverRuns"] = false
	e.jsonData["ladderProfile"] = "- {key: resume_rps, query: 'locust_requests_total{name=\"${resume_name}\", status=\"success\"}', reduce: growth_rate}\n"
	r := e.one(t, e.client(t), map[string]any{"queryType": "ladder", "run": e.runID})
	if r.Frames[1].Rows() != len(tr.Ladder.Rows) {
		t.Fatalf("%d rows; notices %s", r.Frames[1].Rows(), noticeTexts(r))
	}
	var keys []string
	for _, f := range r.Frames[1].Fields {
		keys = append(keys, f.Name)
	}
	if got := strings.Join(keys, ","); got != "step,steps,users,target_rps,window_start,window_end,window_s,resume_rps" {
		t.Errorf("columns %s, want the window and the profile's one figure", got)
	}
	for i, row := range tr.Ladder.Rows {
		for _, kv := range row.Values {
			if kv.Key == "resume_rps" {
				checkLadderFrame(t, r.Frames[1], i, []simrun.KV{kv})
			}
		}
	}

	bad := newEnv(t, "ladder-steps")
	bad.jsonData["discoverRuns"] = false
	bad.jsonData["ladderProfile"] = "- {key: x, query: 'up', reduce: median}\n"
	r = bad.one(t, bad.client(t), map[string]any{"queryType": "ladder", "run": bad.runID})
	if r.Frames[1].Rows() != 0 || !hasNotice(r.Frames[0], "ladderProfile") {
		t.Errorf("bad profile: %d rows, notices %s", r.Frames[1].Rows(), noticeTexts(r))
	}
}

// With ladderSteps, the annotations of a stored ladder run hold one region
// per step over its steady window, tagged ladder: from the stored rows, and
// from logs.txt (the same windows, with the untrimmed span in the text)
// when no rows are stored.
func TestLadderStepAnnotations(t *testing.T) {
	for _, fromRows := range []bool{true, false} {
		t.Run(map[bool]string{true: "rows", false: "logs.txt"}[fromRows], func(t *testing.T) {
			e := newEnv(t, "ladder-steps")
			tr := e.truth
			e.jsonData["discoverRuns"] = false
			if fromRows {
				writeRows(t, filepath.Join(e.runDir(), runs.FileStatsJSONL), ladderRows(tr))
			}
			c := e.client(t)
			get := func(steps bool) *data.Frame {
				r := e.query(t, c, q("A", tr.Start-600, tr.End+600, map[string]any{"queryType": "annotations", "ladderSteps": steps}))["A"]
				if r.Error != nil {
					t.Fatal(r.Error)
				}
				return r.Frames[0]
			}
			if f := get(false); f.Rows() != 2 {
				t.Fatalf("without ladderSteps %d regions, want the run and its steady window", f.Rows())
			}
			f := get(true)
			var regions [][2]int64
			for i := range f.Rows() {
				if tags := field(t, f, "tags").At(i).(string); strings.Contains(tags, "ladder") {
					from := field(t, f, "time").At(i).(time.Time).Unix()
					to := field(t, f, "timeEnd").At(i).(time.Time).Unix()
					regions = append(regions, [2]int64{from, to})
					if title := field(t, f, "title").At(i).(string); !strings.HasPrefix(title, "step ") || !strings.Contains(title, "users=") {
						t.Errorf("region title %q", title)
					}
					if text := field(t, f, "text").At(i).(string); strings.Contains(text, "the step ran") == fromRows {
						t.Errorf("region text %q: the untrimmed span comes from logs.txt only", text)
					}
				}
			}
			if len(regions) != len(tr.Ladder.Rows) {
				t.Fatalf("%d ladder regions, %d stored steps", len(regions), len(tr.Ladder.Rows))
			}
			for i, row := range tr.Ladder.Rows {
				var a, b string
				for _, kv := range row.Values {
					switch kv.Key {
					case "window_start":
						a = *kv.Value
					case "window_end":
						b = *kv.Value
					}
				}
				if strconv.FormatInt(regions[i][0], 10) != a || strconv.FormatInt(regions[i][1], 10) != b {
					t.Errorf("step %d region %v, stored window [%s, %s]", i+1, regions[i], a, b)
				}
			}
		})
	}
}
