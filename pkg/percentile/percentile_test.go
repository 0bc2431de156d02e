package percentile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func f(x float64) *float64 { return &x }

func eq(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func TestOfSpecExamples(t *testing.T) {
	seq := make([]float64, 200)
	for i := range seq {
		seq[i] = float64(i + 1)
	}
	tests := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"only NaN and Inf", []float64{math.NaN(), math.Inf(1), math.Inf(-1)}, Summary{}},
		{"two values p50 biased up", []float64{2, 1}, Summary{f(1), f(2), f(2), f(2), f(2), f(2), f(1.5)}},
		{"1..200", seq, Summary{f(1), f(101), f(181), f(191), f(199), f(200), f(100.5)}},
		{"single", []float64{0.12345}, Summary{f(0.1235), f(0.1235), f(0.1235), f(0.1235), f(0.1235), f(0.1235), f(0.1235)}},
		{"NaN dropped before ranking", []float64{3, math.NaN(), 1, 2}, Summary{f(1), f(2), f(3), f(3), f(3), f(3), f(2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Of(tc.in)
			gv, wv := got.Values(), tc.want.Values()
			for i := range gv {
				if !eq(gv[i], wv[i]) {
					t.Errorf("%s: got %v want %v", keys[i], deref(gv[i]), deref(wv[i]))
				}
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestRoundLikePython(t *testing.T) {
	tests := []struct {
		x    float64
		d    int
		want float64
	}{
		{0.03125, 4, 0.0312}, // exact tie -> even
		{0.03135, 4, 0.0314}, // binary value is above the tie
		{2.675, 2, 2.67},     // binary value is below the tie
		{0.5, 0, 0},
		{1.5, 0, 2},
		{-0.00001, 4, 0},
		{123.456789, 4, 123.4568},
		{1e-05, 4, 0},
	}
	for _, tc := range tests {
		if got := Round(tc.x, tc.d); got != tc.want {
			t.Errorf("Round(%v,%d) = %v, want %v", tc.x, tc.d, got, tc.want)
		}
	}
	if !math.IsNaN(Round(math.NaN(), 4)) {
		t.Error("NaN must pass through")
	}
}

// TestOfInPlaceEqualsOf: the in-place variant gives Of's summary (the same
// sum order, the same ranks) for random inputs with NaN and ±Inf mixed in.
func TestOfInPlaceEqualsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for n := range 300 {
		values := make([]float64, n)
		for i := range values {
			switch rng.IntN(20) {
			case 0:
				values[i] = math.NaN()
			case 1:
				values[i] = math.Inf(1 - 2*rng.IntN(2))
			default:
				values[i] = rng.NormFloat64() * 100
			}
		}
		want := Of(values)
		got := OfInPlace(slices.Clone(values))
		for k, w := range want.Values() {
			g := got.Values()[k]
			if (w == nil) != (g == nil) || (w != nil && *w != *g) {
				t.Fatalf("n=%d %s: OfInPlace %v, Of %v", n, keys[k], g, w)
			}
		}
	}
}

// TestRawValuesNotPreRounded pins server-telemetry.md "Percentiles
// are taken over the raw values (not pre-rounded)": the average of
// [0.00006, 0.00006, 0] is 0.00004, which rounds to 0.0; averaging the
// pre-rounded values [0.0001, 0.0001, 0] would give 0.0001. The p50
// (v[1] = 0.00006) rounds to 0.0001 and p90 reads v[2] (n*0.9 = 2.7).
func TestRawValuesNotPreRounded(t *testing.T) {
	s := Of([]float64{0.00006, 0, 0.00006})
	want := map[string]float64{"min": 0, "p50": 0.0001, "p90": 0.0001, "p95": 0.0001, "p99": 0.0001, "max": 0.0001, "avg": 0}
	for _, k := range keys {
		got := s.Get(k)
		if got == nil || *got != want[k] {
			t.Errorf("%s = %v, want %v", k, deref(got), want[k])
		}
	}
}

// TestKeyOrder pins P's key order {"min","p50","p90","p95","p99","max","avg"}.
func TestKeyOrder(t *testing.T) {
	want := []string{"min", "p50", "p90", "p95", "p99", "max", "avg"}
	got := Keys()
	if !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	got[0] = "changed" // a caller's copy: the table stays as it is
	if !slices.Equal(Keys(), want) {
		t.Errorf("Keys after a caller changed its copy = %v", Keys())
	}
}
