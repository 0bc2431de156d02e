package plugin

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/grafana/dataplane/sdata/numeric"
	"github.com/grafana/dataplane/sdata/reader"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"

	"github.com/substrate/density/internal/statstest"
	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// numericSeries is one series of a numeric answer as Grafana's dataplane
// reader sees it: its name and labels, and its value.
type numericSeries struct {
	name   string
	labels data.Labels
	value  *float64
}

// readNumeric reads a response the way Grafana's server-side expressions
// do (github.com/grafana/dataplane/sdata): the first frame's type decides,
// it must be numeric-multi 0.1, and every frame holds one number field of
// one row, named like its frame.
func readNumeric(t testing.TB, r backend.DataResponse) []numericSeries {
	t.Helper()
	c := numericCollection(t, r, data.FrameTypeNumericMulti)
	for _, f := range r.Frames {
		if f.Meta == nil || f.Meta.Type != data.FrameTypeNumericMulti || f.Meta.TypeVersion != (data.FrameTypeVersion{0, 1}) {
			t.Fatalf("frame %q meta %+v, want numeric-multi 0.1", f.Name, f.Meta)
		}
		if len(f.Fields) == 0 && len(r.Frames) == 1 {
			continue // the empty response
		}
		if len(f.Fields) != 1 || f.Rows() != 1 || !f.Fields[0].Type().Numeric() || f.Fields[0].Name != f.Name {
			t.Fatalf("frame %q: %d fields, %d rows: want one number field named like the frame", f.Name, len(f.Fields), f.Rows())
		}
	}
	seen := map[string]bool{}
	out := make([]numericSeries, len(c.Refs))
	for i, ref := range c.Refs {
		v, _, err := ref.NullableFloat64Value()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = numericSeries{name: ref.GetMetricName(), labels: ref.GetLabels(), value: v}
		id := out[i].name + out[i].labels.String()
		if seen[id] {
			t.Fatalf("series %s twice: an alert rule would fail on duplicate labels", id)
		}
		seen[id] = true
	}
	return out
}

// numericCollection reads a response with Grafana's dataplane readers: no
// error, the first frame of kind want at type version 0.1, and a numeric
// collection without a warning.
func numericCollection(t testing.TB, r backend.DataResponse, want data.FrameType) numeric.Collection {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("query failed: %v (status %d)", r.Error, r.Status)
	}
	kind, err := reader.CanReadBasedOnMeta(r.Frames)
	if err != nil || kind != want {
		t.Fatalf("dataplane reader: kind %q, err %v; want %q", kind, err, want)
	}
	if v := r.Frames[0].Meta.TypeVersion; v != (data.FrameTypeVersion{0, 1}) {
		t.Fatalf("type version %v, want 0.1", v)
	}
	cr, err := numeric.CollectionReaderFromFrames(r.Frames)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cr.GetCollection(false)
	if err != nil || c.Warning != nil {
		t.Fatalf("numeric collection: %v (warning %v)", err, c.Warning)
	}
	return c
}

// byKey indexes series by their key label.
func byKey(ss []numericSeries) map[string]numericSeries {
	out := map[string]numericSeries{}
	for _, s := range ss {
		out[s.labels[labelKey]] = s
	}
	return out
}

// The numeric summary of the steady run over gRPC: one numeric-multi frame
// per key, labelled test_name and key only, each value the engine's
// harvest of the simulated run; keys limits the frames, labels run adds run
// and tag, and the values equal the table format's.
func TestNumericSummary(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	want := artifact.ServerSummaryValues(e.expected(t))
	got := byKey(readNumeric(t, e.one(t, c, map[string]any{"queryType": "summary", "run": e.runID, "format": "numeric"})))
	table := e.one(t, c, map[string]any{"queryType": "summary", "run": e.runID}).Frames[0]
	for _, m := range want {
		s, ok := got[m.Key]
		if !ok {
			t.Errorf("no frame for %s", m.Key)
			continue
		}
		if s.name != m.Key {
			t.Errorf("frame of key %s is named %s", m.Key, s.name)
		}
		if !eqPtr(s.value, m.Number()) {
			t.Errorf("%s = %s, harvest %s", m.Key, fmtPtr(s.value), fmtPtr(m.Number()))
		}
		if tv := num(t, field(t, table, m.Key), 0); !eqPtr(s.value, tv) {
			t.Errorf("%s = %s numeric, %s table", m.Key, fmtPtr(s.value), fmtPtr(tv))
		}
		if wl := (data.Labels{labelTestName: e.truth.TestName, labelKey: m.Key}); s.labels.String() != wl.String() {
			t.Errorf("%s labels %s, want %s", m.Key, s.labels, wl)
		}
	}
	t.Logf("%d numeric frames; cluster_packing_p50 = %s", len(got), fmtPtr(got["cluster_packing_p50"].value))

	two := readNumeric(t, e.one(t, c, map[string]any{"queryType": "summary", "run": e.runID, "format": "numeric",
		"keys": "cluster_packing_p50, restore_p99_s", "labels": "run"}))
	if len(two) != 2 {
		t.Fatalf("keys gave %d frames, want 2", len(two))
	}
	for _, s := range two {
		if s.labels[labelRun] != e.runID || s.labels[labelTag] != e.truth.Tag {
			t.Errorf("labels run: %s has labels %s", s.name, s.labels)
		}
	}
}

