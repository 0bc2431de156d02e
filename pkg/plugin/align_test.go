package plugin

import (
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// shiftTimeSeries moves the times of time-series frames only, null times
// stay null, and the values are untouched.
func TestShiftTimeSeries(t *testing.T) {
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	ptr := func(s int64) *time.Time { v := at(s); return &v }
	tests := []struct {
		name  string
		frame func() *data.Frame
		shift int64
		want  []any
	}{
		{"wide series", func() *data.Frame {
			f := data.NewFrame("s", data.NewField("time", nil, []time.Time{at(100), at(110)}), data.NewField("v", nil, []float64{1, 2}))
			f.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide}
			return f
		}, -40, []any{at(60), at(70)}},
		{"later", func() *data.Frame {
			f := data.NewFrame("s", data.NewField("time", nil, []time.Time{at(100)}), data.NewField("v", nil, []float64{1}))
			f.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide}
			return f
		}, 3 * day, []any{at(100 + 3*day)}},
		{"nullable times keep null", func() *data.Frame {
			f := data.NewFrame("s", data.NewField("time", nil, []*time.Time{ptr(100), nil}), data.NewField("v", nil, []float64{1, 2}))
			f.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide}
			return f
		}, 5, []any{ptr(105), (*time.Time)(nil)}},
		{"table unchanged", func() *data.Frame {
			return data.NewFrame("t", data.NewField("start", nil, []time.Time{at(100)}), data.NewField("v", nil, []float64{1}))
		}, -40, []any{at(100)}},
		{"no shift", func() *data.Frame {
			f := data.NewFrame("s", data.NewField("time", nil, []time.Time{at(100)}))
			f.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide}
			return f
		}, 0, []any{at(100)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.frame()
			shiftTimeSeries([]*data.Frame{f}, tc.shift)
			for i, w := range tc.want {
				got := f.Fields[0].At(i)
				switch w := w.(type) {
				case time.Time:
					if !got.(time.Time).Equal(w) {
						t.Errorf("row %d: %v, want %v", i, got, w)
					}
				case *time.Time:
					g := got.(*time.Time)
					if (g == nil) != (w == nil) || (g != nil && !g.Equal(*w)) {
						t.Errorf("row %d: %v, want %v", i, g, w)
					}
				}
			}
			if len(f.Fields) > 1 && f.Fields[1].At(0) != 1.0 {
				t.Errorf("value changed: %v", f.Fields[1].At(0))
			}
		})
	}
}

// align on a per-run query: elapsed and absolute are accepted, anything
// else is a downstream 400 naming the option, next to a good query.
func TestAlignOption(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	from, to := e.truth.Start-600, e.truth.End+600
	resp := e.query(t, c,
		q("absolute", from, to, map[string]any{"queryType": "packing", "run": e.runID, "align": "absolute"}),
		q("bad", from, to, map[string]any{"queryType": "packing", "run": e.runID, "align": "relative"}),
		q("badws", from, to, map[string]any{"queryType": "workingSet", "run": e.runID, "align": "Elapsed"}),
	)
	if r := resp["absolute"]; r.Error != nil || len(r.Frames) != 2 || r.Frames[0].Name != "packing" {
		t.Fatalf("align absolute: %v", r.Error)
	}
	for _, ref := range []string{"bad", "badws"} {
		r := resp[ref]
		if r.Error == nil || r.Status != backend.StatusBadRequest || r.ErrorSource != backend.ErrorSourceDownstream ||
			!strings.Contains(r.Error.Error(), "align") || !strings.Contains(r.Error.Error(), "elapsed") {
			t.Errorf("%s: %v status %d source %q", ref, r.Error, r.Status, r.ErrorSource)
		}
	}
}

// Two stored runs of one test three days apart, queried together with
// align elapsed: one frame per run named by its label, every point moved
// by exactly from − the run's steady start, so both steady starts land on
// from and the runs overlay on one axis. The summary frames keep their
// numbers.
func TestAlignElapsedOverlaysRuns(t *testing.T) {
	e := newEnv(t, "steady")
	exported := exportedRun(t, e)
	idA, _ := storeShifted(t, e, exported, 2)
	idB, _ := storeShifted(t, e, exported, 5)
	e.jsonData["discoverRuns"] = false
	tr := e.truth
	e.now = time.Unix(tr.End+10*day, 0)
	c := e.client(t)
	from := tr.Start + 7*day
	to := from + (tr.End - tr.Start) + 600

	abs := e.query(t, c, q("abs", from, to, map[string]any{"queryType": "packing", "run": []string{idA, idB}}))["abs"]
	el := e.query(t, c, q("el", from, to, map[string]any{"queryType": "packing", "run": []string{idA, idB}, "align": "elapsed"}))["el"]
	for _, r := range []backend.DataResponse{abs, el} {
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		if len(r.Frames) != 4 {
			t.Fatalf("%d frames, want a series and a summary per run", len(r.Frames))
		}
	}
	steady := map[int]int64{0: tr.SteadyStart + 2*day, 2: tr.SteadyStart + 5*day}
	for i, tag := range map[int]string{0: "n2", 2: "n5"} {
		a, x := abs.Frames[i], el.Frames[i]
		if want := "packing " + tr.TestName + " " + tag; x.Name != want {
			t.Errorf("frame %d is %q, want %q", i, x.Name, want)
		}
		if a.Rows() == 0 || a.Rows() != x.Rows() {
			t.Fatalf("run %s: %d absolute rows, %d elapsed", tag, a.Rows(), x.Rows())
		}
		shift := from - steady[i]
		first := -1
		for j := range a.Rows() {
			at, xt := a.Fields[0].At(j).(time.Time), x.Fields[0].At(j).(time.Time)
			if got := xt.Unix() - at.Unix(); got != shift {
				t.Fatalf("run %s row %d: shifted by %d s, want %d", tag, j, got, shift)
			}
			if first < 0 && !at.Before(time.Unix(steady[i], 0)) {
				first = j
			}
			if av, xv := a.Fields[3].At(j).(*float64), x.Fields[3].At(j).(*float64); (av == nil) != (xv == nil) || (av != nil && *av != *xv) {
				t.Fatalf("run %s row %d: value changed", tag, j)
			}
		}
		// The first point of the steady window lies within one 10 s sample
		// after from, as it lies within one sample after the steady start.
		if first < 0 {
			t.Fatalf("run %s: no point in the steady window", tag)
		}
		if got := x.Fields[0].At(first).(time.Time).Unix(); got < from || got >= from+10 {
			t.Errorf("run %s: first steady point at %d, want within 10 s of from %d", tag, got, from)
		}
		if !strings.Contains(noticeTexts(backend.DataResponse{Frames: data.Frames{x}}), "aligned on elapsed time") {
			t.Errorf("run %s: no alignment notice", tag)
		}
		if av, xv := abs.Frames[i+1].Fields[0].At(0).(*float64), el.Frames[i+1].Fields[0].At(0).(*float64); (av == nil) != (xv == nil) || (av != nil && *av != *xv) {
			t.Errorf("run %s: the summary changed", tag)
		}
		t.Logf("run %s: %d points shifted by %d s (steady start %d → from %d)", tag, x.Rows(), shift, steady[i], from)
	}
}
