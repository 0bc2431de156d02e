package promql

import (
	"math"
	"sort"
)

// HistogramQuantile applies Prometheus's histogram_quantile algorithm to one
// histogram (buckets in any order). It returns NaN when there is no
// observation or no +Inf bucket, like Prometheus.
//
// It is a port of bucketQuantile from Prometheus v2.42 promql/quantile.go:
// q < 0 gives -Inf, q > 1 gives +Inf, NaN q gives NaN; buckets are sorted by
// upper bound, equal bounds coalesced (counts added), counts forced
// monotonic; fewer than two buckets or a total of 0 give NaN; a rank in the
// +Inf bucket reads as the highest finite bound; the lowest bucket starts at
// 0 unless its bound is <= 0 (then the bound itself is returned); otherwise
// linear interpolation inside the bucket. buckets is not modified.
func HistogramQuantile(q float64, buckets []Bucket) float64 {
	if math.IsNaN(q) {
		return math.NaN()
	}
	if q < 0 {
		return math.Inf(-1)
	}
	if q > 1 {
		return math.Inf(+1)
	}
	if len(buckets) == 0 {
		return math.NaN()
	}
	b := make([]Bucket, len(buckets))
	copy(b, buckets)
	sort.Slice(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound })
	if !math.IsInf(b[len(b)-1].UpperBound, +1) {
		return math.NaN()
	}
	b = coalesceBuckets(b)
	ensureMonotonic(b)
	if len(b) < 2 {
		return math.NaN()
	}
	observations := b[len(b)-1].Count
	if observations == 0 {
		return math.NaN()
	}
	rank := q * observations
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })

	if i == len(b)-1 {
		return b[len(b)-2].UpperBound
	}
	if i == 0 && b[0].UpperBound <= 0 {
		return b[0].UpperBound
	}
	var (
		bucketStart float64
		bucketEnd   = b[i].UpperBound
		count       = b[i].Count
	)
	if i > 0 {
		bucketStart = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return bucketStart + (bucketEnd-bucketStart)*(rank/count)
}

// coalesceBuckets merges buckets with the same upper bound (sorted input).
func coalesceBuckets(b []Bucket) []Bucket {
	last := b[0]
	i := 0
	for _, x := range b[1:] {
		if x.UpperBound == last.UpperBound {
			last.Count += x.Count
		} else {
			b[i] = last
			last = x
			i++
		}
	}
	b[i] = last
	return b[:i+1]
}

// ensureMonotonic raises any count lower than a preceding one (cumulative
// counts from different scrapes or precision loss can dip).
func ensureMonotonic(b []Bucket) {
	maxCount := math.Inf(-1)
	for i := range b {
		switch {
		case b[i].Count > maxCount:
			maxCount = b[i].Count
		case b[i].Count < maxCount:
			b[i].Count = maxCount
		}
	}
}
