// Package percentile holds the spec's percentile summary P and Python-style
// rounding, shared by the server harvest and the trial_summary frontiers.
package percentile

import (
	"math"
	"slices"
	"strconv"
)

// Summary is P = {min, p50, p90, p95, p99, max, avg}. A nil field is
// unmeasured (JSON null), never zero.
type Summary struct {
	Min, P50, P90, P95, P99, Max, Avg *float64
}

// keys is the JSON key order of a Summary.
var keys = [...]string{"min", "p50", "p90", "p95", "p99", "max", "avg"}

// Keys is the JSON key order of a Summary (a fresh slice each call).
func Keys() []string { return slices.Clone(keys[:]) }

// Values returns the fields in Keys order.
func (s Summary) Values() [7]*float64 {
	return [7]*float64{s.Min, s.P50, s.P90, s.P95, s.P99, s.Max, s.Avg}
}

// Get returns the field named by one of Keys (nil for an unknown key).
func (s Summary) Get(key string) *float64 {
	for i, k := range keys {
		if k == key {
			return s.Values()[i]
		}
	}
	return nil
}

// Of computes P over values: NaN/±Inf dropped, nearest rank biased up
// (v[min(floor(n*Q), n-1)]), every number rounded to 4 decimals.
// values is not modified.
func Of(values []float64) Summary {
	return OfRounded(values, 4)
}

// OfInPlace is Of over a buffer the caller gives up: it is filtered and
// sorted in place instead of copied (the pooled samples of a large run are
// hundreds of MB). The sum runs in the input order, as in Of.
func OfInPlace(values []float64) Summary {
	v, sum := appendFinite(values[:0], values) // writes never pass the reads
	slices.Sort(v)
	return summarize(v, sum, 4)
}

// OfRounded is Of with the final rounding at the given number of decimals
// (trial_summary's actors-per-pod percentiles round to 2).
func OfRounded(values []float64, decimals int) Summary {
	v, sum := appendFinite(make([]float64, 0, len(values)), values)
	slices.Sort(v)
	return summarize(v, sum, decimals)
}

// appendFinite appends the finite values to dst and sums them in order.
func appendFinite(dst, values []float64) ([]float64, float64) {
	sum := 0.0
	for _, x := range values {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		dst = append(dst, x)
		sum += x
	}
	return dst, sum
}

// summarize reads P off sorted finite values whose sum is given.
func summarize(v []float64, sum float64, decimals int) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	n := len(v)
	at := func(q float64) *float64 {
		i := int(math.Floor(float64(n) * q))
		if i > n-1 {
			i = n - 1
		}
		return ptr(Round(v[i], decimals))
	}
	return Summary{
		Min: ptr(Round(v[0], decimals)),
		P50: at(0.50),
		P90: at(0.90),
		P95: at(0.95),
		P99: at(0.99),
		Max: ptr(Round(v[n-1], decimals)),
		Avg: ptr(Round(sum/float64(n), decimals)),
	}
}

// Round rounds like Python's round(x, decimals): correctly rounded from the
// exact binary value, exact ties to even. strconv's fixed formatting has
// exactly these semantics (0.03125 -> "0.0312"). NaN and ±Inf pass through.
func Round(x float64, decimals int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', decimals, 64), 64)
	if err != nil {
		return x
	}
	if r == 0 {
		return 0 // Python keeps -0.0, but a negative zero never helps a reader
	}
	return r
}

// Round4 is Round(x, 4).
func Round4(x float64) float64 { return Round(x, 4) }

func ptr(x float64) *float64 { return &x }
