package ladder

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

func stepRow(n int64, target *float64, rps, succ, fail *float64) StepRow {
	return StepRow{
		Step:   runs.LadderStep{Number: n, Of: 5, Users: 10 * n, TargetRPS: target},
		Window: runs.StepWindow{A: 1000 * n, B: 1000*n + 100},
		Values: []Value{
			{Key: "resume_requests", V: succ, Int: true},
			{Key: "resume_rps", V: rps},
			{Key: "failures_resume_actor_cold", V: fail, Int: true},
		},
	}
}

func TestSummaryRule(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	i := func(x int64) *int64 { return &x }
	cases := []struct {
		name        string
		rows        []StepRow
		max         *float64
		knee, short *int64
	}{
		{"knee below the short step", []StepRow{
			stepRow(1, f(100), f(99), f(9900), f(0)),
			stepRow(2, f(200), f(190), f(19000), f(190)),  // exactly 0.95, failures 0.99 %
			stepRow(3, f(300), f(284.9), f(28490), f(0)),  // short
			stepRow(4, f(400), f(390), f(39000), f(1000)), // too many failures
		}, f(190), i(2), i(3)},
		{"unpaced and unknown steps neither qualify nor are short", []StepRow{
			stepRow(1, nil, f(50), f(5000), f(0)),
			stepRow(2, f(0), f(60), f(6000), f(0)),
			stepRow(3, f(100), nil, nil, nil),
		}, nil, nil, nil},
		{"tie goes to the lowest step", []StepRow{
			stepRow(1, f(100), f(100), f(100), f(0)),
			stepRow(2, f(100), f(100), f(100), f(0)),
		}, f(100), i(1), nil},
		{"unknown failures do not qualify", []StepRow{
			stepRow(1, f(100), f(100), f(100), nil),
		}, nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := summarize(c.rows, 1, Builtin(), DefaultOptions(), nil)
			eqF := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
			eqI := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
			if s.Steps != int64(len(c.rows)) || s.StepsSkipped != 1 || !eqF(s.MaxSustainedRPS, c.max) || !eqI(s.KneeStep, c.knee) || !eqI(s.FirstShortStep, c.short) {
				t.Errorf("summary %+v", s)
			}
		})
	}
	s, notes := summarize(nil, 0, Profile{{Key: "x", Query: "y", Reduce: "max"}}, DefaultOptions(), nil)
	if s.KneeStep != nil || len(notes) != 1 || !strings.Contains(notes[0], "resume_rps") {
		t.Errorf("%+v %q", s, notes)
	}
}

func TestRowsRoundTrip(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	knee := int64(1)
	res := Result{
		Rows:    []StepRow{stepRow(1, f(100), f(99.123456), f(9912), f(3)), stepRow(2, nil, nil, nil, nil)},
		Skipped: []runs.LadderStep{{Number: 3}},
		Summary: Summary{Steps: 2, StepsSkipped: 1, MaxSustainedRPS: f(99.123456), KneeStep: &knee},
	}
	rows := res.StatsRows(1710000000, "t", "n")
	if len(rows) != 3 || rows[0].Metric != "ladder_step_001" || rows[2].Metric != MetricSummary {
		t.Fatalf("%+v", rows)
	}
	line, err := rows[0].MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp": "2024-03-09T16:00:00Z", "tag": "t", "test_name": "n", "metric": "ladder_step_001", "measurements": {"step": "1", "steps": "5", "users": "10", "target_rps": "100.0", "window_start": "1000", "window_end": "1100", "window_s": "100", "resume_requests": "9912", "resume_rps": "99.1235", "failures_resume_actor_cold": "3"}}`
	if string(line) != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
	sl, _ := rows[2].MarshalLine()
	if !strings.Contains(string(sl), `"measurements": {"steps": "2", "steps_skipped": "1", "max_sustained_rps": "99.1235", "knee_step": "1", "first_short_step": null}`) {
		t.Errorf("summary %s", sl)
	}
	var parsed []artifact.Row
	for _, r := range rows {
		b, _ := r.MarshalLine()
		p, err := artifact.ParseRow(b)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, *p)
	}
	steps, sum, found := FromRows(parsed)
	if !found || len(steps) != 2 || sum.Steps != 2 || *sum.KneeStep != 1 || sum.FirstShortStep != nil {
		t.Fatalf("%+v %+v", steps, sum)
	}
	if v := steps[0].Get("resume_rps"); v == nil || *v != 99.1235 || steps[1].Get("resume_rps") != nil || steps[0].Window.B != 1100 {
		t.Errorf("%+v", steps[0])
	}
	if (Result{Err: errTest}).StatsRows(1, "", "") != nil || (Result{}).StatsRows(1, "", "") != nil {
		t.Error("rows from a failed or empty evaluation")
	}
	for m, want := range map[string]bool{"ladder_step_001": true, "ladder_step_1234": true, "ladder_summary": true, "ladder_step_01": false, "ladder_step_x01": false, "server_summary": false} {
		if IsLadderMetric(m) != want {
			t.Errorf("IsLadderMetric(%q)", m)
		}
	}
}

