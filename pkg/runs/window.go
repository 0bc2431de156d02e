package runs

import (
	"errors"
	"fmt"
	"slices"
)

// WindowRule is whose reading of a run's files decides its window: the
// store catalog's (runs.md, "Run catalogs") or the export's (export.md,
// "Inputs"). They differ on purpose, in the ways each constant says.
type WindowRule int

const (
	// RuleStoredRun describes a run listed from the results store: start_ts
	// is run_ts; the steady window is the one server_summary.json
	// recorded (the stored blocks were harvested over it); an end before
	// run_ts is clamped to it, and a run whose end cannot be told is still
	// described (EndKnown false), since a listing shows every run.
	RuleStoredRun WindowRule = iota
	// RuleExport decides the window the export harvests: --start/--end
	// first, the start from the run's files before the store layout's
	// run_ts; the steady window is always computed from stats_history.csv;
	// an unknown end, or an end before the start, is an error.
	RuleExport
)

// WindowSource is where one part of a window came from.
type WindowSource int

// Window sources, in the order the rules consult them.
const (
	FromNowhere WindowSource = iota
	FromFlags                // --start / --end
	FromRunTS                // run_ts of the store layout
	FromSummary              // server_summary.json metadata
	FromTrial                // the last trial_summary row of stats.jsonl
	FromHistory              // the first / last stats_history.csv timestamp
)

// WindowInputs is what is known of a run before its window is decided:
// the flags, the store layout, and what its files hold.
type WindowInputs struct {
	Rule WindowRule
	// Start, End are the export's --start/--end (0: not given).
	Start, End int64
	// RunTS is run_ts of the store layout (0: none).
	RunTS int64
	// Summary is server_summary.json's metadata (nil: absent or unreadable).
	Summary *Recorded
	// Trial reads the window of the last trial_summary row of stats.jsonl
	// (nil: no such row). It is called only when Summary does not give the
	// window, so stats.jsonl is read only then; nil is no stats.jsonl.
	Trial func() *Recorded
	// History is stats_history.csv (nil: absent or unreadable, treated as
	// having no samples).
	History *History
}

// Window is a run's decided window and where each part came from.
type Window struct {
	Start, End int64
	// EndKnown is false when nothing told the end (RuleStoredRun only):
	// End then equals Start.
	EndKnown           bool
	StartFrom, EndFrom WindowSource
	// Steady is the steady window; Steady.Why says why it is the run window
	// when Steady.FromSamples is false. SteadyFrom is FromSummary when it is
	// server_summary.json's, FromHistory when computed from the samples.
	Steady     Steady
	SteadyFrom WindowSource
	// PeakUsers is the highest observed user count (trial_summary's
	// peak_users rule), else the highest sample (nil: none).
	PeakUsers *float64
	// Recorded is what the run's own earlier artifacts said (their test name
	// and tag are fallbacks for the export): the trial_summary row's when it
	// gave the window, else server_summary.json's metadata (zero: none).
	Recorded Recorded
}

// Errors of RuleExport.
var (
	ErrWindowUnknown = errors.New("cannot tell the run window: pass --start and --end (no server_summary.json, trial_summary row or stats_history.csv timestamps)")
	// ErrEndBeforeStart is wrapped by the error of a window [start, end]
	// with end < start.
	ErrEndBeforeStart = errors.New("ends before it starts")
)

// SummarySteadyWhy is the steady-window reason of a stored run whose
// server_summary.json recorded the run window as its steady window.
const SummarySteadyWhy = FileServerSummary + "'s steady window is the run window"

