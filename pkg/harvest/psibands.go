package harvest

import (
	"cmp"
	"math"
	"slices"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// PSIBandsMaxPoints is the most timestamps a PSIBandSet holds (export.md:
// at most 2,000 points per series in psi_series.json).
const PSIBandsMaxPoints = 2000

// PSITopSeries is how many series, highest peak first, a PSIBandSet names.
const PSITopSeries = 10

// PSIBandSet is one PSI resource of psi_series.json: the distribution of its
// per-node or per-pod series per timestamp and the series with the highest
// peaks, so a stored run keeps its PSI panels after Prometheus's retention.
// Every value slice is aligned with Timestamps; a nil entry is a timestamp
// where no series (for a Top entry: that series) has a sample.
type PSIBandSet struct {
	// Series is the number of series read; nil when the read failed (then
	// every slice is empty).
	Series     *int
	Timestamps []int64
	// Min, P50, P90, P99 and Max are across the series at each 10 s
	// timestamp (PromQL's min, quantile and max), then thinned.
	Min, P50, P90, P99, Max []*float64
	Top                     []PSITop
}

// PSITop is one named series of a PSIBandSet.
type PSITop struct {
	Name   string // the instance (node scope) or pod (pod scope) label
	Peak   float64
	Values []*float64
}

// PSIBandStep is the step_s of psi_series.json for a run over [start, end]
// whose kept series are seriesSteps seconds apart (PSIResource.SeriesStep):
// 10 s when the run has at most PSIBandsMaxPoints points, else the 10 s
// multiple 10·ceil(points/2000); never finer than the coarsest series, so
// every interval of a measured stretch holds a point.
func PSIBandStep(start, end int64, seriesSteps ...int64) int64 {
	points := (max(end, start)-start)/Step + 1
	step := Step * ((points + PSIBandsMaxPoints - 1) / PSIBandsMaxPoints)
	for _, s := range seriesSteps {
		step = max(step, (s+Step-1)/Step*Step)
	}
	return step
}

// PSIBands computes the band set of a PSI resource's kept series over the
// run window [start, end], named by the label by, on the grid start +
// k·step (step a multiple of Step, see PSIBandStep). Bands are computed at
// every 10 s timestamp across the series that have a sample there (min,
// PromQL's quantile for p50/p90/p99, max), then each band and each top
// series is thinned to the maximum of each [t, t+step) interval, so stalls
// stay visible. A series' peak is the maximum of its samples; the top
// series are the PSITopSeries highest peaks, ties by name. Values are
// rounded to 4 decimals like the stall-percent summaries. A nil series
// slice (the read failed) gives Series nil and empty slices.
func PSIBands(series []promql.Series, by string, start, end, step int64) PSIBandSet {
	step = max(Step, (step+Step-1)/Step*Step)
	end = max(end, start)
	n := int((end-start)/step + 1)
	if series == nil {
		return PSIBandSet{Timestamps: []int64{}, Min: []*float64{}, P50: []*float64{}, P90: []*float64{},
			P99: []*float64{}, Max: []*float64{}, Top: []PSITop{}}
	}
	out := PSIBandSet{Series: ptr(len(series)), Timestamps: make([]int64, n)}
	for k := range out.Timestamps {
		out.Timestamps[k] = start + int64(k)*step
	}

	// The values of every series at each 10 s timestamp.
	columns := make([][]float64, (end-start)/Step+1)
	for _, s := range series {
		for _, smp := range s.Samples {
			if smp.T < start || smp.T > end || !finite(smp.V) {
				continue
			}
			i := (smp.T - start) / Step
			columns[i] = append(columns[i], smp.V)
		}
	}
	bands := [5][]*float64{}
	for b := range bands {
		bands[b] = make([]*float64, n)
	}
	for i, col := range columns {
		if len(col) == 0 {
			continue
		}
		slices.Sort(col)
		k := int64(i) * Step / step
		for b, v := range [5]float64{col[0], PromQuantile(0.5, col), PromQuantile(0.9, col), PromQuantile(0.99, col), col[len(col)-1]} {
			keepMax(bands[b], k, v)
		}
	}
	for b := range bands {
		round4All(bands[b])
	}
	out.Min, out.P50, out.P90, out.P99, out.Max = bands[0], bands[1], bands[2], bands[3], bands[4]

	// Peaks first: only the named series get value slices (5,000 pods
	// would otherwise hold 10 M points).
	type peaked struct {
		i    int
		name string
		peak float64
	}
	var ranked []peaked
	for i, s := range series {
		peak := math.Inf(-1)
		for _, smp := range s.Samples {
			if smp.T >= start && smp.T <= end && finite(smp.V) {
				peak = max(peak, smp.V)
			}
		}
		if !math.IsInf(peak, -1) { // no sample in the window: nothing to name
			ranked = append(ranked, peaked{i, s.Labels[by], percentile.Round4(peak)})
		}
	}
	slices.SortStableFunc(ranked, func(a, b peaked) int {
		if c := cmp.Compare(b.peak, a.peak); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	out.Top = make([]PSITop, 0, min(len(ranked), PSITopSeries))
	for _, r := range ranked[:min(len(ranked), PSITopSeries)] {
		values := make([]*float64, n)
		for _, smp := range series[r.i].Samples {
			if smp.T >= start && smp.T <= end && finite(smp.V) {
				keepMax(values, (smp.T-start)/step, smp.V)
			}
		}
		round4All(values)
		out.Top = append(out.Top, PSITop{Name: r.name, Peak: r.peak, Values: values})
	}
	return out
}

// PromQuantile is PromQL's quantile(q, ...) over ascending finite values:
// linear interpolation between the values at ranks floor(q·(n−1)) and the
// next, with Prometheus's arithmetic (v_lo·(1−w) + v_hi·w).
func PromQuantile(q float64, sorted []float64) float64 {
	if len(sorted) == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	if q < 0 {
		return math.Inf(-1)
	}
	if q > 1 {
		return math.Inf(1)
	}
	n := float64(len(sorted))
	rank := q * (n - 1)
	lower := math.Max(0, math.Floor(rank))
	upper := math.Min(n-1, lower+1)
	weight := rank - math.Floor(rank)
	return sorted[int(lower)]*(1-weight) + sorted[int(upper)]*weight
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// keepMax raises dst[k] to v (a nil entry takes v).
func keepMax(dst []*float64, k int64, v float64) {
	if p := dst[k]; p != nil {
		*p = max(*p, v)
		return
	}
	dst[k] = ptr(v)
}

func round4All(vs []*float64) {
	for _, p := range vs {
		if p != nil {
			*p = percentile.Round4(*p)
		}
	}
}
