package harvest_test

// The oracle: expected server_summary blocks computed from the raw samples
// that reached Prometheus (simrun's exported series), WITHOUT PromQL and
// without the engine's code. It replays Prometheus 2.42's evaluation
// semantics in plain Go:
//
//   - instant vector selector at t: the latest sample in [t-5m, t] (2.42's
//     lookback is closed on both ends; 3.x made it left-open);
//   - rate(x[1m]) at t: samples in [t-60s, t] (closed in 2.42), then
//     promql/functions.go extrapolatedRate, operation for operation;
//   - sum/max/count by: input in storage order (label-sorted), first value
//     then `+=`, like 2.42's aggregation (no Kahan summation before 2.50);
//   - `and on (L)`: left elements whose L-signature appears on the right;
//   - range queries: the instant evaluation at start, start+10, ... <= end.
//
// The block rules (live ateapi, per-series window growth, histogram
// quantile, grid walks) are re-implemented here from the spec text, on
// purpose independently of pkg/harvest, so a shared misreading shows up as
// a disagreement with the semantic truth asserted elsewhere.

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

const (
	oLookback = 300
	oStep     = 10
)

type oSample struct {
	T int64
	V float64
}

type oSeries struct {
	Labels  map[string]string
	Samples []oSample // ascending T
}

// oStore holds every exported series in Prometheus storage order.
type oStore struct{ series []oSeries }

func newStore(series []oSeries) *oStore {
	s := make([]oSeries, len(series))
	copy(s, series)
	for i := range s {
		sort.SliceStable(s[i].Samples, func(a, b int) bool { return s[i].Samples[a].T < s[i].Samples[b].T })
	}
	sort.SliceStable(s, func(a, b int) bool { return compareLabels(s[a].Labels, s[b].Labels) < 0 })
	return &oStore{series: s}
}

// compareLabels is labels.Compare: pairwise over name-sorted labels.
func compareLabels(a, b map[string]string) int {
	ka, kb := sortedNames(a), sortedNames(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if ka[i] != kb[i] {
			return strings.Compare(ka[i], kb[i])
		}
		if c := strings.Compare(a[ka[i]], b[kb[i]]); c != 0 {
			return c
		}
	}
	return len(ka) - len(kb)
}

