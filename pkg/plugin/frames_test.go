package plugin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// mergeNotes: equal texts say once, with their runs and the highest
// severity; one run's text names it; a run is counted once; order is first
// appearance.
func TestMergeNotes(t *testing.T) {
	src := "source: results store"
	info, warn := data.NoticeSeverityInfo, data.NoticeSeverityWarning
	for _, c := range []struct {
		name  string
		notes []runNote
		want  []data.Notice
	}{
		{"none", nil, []data.Notice{}},
		{"no run", []runNote{note("caveat"), note("caveat")}, []data.Notice{{Severity: info, Text: "caveat"}}},
		{"one run", []runNote{{run: "a", text: src}}, []data.Notice{{Severity: info, Text: "run a: " + src}}},
		{"two runs", []runNote{{run: "a", text: src}, {run: "b", text: src}}, []data.Notice{{Severity: info, Text: src + " (2 runs, e.g. a, b)"}}},
		{"five runs, first three named in run order", []runNote{{run: "r1", text: src}, {run: "r2", text: src}, {run: "r3", text: src}, {run: "r4", text: src}, {run: "r5", text: src}},
			[]data.Notice{{Severity: info, Text: src + " (5 runs, e.g. r1, r2, r3)"}}},
		{"a run said twice counts once", []runNote{{run: "a", text: src}, {run: "a", text: src}}, []data.Notice{{Severity: info, Text: "run a: " + src}}},
		{"different texts stay apart, in order", []runNote{{run: "a", text: "y"}, {run: "a", text: "x"}, {run: "b", text: "y"}, note("z")},
			[]data.Notice{{Severity: info, Text: "y (2 runs, e.g. a, b)"}, {Severity: info, Text: "run a: x"}, {Severity: info, Text: "z"}}},
		{"the highest severity of those merged", []runNote{{run: "a", text: "x"}, {run: "b", text: "x", warn: true}, {run: "c", text: "x"}},
			[]data.Notice{{Severity: warn, Text: "x (3 runs, e.g. a, b, c)"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mergeNotes(c.notes)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
	// Harvest notices are warnings after the caveats.
	got := noticesMeta([]runNote{{run: "a", text: "x"}}, []harvest.Notice{{Block: "psi", Reason: "null"}})
	if fmt.Sprint(got) != fmt.Sprint([]data.Notice{{Severity: info, Text: "run a: x"}, {Severity: warn, Text: "psi: null"}}) {
		t.Errorf("noticesMeta: %v", got)
	}
}

// A summary over 40 stored runs written from one template says each
// caveat the runs share once, naming the first three runs in run order,
// rather than once per run.
func TestSummaryMergesNotices(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	m := storetest.BuildMany(t, 40, now)
	e := &env{
		name: "merged", storeRoot: m.Root, promURL: m.PromURL, now: now,
		jsonData: map[string]any{"resultsStore": m.URL, "discoverRuns": false, "timeoutSeconds": 30},
		uid:      fmt.Sprintf("ds-merged-%d", envSeq.Add(1)),
	}
	from, to := m.Runs[0].Start-day, m.Runs[len(m.Runs)-1].Start+day
	r := e.query(t, e.client(t), q("A", from, to, map[string]any{"queryType": "summary", "run": "range", "testName": m.TestName}))["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	f := summaryTable(t, r)
	if f.Rows() != 40 {
		t.Fatalf("%d rows, want 40", f.Rows())
	}
	ids := field(t, f, "id")
	texts := noticeTexts(r)
	t.Logf("%d notices:\n%s", len(r.Frames[0].Meta.Notices), texts)
	want := fmt.Sprintf("source: results store (the server_summary row of its stored stats.jsonl) (40 runs, e.g. %s, %s, %s)\n", ids.At(0), ids.At(1), ids.At(2))
	if strings.Count(texts, "source: results store") != 1 || !strings.Contains(texts, want) {
		t.Errorf("want one notice %q", want)
	}
	for _, i := range []int{3, 39} {
		if id := ids.At(i).(string); strings.Contains(texts, id) {
			t.Errorf("run %s is named in the notices: only the first three runs of a merged notice are", id)
		}
	}
	if n := len(r.Frames[0].Meta.Notices); n > 10 {
		t.Errorf("%d notices for 40 runs with the same caveats", n)
	}
}

// The Grafana unit ids of the spec: percentunit for ratios, percent for
// stall %, gbytes for GiB, mbytes for MiB, MiBs for MiB/s, s for seconds.
func TestUnitIDs(t *testing.T) {
	for got, want := range map[string]string{unitRatio: "percentunit", unitPercent: "percent", unitGiB: "gbytes", unitMiB: "mbytes", unitMiBs: "MiBs", unitSeconds: "s"} {
		if got != want {
			t.Errorf("unit %q, spec %q", got, want)
		}
	}
}

// snapshots: "one-row table whose fields are named exactly as the 18
// snapshot keys (units s, MiB, MiB/s)", checked against the spec's table.
func TestSnapshotsFrameNamesAndUnits(t *testing.T) {
	e := newEnv(t, "steady")
	f := e.one(t, e.client(t), map[string]any{"queryType": "snapshots", "run": e.runID}).Frames[0]
	want := [][2]string{
		{"size_p50_mb", "mbytes"}, {"size_p90_mb", "mbytes"}, {"size_p95_mb", "mbytes"}, {"size_p99_mb", "mbytes"}, {"size_avg_mb", "mbytes"},
		{"checkpoints_in_window", "none"}, {"checkpoints_cumulative", "none"},
		{"restore_p50_s", "s"}, {"restore_p90_s", "s"}, {"restore_p95_s", "s"}, {"restore_p99_s", "s"}, {"restore_mean_s", "s"},
		{"checkpoint_p50_s", "s"}, {"checkpoint_p90_s", "s"}, {"checkpoint_p95_s", "s"}, {"checkpoint_p99_s", "s"}, {"checkpoint_mean_s", "s"},
		{"checkpoint_mb_s", "MiBs"},
	}
	if f.Rows() != 1 || len(f.Fields) != len(want) {
		t.Fatalf("%d rows, %d fields; want one row of %d", f.Rows(), len(f.Fields), len(want))
	}
	for i, w := range want {
		fld := f.Fields[i]
		if fld.Name != w[0] || fld.Config == nil || fld.Config.Unit != w[1] {
			t.Errorf("field %d: %s unit %v, want %s %s", i, fld.Name, fld.Config, w[0], w[1])
		}
	}
}

// summary: "numeric ones as numbers (strings only for text facts such as
// machine_type)".
func TestSummaryFieldTypes(t *testing.T) {
	e := newEnv(t, "ladder")
	e.storeExport(t)
	f := e.one(t, e.client(t), map[string]any{"queryType": "summary", "run": e.runID}).Frames[0]
	for _, k := range []string{"machine_type", "kubernetes_version", "worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class", "multi_actor_worker"} {
		if _, ok := field(t, f, k).At(0).(*string); !ok {
			t.Errorf("%s is %T, want a string", k, field(t, f, k).At(0))
		}
	}
	for _, k := range []string{"cluster_packing_p50", "oom_events_node", "checkpoints_in_window", "node_count", "allocatable_cores", "worker_pod_count",
		"run_start", "run_end", "actors_per_node", "actors_per_pod_p50", "aggregate_failure_ratio"} {
		if _, ok := field(t, f, k).At(0).(*float64); !ok {
			t.Errorf("%s is %T, want a number", k, field(t, f, k).At(0))
		}
	}
}

// summaryRows is the frame of a summary (or any list type) answer holding
// one row per run: its last frame (a summary of several runs has the
// run-labelled numeric-wide frame first, then the rows as a table).
func summaryTable(t testing.TB, r backend.DataResponse) *data.Frame {
	t.Helper()
	if len(r.Frames) == 0 {
		t.Fatal("no frames")
	}
	return r.Frames[len(r.Frames)-1]
}

// A summary of several runs is first one numeric-wide row whose numbers
// carry a run label, each equal to its run's cell of the table of rows that
// follows (null stays null); a summary of one run is one numeric-wide row.
func TestSummaryOfSeveralRunsLabelled(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	ids := storeNightly(t, e.storeRoot, 5, 3, end)
	c := e.client(t)
	r := e.query(t, c, q("A", end-30*86400, end, map[string]any{"queryType": "summary", "run": "range", "testName": "nightly"}))["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	if len(r.Frames) != 2 || r.Frames[0].Meta.Type != data.FrameTypeNumericWide || r.Frames[1].Meta.Type != data.FrameTypeTable {
		t.Fatalf("frames %s", describe(r.Frames))
	}
	wide, rows := r.Frames[0], r.Frames[1]
	if wide.Rows() != 1 {
		t.Fatalf("the numeric-wide frame has %d rows", wide.Rows())
	}
	idf := field(t, rows, "id")
	checked := 0
	for _, key := range []string{"restore_p99_s", "cluster_packing_p50", "psi_cpu_stall_p50"} {
		col := field(t, rows, key)
		for i := range rows.Rows() {
			run := idf.At(i).(string)
			var got *data.Field
			for _, f := range wide.Fields {
				if f.Name == key && f.Labels["run"] == run {
					got = f
				}
			}
			if got == nil {
				t.Fatalf("no %s field labelled run=%s", key, run)
			}
			if a, b := num(t, got, 0), num(t, col, i); !eqPtr(a, b) {
				t.Errorf("%s of %s: %s in the numeric-wide row, %s in the table", key, run, fmtPtr(a), fmtPtr(b))
			}
			checked++
		}
	}
	if idf.Len() != len(ids) || checked != 3*len(ids) {
		t.Errorf("%d runs, %d values checked", idf.Len(), checked)
	}

	r = e.query(t, c, q("B", end-30*86400, end, map[string]any{"queryType": "summary", "run": ids[2]}))["B"]
	if r.Error != nil || len(r.Frames) != 1 || r.Frames[0].Meta.Type != data.FrameTypeNumericWide || r.Frames[0].Rows() != 1 {
		t.Fatalf("summary of one run: %v %s", r.Error, describe(r.Frames))
	}
}

// describe names frames and their types for failure messages.
func describe(frames data.Frames) string {
	var parts []string
	for _, f := range frames {
		tp := "untyped"
		if f.Meta != nil {
			tp = string(f.Meta.Type)
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %d rows)", f.Name, tp, f.Rows()))
	}
	return strings.Join(parts, ", ")
}

// summaryFrames: one run is one numeric-wide row; several are a
// run-labelled numeric-wide row and the table of rows, up to
// maxLabelledNumbers numbers, past which only the table remains, with a
// caveat saying why.
func TestSummaryFramesBound(t *testing.T) {
	build := func(nRuns, nKeys int) ([]runs.Entry, []*data.Field) {
		entries := make([]runs.Entry, nRuns)
		for i := range entries {
			entries[i].ID, entries[i].Start = fmt.Sprintf("t/%d/c", i), int64(i)
		}
		fields := runColumns(entries)
		for k := range nKeys {
			v := make([]*float64, nRuns)
			for i := range v {
				x := float64(i*nKeys + k)
				v[i] = &x
			}
			fields = append(fields, data.NewField(fmt.Sprintf("k%d", k), nil, v))
		}
		return entries, fields
	}
	for _, c := range []struct {
		runs, keys int
		types      []data.FrameType
		caveat     bool
	}{
		{1, 90, []data.FrameType{data.FrameTypeNumericWide}, false},
		{2, 90, []data.FrameType{data.FrameTypeNumericWide, data.FrameTypeTable}, false},
		{100, 100, []data.FrameType{data.FrameTypeNumericWide, data.FrameTypeTable}, false}, // 10,000: the bound
		{101, 100, []data.FrameType{data.FrameTypeTable}, true},
	} {
		t.Run(fmt.Sprintf("%d runs %d keys", c.runs, c.keys), func(t *testing.T) {
			entries, fields := build(c.runs, c.keys)
			frames, caveat := summaryFrames(entries, fields)
			var got []data.FrameType
			for _, f := range frames {
				got = append(got, f.Meta.Type)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.types) || (caveat != "") != c.caveat {
				t.Fatalf("frames %v caveat %q, want %v caveat %v", got, caveat, c.types, c.caveat)
			}
			if len(frames) == 2 {
				wide := frames[0]
				if len(wide.Fields) != c.runs*c.keys {
					t.Errorf("%d labelled numbers, want %d", len(wide.Fields), c.runs*c.keys)
				}
				last := wide.Fields[len(wide.Fields)-1]
				if last.Name != fmt.Sprintf("k%d", c.keys-1) || last.Labels["run"] != entries[c.runs-1].ID || *num(t, last, 0) != float64(c.runs*c.keys-1) {
					t.Errorf("last number %s %v = %v", last.Name, last.Labels, last.At(0))
				}
			}
		})
	}
}
