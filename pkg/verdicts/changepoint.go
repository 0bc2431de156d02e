package verdicts

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Options of change-point detection.
type Options struct {
	// Window is the number of points analysed at once in a long series.
	Window int
	// PValue: a split is kept when the t-test's p is below it.
	PValue float64
	// MinRuns is the least number of points on each side of a split; 1
	// lets the newest run alone be judged.
	MinRuns int
	// MinChangePct is the least |mean_after / mean_before − 1| in percent
	// (0: no magnitude filter).
	MinChangePct float64
}

// DefaultOptions are the spec's defaults: window 30, p < 0.001, 3 runs on
// each side, a 5 % change.
func DefaultOptions() Options {
	return Options{Window: 30, PValue: 0.001, MinRuns: 3, MinChangePct: 5}
}

func (o Options) normalised() Options {
	if o.MinRuns < 1 {
		o.MinRuns = 1
	}
	if o.Window < 2*o.MinRuns {
		o.Window = 2 * o.MinRuns
	}
	return o
}

// Split is one change point of a series.
type Split struct {
	// Index is the first point after the change.
	Index      int
	MeanBefore float64
	MeanAfter  float64
	PValue     float64
}

// Detect finds the change points of xs with E-divisive means (Matteson
// and James 2014, α = 1) whose candidate splits are accepted by a pooled
// two-sample Student's t-test (ddof = 1) instead of a permutation test, as
// Hunter does (Fleming et al., ICPE 2023).
//
// Windows of Window points advance by max(1, Window − 2·margin) points
// (10 at the defaults), or to the last point found in the window
// when that lies further on (Hunter's restart rule). The margin (see
// detectWindow) keeps a split away from an arbitrary window edge; with
// that advance every position from MinRuns to len−MinRuns lies outside the
// margins of some window, so a step is found wherever it falls, as it
// would be in a single window holding it.
// Within a window the segment split maximising the divergence Q̂ is tried
// first (ties: the smallest index). A split is kept when both sides have
// MinRuns points, p < PValue and the means differ by MinChangePct, both
// between the window's neighbouring segments (the bisection E-divisive
// sees) and between the neighbouring accepted points over the whole
// series (the segments the reported means and p come from): a split that
// only the window's cut-off segments support is not kept, and does not
// steer the rest of the search. After each acceptance the weakest point is
// re-tested against its neighbouring segments and dropped if it no longer
// passes. A point can need a neighbour that a later window finds (two
// changes close together dilute each other's segments), so the window
// passes repeat until the set of points is stable. There is no
// randomness: the same series gives the same points.
//
// MinRuns 1 judges the newest run alone: a one-point segment has no pairs,
// so its within-segment term of Q̂ is 0, and the t-test pools the variance
// of the other segment (two one-point segments: no test, no split). A
// first non-zero value after an all-zero history (a first OOM kill,
// eviction or failure) is then a change with p = 0 (both variances 0,
// different means): intended, a new failure mode is a regression.
func Detect(xs []float64, o Options) []Split {
	o = o.normalised()
	n := len(xs)
	if n < 2*o.MinRuns {
		return nil
	}
	var points []int // sorted
	for pass := 0; pass < n; pass++ {
		before := slices.Clone(points)
		points = prune(xs, windowPass(xs, points, o), o)
		if slices.Equal(before, points) {
			break
		}
	}
	out := make([]Split, 0, len(points))
	for _, p := range points {
		a, b := neighbours(points, p, n)
		mb, ma, pv := tTest(xs[a:p], xs[p:b])
		out = append(out, Split{Index: p, MeanBefore: mb, MeanAfter: ma, PValue: pv})
	}
	return out
}

// windowPass runs the windowed search once over xs, starting from points.
func windowPass(xs []float64, points []int, o Options) []int {
	n := len(xs)
	for start := 0; ; {
		end := min(start+o.Window, n)
		points = detectWindow(xs, start, end, points, o)
		if end == n {
			return points
		}
		next := start + o.advance()
		for _, p := range points {
			if p > next && p < end {
				next = p // the last point found in this window
			}
		}
		start = next
	}
}

