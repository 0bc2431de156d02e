package runs

import (
	"math"
	"testing"
)

func ramp(ts int64, users ...float64) []UserSample {
	out := make([]UserSample, len(users))
	for i, u := range users {
		out[i] = UserSample{Timestamp: ts + int64(i)*10, Users: u}
	}
	return out
}

func TestSteadyWindow(t *testing.T) {
	tests := []struct {
		name        string
		samples     []UserSample
		start, end  int64
		wantS       int64
		wantE       int64
		wantSamples bool
		wantWhy     string
		wantPeak    float64 // NaN: nil
	}{
		{"no samples", nil, 100, 200, 100, 200, false, SteadyNoSamples, math.NaN()},
		{"peak zero", ramp(100, 0, 0, 0), 100, 200, 100, 200, false, SteadyPeakNotAbove, 0},
		{"peak negative", ramp(100, -5, -1), 100, 200, 100, 200, false, SteadyPeakNotAbove, -1},
		// 100 110 120 130 140 150 160 170
		{"plain ramp, plateau, ramp down", ramp(100, 10, 50, 100, 100, 100, 95, 40, 0), 100, 170, 120, 150, true, "", 100},
		{"dips do not split the window", ramp(100, 100, 20, 100, 0), 100, 200, 100, 120, true, "", 100},
		// step ladder 10/20/30: only the top step passes 27.
		{"step ladder keeps the top step", ramp(100, 10, 10, 20, 20, 30, 30, 30, 0), 100, 200, 140, 160, true, "", 30},
		{"exactly 90% of peak is in", ramp(100, 90, 100, 90, 89.99), 100, 200, 100, 120, true, "", 100},
		{"just below 90% is out", ramp(100, 89.99, 100, 89.99), 100, 200, 110, 110, true, "", 100},
		{"single instant", ramp(150, 1), 100, 200, 150, 150, true, "", 1},
		{"start before run start falls back", ramp(90, 100, 100), 100, 200, 100, 200, false, SteadyOutsideRun, 100},
		{"start after run end falls back", ramp(210, 100, 100), 100, 200, 100, 200, false, SteadyOutsideRun, 100},
		{"start on run start is in", ramp(100, 100), 100, 200, 100, 100, true, "", 100},
		{"start on run end is in", ramp(200, 100, 100), 100, 200, 200, 200, true, "", 100},
		{"end clipped to run end", ramp(180, 100, 100, 100, 100), 100, 200, 180, 200, true, "", 100},
		{"last before first (out of order) gives one instant",
			[]UserSample{{150, 100}, {120, 100}}, 100, 200, 150, 150, true, "", 100},
		{"NaN and Inf never become the peak",
			[]UserSample{{110, math.Inf(1)}, {120, math.NaN()}, {130, 10}, {140, 10}, {150, math.Inf(1)}}, 100, 200, 130, 140, true, "", 10},
		{"only NaN is no samples", []UserSample{{110, math.NaN()}}, 100, 200, 100, 200, false, SteadyNoSamples, math.NaN()},
		{"fractional counts", ramp(100, 0.5, 1, 0.95), 100, 200, 110, 120, true, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := ComputeSteady(tc.samples, tc.start, tc.end)
			if s, e, ok := st.Start, st.End, st.FromSamples; s != tc.wantS || e != tc.wantE || ok != tc.wantSamples {
				t.Errorf("ComputeSteady = [%d, %d] %v, want [%d, %d] %v", s, e, ok, tc.wantS, tc.wantE, tc.wantSamples)
			}
			if st.Why != tc.wantWhy {
				t.Errorf("Why = %q want %q", st.Why, tc.wantWhy)
			}
			switch {
			case math.IsNaN(tc.wantPeak) && st.Peak != nil:
				t.Errorf("Peak = %v want nil", *st.Peak)
			case !math.IsNaN(tc.wantPeak) && (st.Peak == nil || *st.Peak != tc.wantPeak):
				t.Errorf("Peak = %v want %v", st.Peak, tc.wantPeak)
			}
			if st.Start > st.End || st.Start < tc.start || st.End > tc.end {
				t.Errorf("window [%d, %d] not inside run [%d, %d]", st.Start, st.End, tc.start, tc.end)
			}
		})
	}
}