// Bad format options are 400s of the query alone, from the request.
func TestNumericBadOptions(t *testing.T) {
	e := newEnv(t, "steady")
	e.jsonData["gates"] = "gates:\n  - key: restore_p99_s\n    max: 0.8\n"
	c := e.client(t)
	for name, model := range map[string]map[string]any{
		"format":        {"queryType": "summary", "run": e.runID, "format": "csv"},
		"labels":        {"queryType": "summary", "run": e.runID, "format": "numeric", "labels": "tag"},
		"summary keys":  {"queryType": "summary", "run": e.runID, "format": "numeric", "keys": []string{"restore_p99_s", "nope"}},
		"ladder format": {"queryType": "ladder", "run": e.runID, "format": "wide"},
		"gates labels":  {"queryType": "gates", "run": e.runID, "format": "numeric", "labels": "all"},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.query(t, c, q("A", e.truth.Start-600, e.truth.End+600, model), q("B", e.truth.Start-600, e.truth.End+600,
				map[string]any{"queryType": "summary", "run": e.runID, "format": "numeric", "keys": "restore_p99_s"}))
			if a := r["A"]; a.Error == nil || a.Status != backend.StatusBadRequest || a.ErrorSource != backend.ErrorSourceDownstream {
				t.Errorf("%v: status %d source %q error %v, want a 400 from the request", model, a.Status, a.ErrorSource, a.Error)
			} else {
				t.Logf("%s: %v", name, a.Error)
			}
			if b := r["B"]; b.Error != nil {
				t.Errorf("the neighbour failed: %v", b.Error)
			}
		})
	}
}