// bounds returns start, the points strictly inside (start, end), and end.
func bounds(points []int, start, end int) []int {
	bs := []int{start}
	for _, p := range points {
		if p > start && p < end {
			bs = append(bs, p)
		}
	}
	return append(bs, end)
}

// neighbours returns the accepted points (or the series' ends 0 and n)
// on either side of p.
func neighbours(points []int, p, n int) (a, b int) {
	a, b = 0, n
	for _, q := range points {
		if q < p {
			a = q
		}
		if q > p {
			b = q
			break
		}
	}
	return a, b
}

type candidate struct {
	a, tau, b int
	q         float64
}

// margin is how close to an arbitrary window edge a split may lie: a split
// τ is usable in the window [s, s+Window) when s+margin ≤ τ ≤ s+Window−margin.
func (o Options) margin() int { return max(o.MinRuns, o.Window/3) }

// advance is how far a window moves on: a window's usable splits are the
// Window − 2·margin + 1 positions [s+margin, s+Window−margin], so moving by
// one less than that makes consecutive windows' usable splits overlap by
// one and leave no position between them (10 at the defaults, within the
// spec's "at most max(1, W − 2m + 1)").
func (o Options) advance() int { return max(1, o.Window-2*o.margin()) }

func detectWindow(xs []float64, start, end int, points []int, o Options) []int {
	// A window edge that is neither the series' end nor a change point is
	// arbitrary: a split that close to it is left to the overlapping window
	// that sees it with context (Q̂ over a short edge segment is maximised
	// by chance more often).
	margin := o.margin()
	startArbitrary := start > 0 && !slices.Contains(points, start)
	endArbitrary := end < len(xs)
	for iter := 0; iter < 4*(end-start)+4; iter++ {
		bs := bounds(points, start, end)
		var cands []candidate
		for i := 0; i+1 < len(bs); i++ {
			a, b := bs[i], bs[i+1]
			if tau, q, ok := bestSplit(xs[a:b], o.MinRuns); ok {
				cands = append(cands, candidate{a, a + tau, b, q})
			}
		}
		sort.SliceStable(cands, func(i, j int) bool {
			if cands[i].q != cands[j].q {
				return cands[i].q > cands[j].q
			}
			return cands[i].tau < cands[j].tau
		})
		accepted := false
		for _, c := range cands {
			if startArbitrary && c.a == start && c.tau-c.a < margin || endArbitrary && c.b == end && c.b-c.tau < margin {
				continue
			}
			a, b := neighbours(points, c.tau, len(xs)) // over the whole series
			if passes(xs[c.a:c.tau], xs[c.tau:c.b], o) && passes(xs[a:c.tau], xs[c.tau:b], o) {
				points = insertSorted(points, c.tau)
				accepted = true
				break
			}
		}
		if !accepted {
			return points
		}
		points = dropWeakest(xs, points, o)
	}
	return points
}

// dropWeakest re-tests every point against its neighbouring segments and
// drops the one with the largest p if it no longer passes.
func dropWeakest(xs []float64, points []int, o Options) []int {
	worst, worstP := -1, -1.0
	for _, p := range points {
		a, b := neighbours(points, p, len(xs))
		left, right := xs[a:p], xs[p:b]
		if !passes(left, right, o) {
			_, _, pv := tTest(left, right)
			if len(left) < o.MinRuns || len(right) < o.MinRuns {
				pv = math.Inf(1)
			}
			if pv > worstP {
				worst, worstP = p, pv
			}
		}
	}
	if worst < 0 {
		return points
	}
	return removeValue(points, worst)
}

// prune drops failing points, weakest first, until every point passes
// against its neighbouring segments.
func prune(xs []float64, points []int, o Options) []int {
	for {
		before := len(points)
		points = dropWeakest(xs, points, o)
		if len(points) == before {
			return points
		}
	}
}