var errTest = &testErr{}

type testErr struct{}

func (*testErr) Error() string { return "test" }

func TestListedValuesNeedTheirOperation(t *testing.T) {
	f := Figure{Key: "failures_{snake}", Query: `x{status="failure"}`, Reduce: ReduceGrowth, By: "name", Values: []string{"Resume", "Pause"}}
	fails := &readOut{g: promql.Growth{Series: []promql.SeriesGrowth{{Labels: map[string]string{"name": "Other"}, Growth: 3}}}}
	reads := map[readKey]*readOut{
		{growth: true, query: f.Query}:                              fails,
		{growth: true, query: `x{name="Resume", status="success"}`}: {g: promql.Growth{Series: []promql.SeriesGrowth{{Labels: map[string]string{"name": "Resume"}, Growth: 10}}}},
		{growth: true, query: `x{name="Pause", status="success"}`}:  {},
	}
	vs := figureValues(f, fails, 10, presence(reads, f))
	got := map[string]string{}
	for _, v := range vs {
		got[v.Key] = fmt.Sprint(valueText(v.V, v.Int))
	}
	// Pause has neither failure nor success series: no key at all.
	want := map[string]string{"failures_other": "3", "failures_resume": "0"}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(vs) != 2 || vs[0].Key != "failures_other" || vs[1].Key != "failures_resume" {
		t.Errorf("got %v (%v), want %v", got, vs, want)
	}
}

// TestRounded: Rounded gives the numbers the rows write (4 decimals, whole
// integer figures, null for a value that is not finite), each equal to the
// row's text read back; the summary keeps what was computed unrounded.
func TestRounded(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	nan := math.NaN()
	res := Result{
		Rows: []StepRow{
			stepRow(1, f(100.123456), f(94.99996), f(2.5), f(3.5)),
			stepRow(2, f(200), &nan, f(7.4999), nil),
		},
		Summary: Summary{Steps: 2, MaxSustainedRPS: f(94.99996)},
	}
	got := res.Rounded()
	if res.Rows[0].Get("resume_rps") == got.Rows[0].Get("resume_rps") || *res.Rows[0].Get("resume_rps") != 94.99996 {
		t.Fatal("Rounded changed the receiver")
	}
	want := map[int64]map[string]*float64{
		1: {"resume_rps": f(95), "resume_requests": f(2), "failures_resume_actor_cold": f(4)},
		2: {"resume_rps": nil, "resume_requests": f(7), "failures_resume_actor_cold": nil},
	}
	for _, r := range got.Rows {
		for k, w := range want[r.Step.Number] {
			g := r.Get(k)
			if (g == nil) != (w == nil) || (g != nil && *g != *w) {
				t.Errorf("step %d %s = %v, want %v", r.Step.Number, k, ptrText(g), ptrText(w))
			}
		}
	}
	if *got.Rows[0].Step.TargetRPS != 100.1235 || *got.Summary.MaxSustainedRPS != 95 {
		t.Errorf("target_rps %v, max_sustained_rps %v", *got.Rows[0].Step.TargetRPS, *got.Summary.MaxSustainedRPS)
	}
	// The rows of the raw and of the rounded result are the same text,
	// and read back they are the rounded values.
	a, b := res.StatsRows(1, "t", "n"), got.StatsRows(1, "t", "n")
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("rows differ:\n%v\n%v", a, b)
	}
	back, sum, _ := FromRows(a)
	for i := range back {
		for _, v := range got.Rows[i].Values {
			g, w := back[i].Get(v.Key), v.V
			if (g == nil) != (w == nil) || (g != nil && *g != *w) {
				t.Errorf("step %d %s read back %v, rounded %v", i+1, v.Key, ptrText(g), ptrText(w))
			}
		}
	}
	if *sum.MaxSustainedRPS != *got.Summary.MaxSustainedRPS {
		t.Errorf("summary read back %v, rounded %v", *sum.MaxSustainedRPS, *got.Summary.MaxSustainedRPS)
	}
}

func ptrText(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
