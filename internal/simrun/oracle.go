package simrun

import (
	"math"
	"sort"
)

// This file replays the parts of Prometheus 2.42's arithmetic (and the
// spec's window rules) that tests need to derive expected outputs from the
// exported series without PromQL. promtest checks them against the real
// Prometheus.

// DefaultLookback is Prometheus's default --query.lookback-delta, seconds.
const DefaultLookback = 300

// Rate is Prometheus 2.42's rate(SERIES[window]) evaluated at t (seconds):
// the samples in [t-window, t], counter resets added back, extrapolated
// towards the window edges, operation for operation as extrapolatedRate
// does them (so results agree to the bit). ok is false with fewer than two
// samples in the window.
func (e ExportedSeries) Rate(t, window int64) (float64, bool) {
	pts := e.Range(t-window, t)
	if len(pts) < 2 {
		return 0, false
	}
	first, last := pts[0], pts[len(pts)-1]
	result := last.V - first.V
	prev := first.V
	for _, p := range pts[1:] {
		if p.V < prev {
			result += prev
		}
		prev = p.V
	}
	durationToStart := float64(first.T - (t - window))
	durationToEnd := float64(t - last.T)
	sampled := float64(last.T - first.T)
	avg := sampled / float64(len(pts)-1)
	if result > 0 && first.V >= 0 {
		if toZero := sampled * (first.V / result); toZero < durationToStart {
			durationToStart = toZero
		}
	}
	threshold := avg * 1.1
	extrapolate := sampled
	if durationToStart < threshold {
		extrapolate += durationToStart
	} else {
		extrapolate += avg / 2
	}
	if durationToEnd < threshold {
		extrapolate += durationToEnd
	} else {
		extrapolate += avg / 2
	}
	factor := extrapolate / sampled
	factor /= float64(window)
	return result * factor, true
}

// Growth is the spec's per-series window growth over (A, B]: starting from
// v_A (the instant value at A with the default lookback, 0 when absent),
// the sum of increases of consecutive samples, a drop counting the new
// value (a restart). NaN samples are skipped, and a NaN at A (a staleness
// marker: the process is gone) is a baseline of 0, like an absent value.
// vB reports the instant value at B (ok false when absent).
func (e ExportedSeries) Growth(a, b int64) (growth, vB float64, okB bool) {
	prev, ok := e.At(a, DefaultLookback)
	if !ok || math.IsNaN(prev) {
		prev = 0
	}
	for _, s := range e.Range(a+1, b) {
		if math.IsNaN(s.V) {
			continue
		}
		if s.V >= prev {
			growth += s.V - prev
		} else {
			growth += s.V
		}
		prev = s.V
	}
	vB, okB = e.At(b, DefaultLookback)
	return growth, vB, okB
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound, Count float64
}

// HistogramQuantile is Prometheus 2.42's histogram_quantile over classic
// buckets: sorted by bound, +Inf required, equal bounds merged, counts made
// monotonic, linear interpolation inside the bucket (the lowest starting
// at 0), a rank in the +Inf bucket reading as the highest finite bound.
// NaN when there is no observation.
func HistogramQuantile(q float64, in []Bucket) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	}
	bs := append([]Bucket(nil), in...)
	sort.Slice(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return math.NaN()
	}
	merged := bs[:1]
	for _, b := range bs[1:] {
		if b.UpperBound == merged[len(merged)-1].UpperBound {
			merged[len(merged)-1].Count += b.Count
		} else {
			merged = append(merged, b)
		}
	}
	bs = merged
	maxSeen := math.Inf(-1)
	for i := range bs {
		if bs[i].Count > maxSeen {
			maxSeen = bs[i].Count
		} else {
			bs[i].Count = maxSeen
		}
	}
	if len(bs) < 2 {
		return math.NaN()
	}
	obs := bs[len(bs)-1].Count
	if obs == 0 || math.IsNaN(obs) {
		return math.NaN()
	}
	rank := q * obs
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].Count >= rank })
	if b == len(bs)-1 {
		return bs[len(bs)-2].UpperBound
	}
	if b == 0 && bs[0].UpperBound <= 0 {
		return bs[0].UpperBound
	}
	start, end, count := 0.0, bs[b].UpperBound, bs[b].Count
	if b > 0 {
		start = bs[b-1].UpperBound
		count -= bs[b-1].Count
		rank -= bs[b-1].Count
	}
	return start + (end-start)*(rank/count)
}
