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

// PSITimestampBands are the distribution bands across a PSI resource's
// series at every 10 s timestamp of the run window, folded slice by slice
// from every sample a read returns, so the bands of psi_series.json are
// exact per timestamp however many series there are and however the kept
// series were thinned. Memory is five floats and a flag per timestamp
// (8,641 timestamps at 24 h) whatever the series count, plus one slice's
// values while it is folded.
type PSITimestampBands struct {
	start, end int64
	// bands[b][i] is band b (psiBands) at start + i·Step, where has[i]
	// (some series has a sample there).
	bands [len(psiBands)][]float64
	has   []bool
}

// NewPSITimestampBands is an empty fold over the run window [start, end].
func NewPSITimestampBands(start, end int64) *PSITimestampBands {
	end = max(end, start)
	n := (end-start)/Step + 1
	b := &PSITimestampBands{start: start, end: end, has: make([]bool, n)}
	for i := range b.bands {
		b.bands[i] = make([]float64, n)
	}
	return b
}

// Add folds one time slice of a read: every series' samples at the 10 s
// timestamps the slice covers, as promql.RangeEach hands a chunk. Slices
// must not share timestamps (chunks do not): a timestamp folded again
// takes the later slice's values alone. A sample counts at the 10 s
// timestamp at or before it; samples outside the window or not finite are
// skipped.
func (b *PSITimestampBands) Add(slice []promql.Series) {
	if b == nil {
		return
	}
	// Two passes over the slice: the values per timestamp are laid out in
	// one buffer, each timestamp's run sorted and reduced in place.
	lo, hi := len(b.has), -1
	index := func(smp promql.Sample) (int, bool) {
		if smp.T < b.start || smp.T > b.end || !finite(smp.V) {
			return 0, false
		}
		return int((smp.T - b.start) / Step), true
	}
	for _, s := range slice {
		for _, smp := range s.Samples {
			if i, ok := index(smp); ok {
				lo, hi = min(lo, i), max(hi, i)
			}
		}
	}
	if hi < lo {
		return
	}
	offsets := make([]int, hi-lo+2)
	for _, s := range slice {
		for _, smp := range s.Samples {
			if i, ok := index(smp); ok {
				offsets[i-lo+1]++
			}
		}
	}
	for i := 1; i < len(offsets); i++ {
		offsets[i] += offsets[i-1]
	}
	values := make([]float64, offsets[len(offsets)-1])
	fill := slices.Clone(offsets[:len(offsets)-1])
	for _, s := range slice {
		for _, smp := range s.Samples {
			if i, ok := index(smp); ok {
				values[fill[i-lo]] = smp.V
				fill[i-lo]++
			}
		}
	}
	for j := range hi - lo + 1 {
		col := values[offsets[j]:offsets[j+1]]
		i := lo + j
		b.has[i] = len(col) > 0
		if len(col) == 0 {
			continue
		}
		slices.Sort(col)
		for k, band := range psiBands {
			b.bands[k][i] = band.Of(col)
		}
	}
}

// PSIBands computes the band set of a PSI resource's series over the run
// window [start, end], named by the label by, on the grid start + k·step
// (step a multiple of Step, see PSIBandStep): the series' per-timestamp
// bands (PSITimestampBands of them in one slice) and top series, see
// PSITimestampBands.BandSet.
func PSIBands(series []promql.Series, by string, start, end, step int64) PSIBandSet {
	b := NewPSITimestampBands(start, end)
	b.Add(series)
	return b.BandSet(series, by, step)
}

// BandSet is the band set of the folded bands and of series, the
// resource's kept series (all of them, possibly max-thinned), named by the
// label by, on the grid start + k·step (step a multiple of Step, see
// PSIBandStep). Each band is thinned to the maximum of its 10 s values in
// each [t, t+step) interval, so stalls stay visible. A series' peak is the
// maximum of its samples (max-thinning keeps it); the top series are the
// PSITopSeries highest peaks, ties by name, each thinned like the bands.
// Values are rounded to 4 decimals like the stall-percent summaries. A nil
// series slice (the read failed) gives Series nil and empty slices.
func (b *PSITimestampBands) BandSet(series []promql.Series, by string, step int64) PSIBandSet {
	step = max(Step, (step+Step-1)/Step*Step)
	start, end := b.start, b.end
	n := int((end-start)/step + 1)
	if series == nil {
		return PSIBandSet{Timestamps: []int64{}, Min: []*float64{}, P50: []*float64{}, P90: []*float64{},
			P99: []*float64{}, Max: []*float64{}, Top: []PSITop{}}
	}
	out := PSIBandSet{Series: ptr(len(series)), Timestamps: make([]int64, n)}
	for k := range out.Timestamps {
		out.Timestamps[k] = start + int64(k)*step
	}

	bands := [len(psiBands)][]*float64{}
	for k := range bands {
		bands[k] = make([]*float64, n)
	}
	for i, ok := range b.has {
		if !ok {
			continue
		}
		at := int64(i) * Step / step
		for k := range bands {
			keepMax(bands[k], at, b.bands[k][i])
		}
	}
	for k := range bands {
		round4All(bands[k])
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