func sortedNames(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func lkey(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedNames(m) {
		b.WriteString(k + "=" + strconv.Quote(m[k]) + ",")
	}
	return b.String()
}

// oMatcher is one label matcher; regexes are fully anchored as in PromQL.
type oMatcher struct {
	name, op, value string
}

func eq(n, v string) oMatcher { return oMatcher{n, "=", v} }
func re(n, v string) oMatcher { return oMatcher{n, "=~", v} }

func (m oMatcher) match(labels map[string]string) bool {
	v := labels[m.name]
	switch m.op {
	case "=":
		return v == m.value
	case "=~":
		return regexp.MustCompile("^(?:" + m.value + ")$").MatchString(v)
	}
	panic("matcher op " + m.op)
}

func (st *oStore) sel(ms ...oMatcher) []oSeries {
	var out []oSeries
outer:
	for _, s := range st.series {
		for _, m := range ms {
			if !m.match(s.Labels) {
				continue outer
			}
		}
		out = append(out, s)
	}
	return out
}

// oElem is an instant-vector element.
type oElem struct {
	Labels map[string]string
	V      float64
}

// valueAt is the instant selector value at t (lookback [t-300, t]).
func valueAt(s oSeries, t int64) (float64, bool) {
	i := sort.Search(len(s.Samples), func(i int) bool { return s.Samples[i].T > t }) - 1
	if i < 0 || s.Samples[i].T < t-oLookback {
		return 0, false
	}
	return s.Samples[i].V, true
}

// rateAt is 2.42's extrapolatedRate(isCounter, isRate) over [t-rng, t].
func rateAt(s oSeries, t, rng int64) (float64, bool) {
	var pts []oSample
	for _, smp := range s.Samples {
		if smp.T >= t-rng && smp.T <= t {
			pts = append(pts, smp)
		}
	}
	if len(pts) < 2 {
		return 0, false
	}
	rangeStart, rangeEnd := (t-rng)*1000, t*1000
	resultValue := pts[len(pts)-1].V - pts[0].V
	prevValue := pts[0].V
	for _, cur := range pts[1:] {
		if cur.V < prevValue {
			resultValue += prevValue
		}
		prevValue = cur.V
	}
	durationToStart := float64(pts[0].T*1000-rangeStart) / 1000
	durationToEnd := float64(rangeEnd-pts[len(pts)-1].T*1000) / 1000
	sampledInterval := float64(pts[len(pts)-1].T*1000-pts[0].T*1000) / 1000
	averageDurationBetweenSamples := sampledInterval / float64(len(pts)-1)
	if resultValue > 0 && pts[0].V >= 0 {
		durationToZero := sampledInterval * (pts[0].V / resultValue)
		if durationToZero < durationToStart {
			durationToStart = durationToZero
		}
	}
	extrapolationThreshold := averageDurationBetweenSamples * 1.1
	extrapolateToInterval := sampledInterval
	if durationToStart < extrapolationThreshold {
		extrapolateToInterval += durationToStart
	} else {
		extrapolateToInterval += averageDurationBetweenSamples / 2
	}
	if durationToEnd < extrapolationThreshold {
		extrapolateToInterval += durationToEnd
	} else {
		extrapolateToInterval += averageDurationBetweenSamples / 2
	}
	factor := extrapolateToInterval / sampledInterval
	factor /= float64(rng)
	return resultValue * factor, true
}

func gaugeVec(series []oSeries, t int64) []oElem {
	var out []oElem
	for _, s := range series {
		if v, ok := valueAt(s, t); ok {
			out = append(out, oElem{s.Labels, v})
		}
	}
	return out
}

func dropName(l map[string]string) map[string]string {
	m := make(map[string]string, len(l))
	for k, v := range l {
		if k != "__name__" {
			m[k] = v
		}
	}
	return m
}

func rateVec(series []oSeries, t, rng int64) []oElem {
	var out []oElem
	for _, s := range series {
		if v, ok := rateAt(s, t, rng); ok {
			out = append(out, oElem{dropName(s.Labels), v})
		}
	}
	return out
}

// groupLabels keeps the non-empty `by` labels.
func groupLabels(l map[string]string, by []string) map[string]string {
	m := map[string]string{}
	for _, k := range by {
		if v := l[k]; v != "" {
			m[k] = v
		}
	}
	return m
}

// aggregate is 2.42's aggregation for sum, max and count.
func aggregate(op string, vec []oElem, by ...string) []oElem {
	idx := map[string]int{}
	var out []oElem
	for _, e := range vec {
		g := groupLabels(e.Labels, by)
		k := lkey(g)
		i, ok := idx[k]
		if !ok {
			v := e.V
			if op == "count" {
				v = 1
			}
			idx[k] = len(out)
			out = append(out, oElem{g, v})
			continue
		}
		switch op {
		case "sum":
			out[i].V += e.V
		case "max":
			if out[i].V < e.V || math.IsNaN(out[i].V) {
				out[i].V = e.V
			}
		case "count":
			out[i].V++
		}
	}
	return out
}

func scaleVec(vec []oElem, k float64) []oElem {
	out := make([]oElem, len(vec))
	for i, e := range vec {
		out[i] = oElem{e.Labels, e.V * k}
	}
	return out
}

func gtZero(vec []oElem) []oElem {
	var out []oElem
	for _, e := range vec {
		if e.V > 0 {
			out = append(out, e)
		}
	}
	return out
}

func andOn(l, r []oElem, on ...string) []oElem {
	sig := func(m map[string]string) string {
		var b strings.Builder
		for _, k := range on {
			b.WriteString(k + "=" + strconv.Quote(m[k]) + ",")
		}
		return b.String()
	}
	right := map[string]bool{}
	for _, e := range r {
		right[sig(e.Labels)] = true
	}
	var out []oElem
	for _, e := range l {
		if right[sig(e.Labels)] {
			out = append(out, e)
		}
	}
	return out
}

// rangeEval evaluates f on the grid start, start+10, ... <= end (end <= start
// → start+1) and joins the elements into series.
func rangeEval(start, end int64, f func(t int64) []oElem) []oSeries {
	if end <= start {
		end = start + 1
	}
	idx := map[string]int{}
	var out []oSeries
	for t := start; t <= end; t += oStep {
		for _, e := range f(t) {
			if math.IsNaN(e.V) || math.IsInf(e.V, 0) {
				continue
			}
			k := lkey(e.Labels)
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, oSeries{Labels: e.Labels})
			}
			out[i].Samples = append(out[i].Samples, oSample{t, e.V})
		}
	}
	return out
}