// Over the store of 20 exported nightly runs: gates with format numeric
// give per gate gate_passed (1 exactly when the stored value passes the
// bound) and gates_failed; the summary over the range gives the newest
// run's values (one series per key, older runs named in a notice), and
// every run's with labels run.
func TestNumericOverStoredHistory(t *testing.T) {
	st := storetest.Build(t, storetest.Options{})
	e := storeEnv(st, "numeric-store")
	c := e.client(t)
	first, last := st.Runs[0], st.Runs[len(st.Runs)-1]
	from, to := first.Start-day, last.Start+day

	for _, r := range []storetest.Run{first, last} {
		stored := statstest.ServerSummary(t, r.Dir)
		ss := readNumeric(t, e.query(t, c, q("A", from, to, map[string]any{"queryType": "gates", "run": r.ID, "format": "numeric"}))["A"])
		bounds := map[string]func(float64) bool{
			"restore_p99_s":       func(v float64) bool { return v <= 0.8 },
			"cluster_packing_p50": func(v float64) bool { return v >= 0.9 },
		}
		failed := 0.0
		var gf *float64
		for _, s := range ss {
			if s.name == gatesFailed {
				gf = s.value
				if _, ok := s.labels[labelKey]; ok || s.labels[labelTestName] != st.TestName {
					t.Errorf("gates_failed labels %s", s.labels)
				}
				continue
			}
			key := s.labels[labelKey]
			want := 0.0
			if v := stored[key]; v != nil && bounds[key](*v) {
				want = 1
			}
			if s.name != gatePassed || s.value == nil || *s.value != want {
				t.Errorf("run %s %s %s = %s, stored value %s: want %v", r.ID, s.name, key, fmtPtr(s.value), fmtPtr(stored[key]), want)
			}
			failed += 1 - want
			t.Logf("run %s (slow %v): gate_passed{key=%s} = %s (stored %s)", r.ID, r.Slow, key, fmtPtr(s.value), fmtPtr(stored[key]))
		}
		if len(ss) != 3 || gf == nil || *gf != failed {
			t.Errorf("run %s: %d series, gates_failed %s, want 3 series and %v", r.ID, len(ss), fmtPtr(gf), failed)
		}
	}

	if r := e.query(t, c, q("A", from, to, map[string]any{"queryType": "gates", "run": last.ID, "format": "numeric", "keys": "restore_p50_s"}))["A"]; r.Status != backend.StatusBadRequest {
		t.Errorf("gates keys naming no gate: status %d (%v), want 400", r.Status, r.Error)
	}
	one := readNumeric(t, e.query(t, c, q("A", from, to, map[string]any{"queryType": "gates", "run": "latest", "format": "numeric", "keys": "restore_p99_s"}))["A"])
	if len(one) != 1 || one[0].labels[labelKey] != "restore_p99_s" || one[0].name != gatePassed {
		t.Errorf("gates keys restore_p99_s: %+v, want its gate_passed alone", one)
	}
	count := readNumeric(t, e.query(t, c, q("A", from, to, map[string]any{"queryType": "gates", "run": "latest", "format": "numeric", "keys": "gates_failed"}))["A"])
	if len(count) != 1 || count[0].name != gatesFailed || count[0].value == nil || *count[0].value != 1 {
		t.Errorf("gates keys gates_failed: %+v, want gates_failed = 1 alone", count)
	}

	rr := e.query(t, c, q("A", from, to, map[string]any{"queryType": "summary", "format": "numeric", "testName": st.TestName, "keys": "restore_p99_s"}))["A"]
	newest := readNumeric(t, rr)
	if len(newest) != 1 || !eqPtr(newest[0].value, statstest.ServerSummary(t, last.Dir)["restore_p99_s"]) {
		t.Fatalf("summary over the range: %+v, want the newest run's restore_p99_s %s", newest, fmtPtr(statstest.ServerSummary(t, last.Dir)["restore_p99_s"]))
	}
	if !hasNotice(rr.Frames[0], "older runs with the same labels left out (19:") {
		t.Errorf("no notice naming the runs left out: %s", noticeTexts(rr))
	}
	every := readNumeric(t, e.query(t, c, q("A", from, to, map[string]any{"queryType": "summary", "format": "numeric", "testName": st.TestName,
		"keys": []string{"restore_p99_s"}, "labels": "run"}))["A"])
	if len(every) != len(st.Runs) {
		t.Fatalf("labels run: %d series, want one per run (%d)", len(every), len(st.Runs))
	}
	for _, s := range every {
		i := slices.IndexFunc(st.Runs, func(r storetest.Run) bool { return r.ID == s.labels[labelRun] })
		if i < 0 || s.labels[labelTag] != st.Runs[i].Tag {
			t.Fatalf("series labels %s name no run of the store", s.labels)
		}
		if want := statstest.ServerSummary(t, st.Runs[i].Dir)["restore_p99_s"]; !eqPtr(s.value, want) {
			t.Errorf("run %s restore_p99_s %s, stored %s", st.Runs[i].ID, fmtPtr(s.value), fmtPtr(want))
		}
	}
}

// The stored ladder rows with format numeric: one frame per (step, key)
// labelled step, values the simulator's rows, and the summary keys without
// a step label.
func TestNumericLadder(t *testing.T) {
	e := newEnv(t, "ladder-steps")
	tr := e.truth
	writeRows(t, filepath.Join(e.runDir(), runs.FileStatsJSONL), ladderRows(tr))
	ss := readNumeric(t, e.one(t, e.client(t), map[string]any{"queryType": "ladder", "run": e.runID, "format": "numeric"}))
	index := map[string]numericSeries{}
	for _, s := range ss {
		index[s.labels[labelStep]+"/"+s.name] = s
		if s.labels[labelTestName] != tr.TestName || s.labels[labelKey] != s.name {
			t.Errorf("series %s labels %s", s.name, s.labels)
		}
	}
	n := 0
	for _, row := range tr.Ladder.Rows {
		step := ""
		for _, kv := range row.Values {
			if kv.Key == "step" && kv.Value != nil {
				step = *kv.Value
			}
		}
		for _, kv := range row.Values {
			if kv.Key == "step" || kv.Key == "steps" {
				continue
			}
			s, ok := index[step+"/"+kv.Key]
			if !ok {
				t.Errorf("no frame for step %s key %s", step, kv.Key)
				continue
			}
			var want *float64
			if kv.Value != nil {
				v, err := runs.ParsePyFloat(*kv.Value)
				if err != nil {
					t.Fatal(err)
				}
				want = &v
			}
			if !eqPtr(s.value, want) {
				t.Errorf("step %s %s = %s, simulator %s", step, kv.Key, fmtPtr(s.value), fmtPtr(want))
			}
			n++
		}
	}
	for _, kv := range tr.Ladder.Summary {
		if _, ok := index["/"+kv.Key]; !ok {
			t.Errorf("no summary frame for %s", kv.Key)
		}
	}
	t.Logf("%d series, %d step values checked against the simulator", len(ss), n)
}

