package phases

import (
	"cmp"
	"math"
	"slices"
)

// Analyze pairs the atelet and ateom records and adds the unattributed
// phase, in place. Records keep their order.
func Analyze(recs []Record) {
	Pair(recs)
	for i := range recs {
		Residual(&recs[i])
	}
}

type pairKey struct{ uid, op string }

// Pair pairs each atelet record (with a time, total and its inner phase, in
// time order, ties in input order) with the latest unused ateom record of
// the same actor uid and op inside its window (inclusive; equal times: the
// last in input order). The paired ateom record takes the atelet record's
// kind and class where its own are empty. Failed records pair too.
func Pair(recs []Record) {
	for i := range recs {
		recs[i].Pair = -1
	}
	ateom := map[pairKey][]int{}
	var atelet []int
	for i := range recs {
		r := &recs[i]
		if !r.HasTime {
			continue
		}
		switch r.Layer {
		case LayerAteom:
			k := pairKey{r.UID, r.Op}
			ateom[k] = append(ateom[k], i)
		case LayerAtelet:
			atelet = append(atelet, i)
		}
	}
	slices.SortStableFunc(atelet, func(a, b int) int { return cmp.Compare(recs[a].Time, recs[b].Time) })
	for _, i := range atelet {
		r := &recs[i]
		total, ok := r.Get(PhaseTotal)
		if !ok {
			continue
		}
		t := seconds(r.Time)
		var lo, hi float64
		switch r.Op {
		case OpRestore:
			inner, ok := r.Get(PhaseAteomRestore)
			if !ok {
				continue
			}
			lo, hi = t-inner-1, t+1
		case OpCheckpoint:
			if _, ok := r.Get(PhaseAteomCheckpoint); !ok {
				continue
			}
			lo, hi = t-total-1, t-r.value(PhasePersist)+1
		default:
			continue
		}
		best := -1
		for _, j := range ateom[pairKey{r.UID, r.Op}] {
			c := &recs[j]
			if c.Pair >= 0 {
				continue
			}
			if ct := seconds(c.Time); ct < lo || ct > hi {
				continue
			}
			if best < 0 || c.Time >= recs[best].Time {
				best = j
			}
		}
		if best < 0 {
			continue
		}
		c := &recs[best]
		c.Pair, r.Pair = i, best
		if c.Kind == "" {
			c.Kind = r.Kind
		}
		if c.Class == "" {
			c.Class = r.Class
		}
	}
}

func seconds(us int64) float64 { return float64(us) / 1e6 }

// Residual sets the unattributed phase of a record with total: atelet
// checkpoint total − (sandbox_assets + ateom_checkpoint + persist); ateom
// checkpoint of class microvm total − (prep + pause + max(snapshot,
// durable_dir, rootfs_upper) + teardown); ateom checkpoint of class gvisor
// total − the sum of every other phase (in report order). Missing phases
// count 0; never clamped. Restores and other classes get none.
func Residual(r *Record) {
	total, ok := r.Get(PhaseTotal)
	if !ok || r.Op != OpCheckpoint {
		return
	}
	var u float64
	switch {
	case r.Layer == LayerAtelet:
		u = total - (r.value(PhaseSandboxAssets) + r.value(PhaseAteomCheckpoint) + r.value(PhasePersist))
	case r.Layer == LayerAteom && r.Class == ClassMicroVM:
		conc := math.Max(math.Max(r.value("snapshot"), r.value("durable_dir")), r.value("rootfs_upper"))
		u = total - (r.value("prep") + r.value("pause") + conc + r.value("teardown"))
	case r.Layer == LayerAteom && r.Class == ClassGVisor:
		others := make([]Phase, 0, len(r.Phases))
		for _, p := range r.Phases {
			if p.Name != PhaseTotal && p.Name != PhaseUnattributed {
				others = append(others, p)
			}
		}
		slices.SortStableFunc(others, func(a, b Phase) int { return ComparePhases(a.Name, b.Name) })
		sum := 0.0
		for _, p := range others {
			sum += p.Seconds
		}
		u = total - sum
	default:
		return
	}
	r.set(PhaseUnattributed, u)
}

// Group is one percentile row: the values of one (layer, op, class, kind,
// scope, phase) over the successful records, in milliseconds. A missing
// dimension is "-".
type Group struct {
	Layer, Op, Class, Kind, Scope, Phase string
	Count                                int
	P50, P90, P95, Max                   float64
}

type groupKey struct{ layer, op, class, kind, scope, phase string }

func dim(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Groups computes the percentile rows of analysed records (failed records
// excluded), in row order: the five dimensions as strings, then the phase
// in report order.
func Groups(recs []Record) []Group {
	vals := map[groupKey][]float64{}
	for i := range recs {
		r := &recs[i]
		if r.Failed {
			continue
		}
		for _, p := range r.Phases {
			k := groupKey{r.Layer, r.Op, dim(r.Class), dim(r.Kind), dim(r.Scope), p.Name}
			vals[k] = append(vals[k], p.Seconds)
		}
	}
	out := make([]Group, 0, len(vals))
	for k, v := range vals {
		slices.Sort(v)
		out = append(out, Group{
			Layer: k.layer, Op: k.op, Class: k.class, Kind: k.kind, Scope: k.scope, Phase: k.phase,
			Count: len(v),
			P50:   Quantile(v, 50) * 1000,
			P90:   Quantile(v, 90) * 1000,
			P95:   Quantile(v, 95) * 1000,
			Max:   v[len(v)-1] * 1000,
		})
	}
	slices.SortFunc(out, compareGroups)
	return out
}

func compareGroups(a, b Group) int {
	return cmp.Or(
		cmp.Compare(a.Layer, b.Layer), cmp.Compare(a.Op, b.Op), cmp.Compare(a.Class, b.Class),
		cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Scope, b.Scope), ComparePhases(a.Phase, b.Phase))
}

// Quantile is the percentile pct (0..100) of sorted values with Python's
// statistics.quantiles(method="inclusive") arithmetic: m = N−1,
// j, d = divmod(pct·m, 100), (x[j]·(100−d) + x[j+1]·d) / 100, each product
// rounded separately (no fused multiply-add). N = 1 gives the value.
func Quantile(sorted []float64, pct int) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return sorted[0]
	}
	m := n - 1
	j, d := pct*m/100, pct*m%100
	if j+1 >= n {
		return sorted[m]
	}
	a := float64(sorted[j] * float64(100-d))
	b := float64(sorted[j+1] * float64(d))
	return (a + b) / 100
}
