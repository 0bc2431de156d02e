package percentile

import "testing"

// TestCoverageRawValuesNotPreRounded pins server-telemetry.md "Percentiles
// are taken over the raw values (not pre-rounded)": the average of
// [0.00006, 0.00006, 0] is 0.00004, which rounds to 0.0; averaging the
// pre-rounded values [0.0001, 0.0001, 0] would give 0.0001. The p50
// (v[1] = 0.00006) rounds to 0.0001 and p90 reads v[2] (n*0.9 = 2.7).
func TestCoverageRawValuesNotPreRounded(t *testing.T) {
	s := Of([]float64{0.00006, 0, 0.00006})
	want := map[string]float64{"min": 0, "p50": 0.0001, "p90": 0.0001, "p95": 0.0001, "p99": 0.0001, "max": 0.0001, "avg": 0}
	for _, k := range Keys {
		got := s.Get(k)
		if got == nil || *got != want[k] {
			t.Errorf("%s = %v, want %v", k, deref(got), want[k])
		}
	}
}

// TestCoverageKeyOrder pins P's key order {"min","p50","p90","p95","p99","max","avg"}.
func TestCoverageKeyOrder(t *testing.T) {
	want := [...]string{"min", "p50", "p90", "p95", "p99", "max", "avg"}
	if Keys != want {
		t.Errorf("Keys = %v, want %v", Keys, want)
	}
}