// Golden numeric answers: the steady run's summary and the stored ladder.
// Rewrite with `go test ./pkg/plugin -run NumericGolden -update`.
func TestNumericGoldenResponses(t *testing.T) {
	e := newEnv(t, "steady")
	e.uid = "golden-numeric-steady"
	r := e.one(t, e.client(t), map[string]any{"queryType": "summary", "run": e.runID, "format": "numeric"})
	experimental.CheckGoldenJSONResponse(t, "testdata/golden", "steady-summary-numeric", &r, *update)

	l := newEnv(t, "ladder-steps")
	l.uid = "golden-numeric-ladder"
	writeRows(t, filepath.Join(l.runDir(), runs.FileStatsJSONL), ladderRows(l.truth))
	r = l.one(t, l.client(t), map[string]any{"queryType": "ladder", "run": l.runID, "format": "numeric", "keys": "users,resume_p99_ms,max_sustained_rps"})
	experimental.CheckGoldenJSONResponse(t, "testdata/golden", "ladder-steps-ladder-numeric", &r, *update)
}

// numericResponse's rules, one case each: the newest run wins among equal
// labels (a notice names the others), keys select and an unknown key is a
// 400, null stays null, and no value is the dataplane's empty response.
func TestNumericResponseRules(t *testing.T) {
	one := func(x float64) *float64 { return &x }
	l := data.Labels{labelTestName: "t", labelKey: "k"}
	vals := []numericValue{
		{name: "k", key: "k", labels: l, value: one(1), run: "old", start: 1},
		{name: "k", key: "k", labels: l, value: one(2), run: "new", start: 2},
		{name: "j", key: "j", labels: data.Labels{labelTestName: "t", labelKey: "j"}, run: "new", start: 2},
	}
	for _, c := range []struct {
		name   string
		vals   []numericValue
		keys   []string
		want   []string // name=value per frame
		status backend.Status
		notice string
	}{
		{name: "newest wins", vals: vals, want: []string{"k=2", "j=null"}, notice: "left out (1: old)"},
		{name: "keys select", vals: vals, keys: []string{"j"}, want: []string{"j=null"}},
		{name: "unknown key", vals: vals, keys: []string{"x"}, status: backend.StatusBadRequest},
		{name: "no values", want: []string{""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := numericResponse(QuerySummary, c.vals, []string{"k", "j"}, numericOptions{numeric: true, keys: c.keys}, nil, nil, nil)
			if c.status != 0 {
				if r.Status != c.status || r.ErrorSource != backend.ErrorSourceDownstream {
					t.Fatalf("status %d source %q, want %d from the request", r.Status, r.ErrorSource, c.status)
				}
				return
			}
			var got []string
			for _, f := range r.Frames {
				if f.Meta.Type != data.FrameTypeNumericMulti || f.Meta.TypeVersion != (data.FrameTypeVersion{0, 1}) {
					t.Errorf("frame %q meta %+v", f.Name, f.Meta)
				}
				if len(f.Fields) == 0 {
					got = append(got, "")
					continue
				}
				got = append(got, f.Name+"="+fmtPtr(cellNumber(f.Fields[0], 0)))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("frames %v, want %v", got, c.want)
			}
			if c.notice != "" && !hasNotice(r.Frames[0], c.notice) {
				t.Errorf("no notice %q: %+v", c.notice, r.Frames[0].Meta.Notices)
			}
		})
	}
}

// A gate whose key the run did not measure (or recorded as null) is
// gate_passed 0, never null, and counts in gates_failed; a measured pass
// is 1.
func TestGatesNumericNotMeasured(t *testing.T) {
	gs, err := verdicts.ParseGates([]byte("gates:\n  - key: restore_p99_s\n    max: 1\n  - key: cluster_packing_p50\n    min: 0.9\n  - key: restore_p50_s\n    max: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	text := func(s string) *string { return &s }
	run := &verdicts.Run{ID: "t/1/a", TestName: "t", Start: 1,
		Values: []verdicts.Value{{Key: "restore_p99_s", Text: text("0.5")}, {Key: "cluster_packing_p50"}}}
	got := byKey(readNumeric(t, gatesNumeric(run, verdicts.Evaluate(gs, run, nil), numericOptions{numeric: true}, nil)))
	for key, want := range map[string]float64{"restore_p99_s": 1, "cluster_packing_p50": 0, "restore_p50_s": 0, "": 2} { // "": gates_failed, no key label
		if s, ok := got[key]; !ok || s.value == nil || *s.value != want {
			t.Errorf("%s = %+v, want %v", key, s, want)
		}
	}
}
