package runs

import (
	"errors"
	"testing"
)

func i64(v int64) *int64 { return &v }

// TestResolveWindow covers each precedence step of both rules.
func TestResolveWindow(t *testing.T) {
	// A history whose samples put the steady window at [1020, 1040] and
	// whose timestamps span [1000, 1060].
	hist := &History{
		Samples:  ramp(1000, 10, 50, 100, 100, 100, 40, 0),
		Observed: []float64{10, 50, 100, 100, 100, 40},
		First:    1000, Last: 1060, HasBounds: true,
	}
	summary := &Recorded{Start: i64(1000), End: i64(1050), SteadyStart: i64(1010), SteadyEnd: i64(1030)}
	noSteady := &Recorded{Start: i64(1000), End: i64(1050)}
	badSteady := &Recorded{Start: i64(1000), End: i64(1050), SteadyStart: i64(1030), SteadyEnd: i64(1010)}
	endOnly := &Recorded{End: i64(1050), SteadyStart: i64(1010), SteadyEnd: i64(1030)}
	trial := func() *Recorded { return &Recorded{Start: i64(1005), End: i64(1045)} }
	noRow := func() *Recorded { return nil }
	type want struct {
		start, end         int64
		endKnown           bool
		startFrom, endFrom WindowSource
		steadyS, steadyE   int64
		steadyFrom         WindowSource
		fromSamples        bool
		why                string
	}
	tests := []struct {
		name string
		in   WindowInputs
		want want
		err  error
	}{
		// RuleStoredRun: start = run_ts; end from the summary, the trial row,
		// the history, else unknown.
		{"stored: summary gives end and steady window", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, Summary: summary, Trial: trial, History: hist},
			want{1000, 1050, true, FromRunTS, FromSummary, 1010, 1030, FromSummary, true, ""}, nil},
		{"stored: a summary without start_ts is enough (start is run_ts)", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, Summary: endOnly, History: hist},
			want{1000, 1050, true, FromRunTS, FromSummary, 1010, 1030, FromSummary, true, ""}, nil},
		{"stored: summary steady = run window", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, Summary: &Recorded{End: i64(1050), SteadyStart: i64(1000), SteadyEnd: i64(1050)}},
			want{1000, 1050, true, FromRunTS, FromSummary, 1000, 1050, FromSummary, false, SummarySteadyWhy}, nil},
		{"stored: summary without steady window falls to the trial row", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, Summary: noSteady, Trial: trial, History: hist},
			want{1000, 1045, true, FromRunTS, FromTrial, 1020, 1040, FromHistory, true, ""}, nil},
		{"stored: summary steady ending before it starts falls to the trial row", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, Summary: badSteady, Trial: trial, History: hist},
			want{1000, 1045, true, FromRunTS, FromTrial, 1020, 1040, FromHistory, true, ""}, nil},
		{"stored: no trial row, last history timestamp", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, Trial: noRow, History: hist},
			want{1000, 1060, true, FromRunTS, FromHistory, 1020, 1040, FromHistory, true, ""}, nil},
		{"stored: an end before run_ts is clamped", WindowInputs{Rule: RuleStoredRun, RunTS: 1100, Trial: trial},
			want{1100, 1100, true, FromRunTS, FromTrial, 1100, 1100, FromHistory, false, SteadyNoSamples}, nil},
		{"stored: nothing tells the end", WindowInputs{Rule: RuleStoredRun, RunTS: 1000, History: &History{}},
			want{1000, 1000, false, FromRunTS, FromNowhere, 1000, 1000, FromNowhere, false, SteadyNoSamples}, nil},

		// RuleExport: flags, then the summary, the trial row, the history,
		// and run_ts for the start with --end given.
		{"export: both flags win", WindowInputs{Rule: RuleExport, Start: 1010, End: 1050, RunTS: 900, Summary: summary, History: hist},
			want{1010, 1050, true, FromFlags, FromFlags, 1020, 1040, FromHistory, true, ""}, nil},
		{"export: summary (its steady window is not used)", WindowInputs{Rule: RuleExport, RunTS: 900, Summary: summary, Trial: trial, History: hist},
			want{1000, 1050, true, FromSummary, FromSummary, 1020, 1040, FromHistory, true, ""}, nil},
		{"export: one flag with the summary", WindowInputs{Rule: RuleExport, End: 1055, Summary: summary},
			want{1000, 1055, true, FromSummary, FromFlags, 1000, 1055, FromHistory, false, SteadyNoSamples}, nil},
		{"export: a summary without steady window still gives the window", WindowInputs{Rule: RuleExport, Summary: noSteady, Trial: trial},
			want{1000, 1050, true, FromSummary, FromSummary, 1000, 1050, FromHistory, false, SteadyNoSamples}, nil},
		{"export: a summary without start_ts falls to the trial row", WindowInputs{Rule: RuleExport, Summary: endOnly, Trial: trial, History: hist},
			want{1005, 1045, true, FromTrial, FromTrial, 1020, 1040, FromHistory, true, ""}, nil},
		{"export: first and last history timestamps", WindowInputs{Rule: RuleExport, Trial: noRow, History: hist},
			want{1000, 1060, true, FromHistory, FromHistory, 1020, 1040, FromHistory, true, ""}, nil},
		{"export: --start with the history", WindowInputs{Rule: RuleExport, Start: 1010, History: hist},
			want{1010, 1060, true, FromFlags, FromHistory, 1020, 1040, FromHistory, true, ""}, nil},
		{"export: --end with run_ts", WindowInputs{Rule: RuleExport, End: 1050, RunTS: 1000},
			want{1000, 1050, true, FromRunTS, FromFlags, 1000, 1050, FromHistory, false, SteadyNoSamples}, nil},
		{"export: run_ts alone is not a window", WindowInputs{Rule: RuleExport, RunTS: 1000}, want{}, ErrWindowUnknown},
		{"export: --start alone is not a window", WindowInputs{Rule: RuleExport, Start: 1000}, want{}, ErrWindowUnknown},
		{"export: an end before the start", WindowInputs{Rule: RuleExport, Start: 1050, End: 1000}, want{}, ErrEndBeforeStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ResolveWindow(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{w.Start, w.End, w.EndKnown, w.StartFrom, w.EndFrom, w.Steady.Start, w.Steady.End, w.SteadyFrom, w.Steady.FromSamples, w.Steady.Why}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestResolveWindowReadsTrialOnlyWhenNeeded: stats.jsonl is read only when
// server_summary.json does not give the window.
func TestResolveWindowReadsTrialOnlyWhenNeeded(t *testing.T) {
	for _, rule := range []WindowRule{RuleStoredRun, RuleExport} {
		calls := 0
		trial := func() *Recorded { calls++; return nil }
		sum := &Recorded{Start: i64(1000), End: i64(1050), SteadyStart: i64(1000), SteadyEnd: i64(1050)}
		if _, err := ResolveWindow(WindowInputs{Rule: rule, RunTS: 1000, Summary: sum, Trial: trial}); err != nil {
			t.Fatal(err)
		}
		if calls != 0 {
			t.Errorf("rule %d: trial read %d times with a usable summary", rule, calls)
		}
		_, _ = ResolveWindow(WindowInputs{Rule: rule, RunTS: 1000, Trial: trial})
		if calls != 1 {
			t.Errorf("rule %d: trial read %d times without a summary, want 1", rule, calls)
		}
	}
}

// TestResolveWindowRecordedAndPeak: the export's name fallbacks come from
// the record that gave the window (the trial row over a partial summary),
// and the peak is the highest observed count, else the highest sample.
func TestResolveWindowRecordedAndPeak(t *testing.T) {
	name := func(s string) *string { return &s }
	partial := &Recorded{TestName: name("from-summary"), Start: i64(1000)}
	row := func() *Recorded { return &Recorded{TestName: name("from-trial"), Start: i64(1000), End: i64(1050)} }
	w, err := ResolveWindow(WindowInputs{Rule: RuleExport, Summary: partial, Trial: row})
	if err != nil || w.Recorded.TestName == nil || *w.Recorded.TestName != "from-trial" {
		t.Errorf("recorded %+v, err %v: want the trial row's", w.Recorded, err)
	}
	w, _ = ResolveWindow(WindowInputs{Rule: RuleExport, Start: 1, End: 2, Summary: partial, Trial: func() *Recorded { return nil }})
	if w.Recorded.TestName == nil || *w.Recorded.TestName != "from-summary" {
		t.Errorf("recorded %+v: want the partial summary's", w.Recorded)
	}

	w, _ = ResolveWindow(WindowInputs{Rule: RuleExport, Start: 1, End: 2, History: &History{Samples: ramp(0, 5, 7), Observed: []float64{6}}})
	if w.PeakUsers == nil || *w.PeakUsers != 6 {
		t.Errorf("peak %v, want the observed 6", w.PeakUsers)
	}
	w, _ = ResolveWindow(WindowInputs{Rule: RuleExport, Start: 1, End: 2, History: &History{Samples: ramp(0, 5, 7)}})
	if w.PeakUsers == nil || *w.PeakUsers != 7 {
		t.Errorf("peak %v, want the sample peak 7", w.PeakUsers)
	}
	w, _ = ResolveWindow(WindowInputs{Rule: RuleExport, Start: 1, End: 2})
	if w.PeakUsers != nil {
		t.Errorf("peak %v without a history, want nil", *w.PeakUsers)
	}
}
