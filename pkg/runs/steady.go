package runs

import "math"

// SteadyThreshold is the share of the peak user count a sample needs to be in
// the steady window.
const SteadyThreshold = 0.9

// Steady is the steady-state window decision with its reason.
type Steady struct {
	Start, End int64
	// FromSamples is false when the window fell back to the run window.
	FromSamples bool
	// Peak is the highest finite user count among the samples (nil: none).
	Peak *float64
	// Why says, when FromSamples is false, why the run window was used (for
	// the caller's notice); "" otherwise.
	Why string
}

// Reasons in Steady.Why.
const (
	SteadyNoSamples    = "no user-count samples"
	SteadyPeakNotAbove = "peak user count is not above 0"
	SteadyOutsideRun   = "the samples at 90% of peak begin outside the run window"
)

// ComputeSteady applies the rule of runs.md to samples in file (or series)
// order: with no samples or a peak <= 0 the window is [start, end];
// otherwise the first and last samples with users >= 0.9*peak give
// [ss, se], kept as [ss, min(max(se, ss), end)] when start <= ss <= end
// (dips in between do not split it; it may be a single instant), and
// [start, end] otherwise. NaN/±Inf counts are ignored (ReadHistory never
// returns them). FromSamples is false on every fallback, and Why says
// why.
func ComputeSteady(samples []UserSample, start, end int64) Steady {
	fallback := Steady{Start: start, End: end}
	var peak float64
	seen := false
	for _, s := range samples {
		if math.IsNaN(s.Users) || math.IsInf(s.Users, 0) {
			continue
		}
		if !seen || s.Users > peak {
			peak, seen = s.Users, true
		}
	}
	if !seen {
		fallback.Why = SteadyNoSamples
		return fallback
	}
	fallback.Peak = &peak
	if peak <= 0 {
		fallback.Why = SteadyPeakNotAbove
		return fallback
	}
	threshold := SteadyThreshold * peak
	var first, last int64
	found := false
	for _, s := range samples {
		if s.Users >= threshold && !math.IsInf(s.Users, 0) { // false for NaN
			if !found {
				first, found = s.Timestamp, true
			}
			last = s.Timestamp
		}
	}
	// found is always true here: the peak sample itself passes.
	if !found || first < start || first > end {
		fallback.Why = SteadyOutsideRun
		return fallback
	}
	return Steady{Start: first, End: min(max(last, first), end), FromSamples: true, Peak: &peak}
}