// ResolveWindow decides a run's window, the one function behind the store
// catalog's descriptions and the export's inputs. Precedence:
//
// RuleStoredRun: start = run_ts; end = server_summary.json's end_ts
// (usable when it has end_ts and a steady window that does not end before
// it starts), else the trial_summary row's run_end, else the last
// stats_history.csv timestamp, each clamped to at least the start, else
// unknown (end = start). Steady window: server_summary.json's, else
// computed from the samples over the window, else (end unknown) the
// instant [start, start].
//
// RuleExport: start and end = the flags when both are given; else each
// side is its flag, else server_summary.json's start_ts/end_ts (usable
// when it has both), else the trial_summary row's run_start/run_end, else
// the first/last stats_history.csv timestamps; else, with --end given, the
// start is run_ts. Steady window: computed from the samples over the
// window.
func ResolveWindow(in WindowInputs) (Window, error) {
	var w Window
	if in.Summary != nil {
		w.Recorded = *in.Summary
	}
	rec, recFrom := in.recordedWindow()
	if recFrom == FromTrial {
		w.Recorded = *rec
	}
	var samples []UserSample
	if in.History != nil {
		samples = in.History.Samples
		w.PeakUsers = peakOf(in.History)
	}
	if in.Rule == RuleStoredRun {
		in.storedWindow(&w, rec, recFrom, samples)
		return w, nil
	}

	h := in.History
	start, end := in.Start, in.End
	startFrom, endFrom := flagOr(start, FromNowhere), flagOr(end, FromNowhere)
	switch {
	case start != 0 && end != 0:
	case rec != nil:
		start, end = pick(start, *rec.Start), pick(end, *rec.End)
		startFrom, endFrom = flagOr(in.Start, recFrom), flagOr(in.End, recFrom)
	case h != nil && h.HasBounds:
		start, end = pick(start, h.First), pick(end, h.Last)
		startFrom, endFrom = flagOr(in.Start, FromHistory), flagOr(in.End, FromHistory)
	case in.RunTS != 0 && end != 0:
		start, startFrom = in.RunTS, FromRunTS
	}
	if start == 0 || end == 0 {
		return w, ErrWindowUnknown
	}
	if end < start {
		return w, fmt.Errorf("run window [%d, %d] %w", start, end, ErrEndBeforeStart)
	}
	w.Start, w.End, w.EndKnown = start, end, true
	w.StartFrom, w.EndFrom = startFrom, endFrom
	w.Steady, w.SteadyFrom = ComputeSteady(samples, start, end), FromHistory
	return w, nil
}

// recordedWindow is the window the run's own artifacts recorded:
// server_summary.json's metadata when the rule can use it, else the
// trial_summary row (read only then); nil when neither gives one.
func (in WindowInputs) recordedWindow() (*Recorded, WindowSource) {
	if s := in.Summary; s != nil && in.summaryUsable() {
		return s, FromSummary
	}
	if in.Trial == nil {
		return nil, FromNowhere
	}
	if t := in.Trial(); t != nil && t.Start != nil && t.End != nil {
		return t, FromTrial
	}
	return nil, FromNowhere
}

// summaryUsable says whether server_summary.json's metadata gives what the
// rule takes from it: the end and the steady window for a stored run (its
// start is run_ts), the start and the end for the export.
func (in WindowInputs) summaryUsable() bool {
	s := in.Summary
	if in.Rule == RuleStoredRun {
		return s.End != nil && s.SteadyStart != nil && s.SteadyEnd != nil && *s.SteadyEnd >= *s.SteadyStart
	}
	return s.Start != nil && s.End != nil
}

// storedWindow applies RuleStoredRun.
func (in WindowInputs) storedWindow(w *Window, rec *Recorded, recFrom WindowSource, samples []UserSample) {
	w.Start, w.StartFrom = in.RunTS, FromRunTS
	switch h := in.History; {
	case rec != nil:
		w.End, w.EndKnown, w.EndFrom = max(*rec.End, w.Start), true, recFrom
	case h != nil && h.HasBounds:
		w.End, w.EndKnown, w.EndFrom = max(h.Last, w.Start), true, FromHistory
	default:
		w.End = w.Start
		w.Steady = Steady{Start: w.Start, End: w.Start, Why: SteadyNoSamples}
		return
	}
	if recFrom == FromSummary {
		ss, se := *rec.SteadyStart, *rec.SteadyEnd
		w.Steady, w.SteadyFrom = Steady{Start: ss, End: se, FromSamples: !(ss == w.Start && se == w.End)}, FromSummary
		if !w.Steady.FromSamples {
			w.Steady.Why = SummarySteadyWhy
		}
		return
	}
	w.Steady, w.SteadyFrom = ComputeSteady(samples, w.Start, w.End), FromHistory
}

// flagOr is FromFlags when the flag v is given, else from.
func flagOr(v int64, from WindowSource) WindowSource {
	if v != 0 {
		return FromFlags
	}
	return from
}

// pick is the flag when given, else the fallback.
func pick(flag, fallback int64) int64 {
	if flag != 0 {
		return flag
	}
	return fallback
}

// peakOf is the highest observed user count (trial_summary's peak_users
// rule), else the highest steady-window sample.
func peakOf(h *History) *float64 {
	if len(h.Observed) > 0 {
		p := slices.Max(h.Observed)
		return &p
	}
	if st := ComputeSteady(h.Samples, 0, 0); st.Peak != nil {
		return st.Peak
	}
	return nil
}
