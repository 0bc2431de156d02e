package oracle

import (
	"math"
	"sort"
	"strconv"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

// run is the window a harvest covers: what Expect reads of harvest.Params.
type run struct {
	start, end, steadyStart, steadyEnd, lag int64
	sel                                     harvest.Selectors
}

// shift is lag_s // 2, Python's floor division.
func (r run) shift() int64 {
	if r.lag < 0 {
		return -((1 - r.lag) / 2)
	}
	return r.lag / 2
}

func (r run) steady(t int64) bool { return t >= r.steadyStart && t <= r.steadyEnd }

func f64(x float64) *float64                 { return &x }
func i64(x int64) *int64                     { return &x }
func intp(x int) *int                        { return &x }
func pctl(vals []float64) percentile.Summary { return percentile.Of(vals) }

// Expect computes every block of the harvest with parameters p (its run
// window, steady window, lag and selectors) from st.
func Expect(st *Store, p harvest.Params) *harvest.Result {
	r := run{start: p.Start, end: p.End, steadyStart: p.SteadyStart, steadyEnd: p.SteadyEnd, lag: p.LagS, sel: p.Sel}
	res := &harvest.Result{}
	res.Packing = expectPacking(st, r)
	res.NodePSI, res.PodPSI = expectPSI(st, r, true), expectPSI(st, r, false)
	res.Snapshots = expectSnapshots(st, r)
	res.ActiveActors = expectActors(st, r)
	res.WorkingSet = expectWorkingSet(st, r)
	res.OOM = expectOOM(st, r)
	return res
}

func expectPacking(st *Store, r run) harvest.Packing {
	in := st.sel(eq("__name__", "ate_workerpool_workers"), eq("ate_workerpool_name", r.sel.WorkerPool))
	got := rangeEval(r.start, r.end, func(t int64) []elem { return gaugeVec(in, t) })
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

func expectPSI(st *Store, r run, node bool) harvest.PSI {
	var out harvest.PSI
	seen := map[string]bool{}
	for i, res := range []string{"cpu", "memory", "io"} {
		name := "container_pressure_" + res + "_waiting_seconds_total"
		pod := st.sel(eq("__name__", name), re("pod", r.sel.WorkerPodRegex), eq("container", ""), re("id", podIDRegex))
		nodeSel := st.sel(eq("__name__", name), eq("container", "node"))
		var series []simrun.ExportedSeries
		by := "pod"
		if node {
			by = "instance"
			series = rangeEval(r.start, r.end, func(t int64) []elem {
				l := scaleVec(aggregate("sum", rateVec(nodeSel, t, 60), "instance"), 100)
				rr := scaleVec(aggregate("sum", rateVec(pod, t, 60), "instance"), 100)
				return andOn(l, rr, "instance")
			})
		} else {
			series = rangeEval(r.start, r.end, func(t int64) []elem {
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

// seriesGrowth is one series' window growth over (a, b] and its value at b
// (nil when absent or NaN).
type seriesGrowth struct {
	Name   string
	Labels map[string]string
	Growth float64
	End    *float64
}

// windowGrowth is simrun's Growth of every series that is in the family's
// result: for b <= a those with a value at b (growth 0), otherwise those
// with a finite sample between A's lookback and B.
func windowGrowth(series []simrun.ExportedSeries, a, b int64) []seriesGrowth {
	var out []seriesGrowth
	for _, s := range series {
		g, vB, okB := s.Growth(a, b)
		present := okB
		if b > a {
			present = hasFinite(s.Range(a-simrun.DefaultLookback, b))
		}
		if !present {
			continue
		}
		sg := seriesGrowth{Name: s.Name, Labels: s.Labels, Growth: g}
		if okB && !math.IsNaN(vB) {
			sg.End = f64(vB)
		}
		out = append(out, sg)
	}
	return out
}

func hasFinite(samples []simrun.Sample) bool {
	for _, s := range samples {
		if !math.IsNaN(s.V) {
			return true
		}
	}
	return false
}

// family is one histogram family's window figures: the deltas of _sum and
// _count, the end of _count (nil without such series) and the bucket growth
// summed by le.
type family struct {
	sum, count, end *float64
	buckets         []simrun.Bucket
	hasBuckets      bool
}

func famFrom(gs []seriesGrowth, name string) family {
	var f family
	byLE := map[float64]float64{}
	var s, c, e float64
	var ns, nc int
	for _, g := range gs {
		switch g.Name {
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
		f.buckets = append(f.buckets, simrun.Bucket{UpperBound: le, Count: v})
	}
	return f
}

// q is the window quantile divided by scale, rounded; nil without buckets
// or events.
func (f family) q(q, scale float64) *float64 {
	if !f.hasBuckets {
		return nil
	}
	v := simrun.HistogramQuantile(q, f.buckets)
	if math.IsNaN(v) {
		return nil
	}
	return f64(percentile.Round4(v / scale))
}

func ratio(n, d *float64, scale float64) *float64 {
	if n == nil || d == nil || *d == 0 {
		return nil
	}
	return f64(percentile.Round4(*n / *d / scale))
}

func roundInt(x *float64) *int64 {
	if x == nil {
		return nil
	}
	return i64(int64(math.RoundToEven(*x)))
}

func histSeries(st *Store, fam string, extra ...matcher) []simrun.ExportedSeries {
	ms := append([]matcher{re("__name__", fam+"_(bucket|sum|count)")}, extra...)
	return st.sel(ms...)
}

func expectSnapshots(st *Store, r run) harvest.Snapshots {
	a, b := r.steadyStart+r.shift(), r.steadyEnd+r.shift()
	mem := famFrom(windowGrowth(histSeries(st, "atelet_snapshot_size_bytes", re("file_name", "pages.img|memory-ranges")), a, b), "atelet_snapshot_size_bytes")
	all := famFrom(windowGrowth(st.sel(eq("__name__", "atelet_snapshot_size_bytes_sum")), a, b), "atelet_snapshot_size_bytes")
	rs := famFrom(windowGrowth(histSeries(st, "ate_actor_restore_duration_seconds", eq("ate_snapshot_phase", "total")), a, b), "ate_actor_restore_duration_seconds")
	ck := famFrom(windowGrowth(histSeries(st, "ate_actor_checkpoint_duration_seconds", eq("ate_snapshot_phase", "total")), a, b), "ate_actor_checkpoint_duration_seconds")
	const mib = 1048576
	return harvest.Snapshots{
		SizeP50MB: mem.q(0.5, mib), SizeP90MB: mem.q(0.9, mib), SizeP95MB: mem.q(0.95, mib), SizeP99MB: mem.q(0.99, mib),
		SizeAvgMB:             ratio(mem.sum, mem.count, mib),
		CheckpointsInWindow:   roundInt(mem.count),
		CheckpointsCumulative: roundInt(mem.end),
		RestoreP50S:           rs.q(0.5, 1), RestoreP90S: rs.q(0.9, 1), RestoreP95S: rs.q(0.95, 1), RestoreP99S: rs.q(0.99, 1),
		RestoreMeanS:   ratio(rs.sum, rs.count, 1),
		CheckpointP50S: ck.q(0.5, 1), CheckpointP90S: ck.q(0.9, 1), CheckpointP95S: ck.q(0.95, 1), CheckpointP99S: ck.q(0.99, 1),
		CheckpointMeanS: ratio(ck.sum, ck.count, 1),
		CheckpointMBs:   ratio(all.sum, ck.sum, mib),
		A:               a, B: b,
	}
}

// procSeries evaluates `sum by (instance, exported_instance) (metric)` over
// the shifted window and merges it by process (max), timestamps shifted back.
func procSeries(st *Store, r run, metric string) map[string]map[int64]float64 {
	in := st.sel(eq("__name__", metric))
	s, e := r.start+r.shift(), max(r.end, r.start+1)+r.shift()
	series := rangeEval(s, e, func(t int64) []elem {
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

func expectActors(st *Store, r run) harvest.ActiveActors {
	procs := procSeries(st, r, "ate_actor_stats_sampled_actors")
	out := harvest.ActiveActors{Timeseries: []harvest.ActorsPoint{}}
	if len(procs) == 0 {
		return out
	}
	out.Atelets = intp(len(procs))
	names := procNames(procs)
	var totals []float64
	for t := r.start; t <= max(r.end, r.start+1); t += step {
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
func wsExpect(r run, cols []map[int64]float64) harvest.WSBlock {
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

func expectWorkingSet(st *Store, r run) harvest.WorkingSet {
	const gib = 1 << 30
	cpu := st.sel(eq("__name__", "container_cpu_usage_seconds_total"), eq("namespace", r.sel.WorkerNamespace), eq("container", r.sel.WorkerContainer))
	live := func(t int64) []elem { return gtZero(rateVec(cpu, t, 60)) }
	wsm := func(ms ...matcher) []simrun.ExportedSeries {
		return st.sel(append([]matcher{eq("__name__", "container_memory_working_set_bytes")}, ms...)...)
	}
	nodeIn := wsm(eq("container", "node"))
	workerIn := wsm(eq("namespace", r.sel.WorkerNamespace), eq("container", r.sel.WorkerContainer))
	ateletIn := wsm(eq("namespace", r.sel.AteletNamespace), eq("container", r.sel.AteletContainer))
	cols := func(series []simrun.ExportedSeries) []map[int64]float64 {
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
	w.Node = wsExpect(r, cols(rangeEval(r.start, r.end, func(t int64) []elem {
		return andOn(aggregate("max", gaugeVec(nodeIn, t), "instance"), aggregate("count", live(t), "instance"), "instance")
	})))
	w.Worker = wsExpect(r, cols(rangeEval(r.start, r.end, func(t int64) []elem {
		return andOn(aggregate("max", gaugeVec(workerIn, t), "pod"), live(t), "pod")
	})))
	w.Atelet = wsExpect(r, cols(rangeEval(r.start, r.end, func(t int64) []elem {
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

func expectOOM(st *Store, r run) harvest.OOM {
	var o harvest.OOM
	cpu := st.sel(eq("__name__", "container_cpu_usage_seconds_total"), eq("namespace", r.sel.WorkerNamespace), eq("container", r.sel.WorkerContainer))
	hosts := map[string]bool{}
	for _, s := range rangeEval(r.start, r.end, func(t int64) []elem {
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
		o.Node = roundInt(&sum)
	}
	pod := windowGrowth(st.sel(eq("__name__", "container_oom_events_total"), eq("namespace", r.sel.WorkerNamespace), re("pod", r.sel.WorkerPodRegex)), r.start, r.end)
	if len(pod) > 0 {
		sum := 0.0
		for _, g := range pod {
			sum += g.Growth
		}
		o.Pod = roundInt(&sum)
	}
	return o
}