func insertSorted(ps []int, v int) []int {
	i := sort.SearchInts(ps, v)
	if i < len(ps) && ps[i] == v {
		return ps
	}
	ps = append(ps, 0)
	copy(ps[i+1:], ps[i:])
	ps[i] = v
	return ps
}

func removeValue(ps []int, v int) []int {
	out := ps[:0:0]
	for _, p := range ps {
		if p != v {
			out = append(out, p)
		}
	}
	return out
}

// passes is the acceptance rule of a split between left and right.
func passes(left, right []float64, o Options) bool {
	if len(left) < o.MinRuns || len(right) < o.MinRuns {
		return false
	}
	mb, ma, p := tTest(left, right)
	if !(p < o.PValue) {
		return false
	}
	return magnitudeOK(mb, ma, o.MinChangePct)
}

// magnitudeOK: |mean_after / mean_before − 1| ≥ minPct / 100; a zero
// mean before passes when the mean after is not zero.
func magnitudeOK(before, after, minPct float64) bool {
	if minPct <= 0 {
		return true
	}
	if before == 0 {
		return after != 0
	}
	return math.Abs(after/before-1) >= minPct/100
}

// bestSplit maximises the E-divisive divergence Q̂(τ) (α = 1) over τ in
// [minRuns, len−minRuns]; ties go to the smallest τ. It runs in O(m²)
// with running sums of the within and between distances.
func bestSplit(x []float64, minRuns int) (int, float64, bool) {
	m := len(x)
	if m < 2*minRuns {
		return 0, 0, false
	}
	// col[t] = Σ_{i<t} |x_i − x_t|, row[t] = Σ_{j>t} |x_t − x_j|.
	col := make([]float64, m)
	row := make([]float64, m)
	total := 0.0
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			d := math.Abs(x[i] - x[j])
			row[i] += d
			col[j] += d
			total += d
		}
	}
	wl, between, wr := 0.0, 0.0, total
	bestT, bestQ := -1, math.Inf(-1)
	for t := 0; t < m-minRuns; t++ {
		// Move point t from the right part to the left.
		wl += col[t]
		between += row[t] - col[t]
		wr -= row[t]
		l := t + 1
		if l < minRuns {
			continue
		}
		r := m - l
		fl, fr := float64(l), float64(r)
		q := fl * fr / float64(m) * (2*between/(fl*fr) - within(wl, l) - within(wr, r))
		if q > bestQ {
			bestT, bestQ = l, q
		}
	}
	return bestT, bestQ, bestT >= 0
}

// within is the mean distance of the pairs of a k-point segment whose
// distances sum to sum; a one-point segment has no pairs and counts 0.
func within(sum float64, k int) float64 {
	if k < 2 {
		return 0
	}
	return sum / (float64(k) * float64(k-1) / 2)
}

// tTest is the pooled two-sample Student's t-test (ddof = 1, two-sided):
// the two means and p. A one-point segment adds nothing to the pooled
// variance, so the other segment's variance (ddof 1) is the estimate; two
// one-point segments (or an empty one) are not tested: p = 1. Both
// variances 0: p = 0 when the means differ, else 1.
func tTest(a, b []float64) (meanA, meanB, p float64) {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	na, nb := float64(len(a)), float64(len(b))
	if len(a) == 0 || len(b) == 0 || len(a)+len(b) < 3 {
		return ma, mb, 1
	}
	df := na + nb - 2
	sp2 := ((na-1)*va + (nb-1)*vb) / df
	if sp2 == 0 {
		if ma != mb {
			return ma, mb, 0
		}
		return ma, mb, 1
	}
	t := (mb - ma) / math.Sqrt(sp2*(1/na+1/nb))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return ma, mb, min(p, 1)
}

func meanVar(x []float64) (mean, variance float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		d := v - mean
		variance += d * d
	}
	return mean, variance / float64(len(x)-1)
}