// ---- expected blocks ----

type oRun struct {
	start, end, steadyStart, steadyEnd, lag int64
	sel                                     harvest.Selectors
}

func (r oRun) shift() int64                  { return r.lag / 2 }
func (r oRun) steady(t int64) bool           { return t >= r.steadyStart && t <= r.steadyEnd }
func f64(x float64) *float64                 { return &x }
func i64(x int64) *int64                     { return &x }
func intp(x int) *int                        { return &x }
func pctl(vals []float64) percentile.Summary { return percentile.Of(vals) }

// expectAll computes every block.
func expectAll(st *oStore, r oRun) *harvest.Result {
	res := &harvest.Result{}
	res.Packing = expectPacking(st, r)
	res.NodePSI, res.PodPSI = expectPSI(st, r, true), expectPSI(st, r, false)
	res.Snapshots = expectSnapshots(st, r)
	res.ActiveActors = expectActors(st, r)
	res.WorkingSet = expectWorkingSet(st, r)
	res.OOM = expectOOM(st, r)
	return res
}

func expectPacking(st *oStore, r oRun) harvest.Packing {
	in := st.sel(eq("__name__", "ate_workerpool_workers"), eq("ate_workerpool_name", r.sel.WorkerPool))
	got := rangeEval(r.start, r.end, func(t int64) []oElem { return gaugeVec(in, t) })
	out := harvest.Packing{Timeseries: []harvest.PackingPoint{}}
	type procData struct {
		at   map[int64]map[string]float64
		last int64
	}
	procs := map[string]*procData{}
	allT := map[int64]bool{}
	for _, s := range got {
		p := s.Labels["exported_instance"]
		if p == "" {
			p = s.Labels["instance"]
		}
		state := s.Labels["ate_worker_state"]
		if state == "" {
			state = "unknown"
		}
		pd := procs[p]
		if pd == nil {
			pd = &procData{at: map[int64]map[string]float64{}, last: math.MinInt64}
			procs[p] = pd
		}
		for _, smp := range s.Samples {
			if pd.at[smp.T] == nil {
				pd.at[smp.T] = map[string]float64{}
			}
			if old, ok := pd.at[smp.T][state]; !ok || smp.V > old {
				pd.at[smp.T][state] = smp.V
			}
			pd.last = max(pd.last, smp.T)
			allT[smp.T] = true
		}
	}
	var ts []int64
	for t := range allT {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
	var ratios []float64
	for _, t := range ts {
		best := ""
		var bestLast int64 = math.MinInt64
		for name, pd := range procs {
			if _, ok := pd.at[t]; !ok {
				continue
			}
			if pd.last > bestLast || (pd.last == bestLast && name > best) {
				best, bestLast = name, pd.last
			}
		}
		states := procs[best].at[t]
		busy := states["partial"] + states["at_capacity"]
		names := make([]string, 0, len(states))
		for k := range states {
			names = append(names, k)
		}
		sort.Strings(names)
		total := 0.0
		for _, k := range names {
			total += states[k]
		}
		pt := harvest.PackingPoint{Timestamp: t, Busy: busy, Total: total}
		if total != 0 {
			pt.Ratio = f64(percentile.Round4(busy / total))
			if r.steady(t) {
				ratios = append(ratios, *pt.Ratio)
			}
		}
		out.Timeseries = append(out.Timeseries, pt)
	}
	out.Summary = pctl(ratios)
	return out
}

var podIDRegex = `.*[/-]pod[^/]+(\.slice)?`

func expectPSI(st *oStore, r oRun, node bool) harvest.PSI {
	var out harvest.PSI
	seen := map[string]bool{}
	for i, res := range []string{"cpu", "memory", "io"} {
		name := "container_pressure_" + res + "_waiting_seconds_total"
		pod := st.sel(eq("__name__", name), re("pod", r.sel.WorkerPodRegex), eq("container", ""), re("id", podIDRegex))
		nodeSel := st.sel(eq("__name__", name), eq("container", "node"))
		var series []oSeries
		by := "pod"
		if node {
			by = "instance"
			series = rangeEval(r.start, r.end, func(t int64) []oElem {
				l := scaleVec(aggregate("sum", rateVec(nodeSel, t, 60), "instance"), 100)
				rr := scaleVec(aggregate("sum", rateVec(pod, t, 60), "instance"), 100)
				return andOn(l, rr, "instance")
			})
		} else {
			series = rangeEval(r.start, r.end, func(t int64) []oElem {
				return scaleVec(aggregate("sum", rateVec(pod, t, 60), "pod"), 100)
			})
		}
		var pooled []float64
		for _, s := range series {
			if v := s.Labels[by]; v != "" {
				seen[v] = true
			}
			for _, smp := range s.Samples {
				if r.steady(smp.T) {
					pooled = append(pooled, smp.V)
				}
			}
		}
		sum := pctl(pooled)
		switch i {
		case 0:
			out.CPU.Summary = sum
		case 1:
			out.Mem.Summary = sum
		case 2:
			out.IO.Summary = sum
		}
	}
	out.Count = intp(len(seen))
	return out
}

// oGrowth is the spec's per-series window growth over (a, b].
type oGrowth struct {
	Labels    map[string]string
	Growth    float64
	End       *float64
	Restarted bool
}

func windowGrowth(series []oSeries, a, b int64) []oGrowth {
	var out []oGrowth
	for _, s := range series {
		vB, hasB := valueAt(s, b)
		if hasB && math.IsNaN(vB) {
			hasB = false // an instant NaN is no value
		}
		// v_A: the latest finite sample in [a-300, a] (NaN samples are
		// skipped, so a NaN at A falls back to the sample before it).
		vA, okA := 0.0, false
		var inWin []oSample
		for _, smp := range s.Samples {
			if math.IsNaN(smp.V) {
				continue
			}
			if smp.T >= a-oLookback && smp.T <= a {
				vA, okA = smp.V, true
			}
			if smp.T > a && smp.T <= b {
				inWin = append(inWin, smp)
			}
		}
		if b <= a {
			if _, present := valueAt(s, b); present {
				g := oGrowth{Labels: s.Labels}
				if hasB {
					g.End = f64(vB)
				}
				out = append(out, g)
			}
			continue
		}
		if !okA && len(inWin) == 0 && !hasB {
			continue // not in the family's result at all
		}
		g := oGrowth{Labels: s.Labels}
		prev := vA // 0 for a series born inside the window
		for _, smp := range inWin {
			if smp.V >= prev {
				g.Growth += smp.V - prev
			} else {
				g.Growth += smp.V
				g.Restarted = true
			}
			prev = smp.V
		}
		if hasB {
			g.End = f64(vB)
		}
		out = append(out, g)
	}
	return out
}

// oQuantile is 2.42's bucketQuantile (the simulator's port, independent of
// the engine's promql.HistogramQuantile).
func oQuantile(q float64, les []float64, counts []float64) float64 {
	bs := make([]simrun.Bucket, len(les))
	for i := range les {
		bs[i] = simrun.Bucket{UpperBound: les[i], Count: counts[i]}
	}
	return simrun.HistogramQuantile(q, bs)
}

type oFamily struct {
	present           bool
	sum, count, end   *float64
	les, bucketGrowth []float64
	hasBuckets        bool
}

func famFrom(gs []oGrowth, name string) oFamily {
	f := oFamily{present: len(gs) > 0}
	byLE := map[float64]float64{}
	var s, c, e float64
	var ns, nc int
	for _, g := range gs {
		switch g.Labels["__name__"] {
		case name + "_sum":
			s += g.Growth
			ns++
		case name + "_count":
			c += g.Growth
			nc++
			if g.End != nil {
				e += *g.End
			}
		case name + "_bucket":
			le, err := strconv.ParseFloat(g.Labels["le"], 64)
			if err == nil {
				byLE[le] += g.Growth
				f.hasBuckets = true
			}
		}
	}
	if ns > 0 {
		f.sum = f64(s)
	}
	if nc > 0 {
		f.count, f.end = f64(c), f64(e)
	}
	for le, v := range byLE {
		f.les = append(f.les, le)
		f.bucketGrowth = append(f.bucketGrowth, v)
	}
	return f
}

func (f oFamily) q(q, scale float64) *float64 {
	if !f.hasBuckets {
		return nil
	}
	v := oQuantile(q, f.les, f.bucketGrowth)
	if math.IsNaN(v) {
		return nil
	}
	return f64(percentile.Round4(v / scale))
}

func oRatio(n, d *float64, scale float64) *float64 {
	if n == nil || d == nil || *d == 0 {
		return nil
	}
	return f64(percentile.Round4(*n / *d / scale))
}

func oRoundInt(x *float64) *int64 {
	if x == nil {
		return nil
	}
	return i64(int64(math.RoundToEven(*x)))
}

func histSeries(st *oStore, family string, extra ...oMatcher) []oSeries {
	ms := append([]oMatcher{re("__name__", family+"_(bucket|sum|count)")}, extra...)
	return st.sel(ms...)
}

func expectSnapshots(st *oStore, r oRun) harvest.Snapshots {
	a, b := r.steadyStart+r.shift(), r.steadyEnd+r.shift()
	mem := famFrom(windowGrowth(histSeries(st, "atelet_snapshot_size_bytes", re("file_name", "pages.img|memory-ranges")), a, b), "atelet_snapshot_size_bytes")
	all := famFrom(windowGrowth(st.sel(eq("__name__", "atelet_snapshot_size_bytes_sum")), a, b), "atelet_snapshot_size_bytes")
	rs := famFrom(windowGrowth(histSeries(st, "ate_actor_restore_duration_seconds", eq("ate_snapshot_phase", "total")), a, b), "ate_actor_restore_duration_seconds")
	ck := famFrom(windowGrowth(histSeries(st, "ate_actor_checkpoint_duration_seconds", eq("ate_snapshot_phase", "total")), a, b), "ate_actor_checkpoint_duration_seconds")
	const mib = 1048576
	return harvest.Snapshots{
		SizeP50MB: mem.q(0.5, mib), SizeP90MB: mem.q(0.9, mib), SizeP95MB: mem.q(0.95, mib), SizeP99MB: mem.q(0.99, mib),
		SizeAvgMB:             oRatio(mem.sum, mem.count, mib),
		CheckpointsInWindow:   oRoundInt(mem.count),
		CheckpointsCumulative: oRoundInt(mem.end),
		RestoreP50S:           rs.q(0.5, 1), RestoreP90S: rs.q(0.9, 1), RestoreP95S: rs.q(0.95, 1), RestoreP99S: rs.q(0.99, 1),
		RestoreMeanS:   oRatio(rs.sum, rs.count, 1),
		CheckpointP50S: ck.q(0.5, 1), CheckpointP90S: ck.q(0.9, 1), CheckpointP95S: ck.q(0.95, 1), CheckpointP99S: ck.q(0.99, 1),
		CheckpointMeanS: oRatio(ck.sum, ck.count, 1),
		CheckpointMBs:   oRatio(all.sum, ck.sum, mib),
		A:               a, B: b,
	}
}

// procSeries evaluates `sum by (instance, exported_instance) (metric)` over
// the shifted window and merges it by process (max), timestamps shifted back.
func procSeries(st *oStore, r oRun, metric string) map[string]map[int64]float64 {
	in := st.sel(eq("__name__", metric))
	s, e := r.start+r.shift(), max(r.end, r.start+1)+r.shift()
	series := rangeEval(s, e, func(t int64) []oElem {
		return aggregate("sum", gaugeVec(in, t), "instance", "exported_instance")
	})
	out := map[string]map[int64]float64{}
	for _, ser := range series {
		p := ser.Labels["exported_instance"]
		if p == "" {
			p = ser.Labels["instance"]
		}
		if out[p] == nil {
			out[p] = map[int64]float64{}
		}
		for _, smp := range ser.Samples {
			t := smp.T - r.shift()
			if old, ok := out[p][t]; !ok || smp.V > old {
				out[p][t] = smp.V
			}
		}
	}
	return out
}

func procNames(m map[string]map[int64]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func expectActors(st *oStore, r oRun) harvest.ActiveActors {
	procs := procSeries(st, r, "ate_actor_stats_sampled_actors")
	out := harvest.ActiveActors{Timeseries: []harvest.ActorsPoint{}}
	if len(procs) == 0 {
		return out
	}
	out.Atelets = intp(len(procs))
	names := procNames(procs)
	var totals []float64
	for t := r.start; t <= max(r.end, r.start+1); t += oStep {
		any := false
		total, active := 0.0, 0
		for _, n := range names {
			if v, ok := procs[n][t]; ok {
				any = true
				total += v
				if v > 0 {
					active++
				}
			}
		}
		if !any {
			continue
		}
		out.Timeseries = append(out.Timeseries, harvest.ActorsPoint{Timestamp: t, ActiveActors: total, ActiveAtelets: active})
		if r.steady(t) {
			totals = append(totals, total)
		}
	}
	out.Summary = pctl(totals)
	return out
}

// wsExpect builds a W block from per-series columns (timestamp → GiB).
func wsExpect(r oRun, cols []map[int64]float64) harvest.WSBlock {
	if len(cols) == 0 {
		return harvest.WSBlock{Timeseries: []harvest.WSPoint{}}
	}
	sums, maxs := map[int64]float64{}, map[int64]float64{}
	var steady []float64
	count := 0
	for _, c := range cols {
		var ts []int64
		for t := range c {
			ts = append(ts, t)
		}
		sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
		hit := false
		for _, t := range ts {
			v := c[t]
			if _, ok := sums[t]; ok {
				sums[t] += v
				maxs[t] = max(maxs[t], v)
			} else {
				sums[t], maxs[t] = v, v
			}
			if r.steady(t) {
				steady = append(steady, v)
				hit = true
			}
		}
		if hit {
			count++
		}
	}
	var ts []int64
	for t := range sums {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
	b := harvest.WSBlock{Summary: pctl(steady), Count: intp(count), Timeseries: []harvest.WSPoint{}}
	for _, t := range ts {
		b.Timeseries = append(b.Timeseries, harvest.WSPoint{Timestamp: t, TotalGB: percentile.Round4(sums[t]), MaxGB: percentile.Round4(maxs[t])})
	}
	return b
}

func expectWorkingSet(st *oStore, r oRun) harvest.WorkingSet {
	const gib = 1 << 30
	cpu := st.sel(eq("__name__", "container_cpu_usage_seconds_total"), eq("namespace", r.sel.WorkerNamespace), eq("container", r.sel.WorkerContainer))
	live := func(t int64) []oElem { return gtZero(rateVec(cpu, t, 60)) }
	wsm := func(ms ...oMatcher) []oSeries {
		return st.sel(append([]oMatcher{eq("__name__", "container_memory_working_set_bytes")}, ms...)...)
	}
	nodeIn := wsm(eq("container", "node"))
	workerIn := wsm(eq("namespace", r.sel.WorkerNamespace), eq("container", r.sel.WorkerContainer))
	ateletIn := wsm(eq("namespace", r.sel.AteletNamespace), eq("container", r.sel.AteletContainer))
	cols := func(series []oSeries) []map[int64]float64 {
		var out []map[int64]float64
		for _, s := range series {
			m := map[int64]float64{}
			for _, smp := range s.Samples {
				m[smp.T] = smp.V / gib
			}
			out = append(out, m)
		}
		return out
	}
	var w harvest.WorkingSet
	w.Node = wsExpect(r, cols(rangeEval(r.start, r.end, func(t int64) []oElem {
		return andOn(aggregate("max", gaugeVec(nodeIn, t), "instance"), aggregate("count", live(t), "instance"), "instance")
	})))
	w.Worker = wsExpect(r, cols(rangeEval(r.start, r.end, func(t int64) []oElem {
		return andOn(aggregate("max", gaugeVec(workerIn, t), "pod"), live(t), "pod")
	})))
	w.Atelet = wsExpect(r, cols(rangeEval(r.start, r.end, func(t int64) []oElem {
		return andOn(aggregate("max", gaugeVec(ateletIn, t), "pod", "instance"), aggregate("count", live(t), "instance"), "instance")
	})))
	mem := procSeries(st, r, "ate_actor_stats_memory_working_set_bytes")
	cnt := procSeries(st, r, "ate_actor_stats_sampled_actors")
	var actor, per []map[int64]float64
	for _, p := range procNames(mem) {
		a, pa := map[int64]float64{}, map[int64]float64{}
		for t, v := range mem[p] {
			a[t] = v / gib
			if k, ok := cnt[p][t]; ok && k != 0 {
				pa[t] = v / k / gib
			}
		}
		actor = append(actor, a)
		if len(pa) > 0 {
			per = append(per, pa)
		}
	}
	w.Actor, w.PerActor = wsExpect(r, actor), wsExpect(r, per)
	return w
}

func expectOOM(st *oStore, r oRun) harvest.OOM {
	var o harvest.OOM
	cpu := st.sel(eq("__name__", "container_cpu_usage_seconds_total"), eq("namespace", r.sel.WorkerNamespace), eq("container", r.sel.WorkerContainer))
	hosts := map[string]bool{}
	for _, s := range rangeEval(r.start, r.end, func(t int64) []oElem {
		return aggregate("count", gtZero(rateVec(cpu, t, 60)), "instance")
	}) {
		hosts[s.Labels["instance"]] = true
	}
	node := windowGrowth(st.sel(eq("__name__", "container_oom_events_total"), eq("id", "/")), r.start, r.end)
	if len(node) > 0 && len(hosts) > 0 {
		sum := 0.0
		for _, g := range node {
			if hosts[g.Labels["instance"]] {
				sum += g.Growth
			}
		}
		o.Node = oRoundInt(&sum)
	}
	pod := windowGrowth(st.sel(eq("__name__", "container_oom_events_total"), eq("namespace", r.sel.WorkerNamespace), re("pod", r.sel.WorkerPodRegex)), r.start, r.end)
	if len(pod) > 0 {
		sum := 0.0
		for _, g := range pod {
			sum += g.Growth
		}
		o.Pod = oRoundInt(&sum)
	}
	return o
}
