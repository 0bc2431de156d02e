package simrun

import (
	"strings"
)

// load is the busy fraction that drives a cgroup's rates at t.
func (g *gen) load(c cgroup, t int64) float64 {
	w := g.w
	switch {
	case c.pod >= 0 && c.pod < w.nWorker:
		return float64(w.podActors(c.pod, t)) / float64(w.pods[c.pod].capacity)
	case c.pod >= 0 && w.pods[c.pod].container == AteletContainer,
		c.pod < 0 && w.nodes[c.node].worker:
		cp := 0
		for i := 0; i < w.nWorker; i++ {
			if w.pods[i].node == c.node && w.pods[i].alive(t) {
				cp += w.pods[i].capacity
			}
		}
		if cp == 0 {
			return 0
		}
		return float64(w.nodeActors(c.node, t)) / float64(cp)
	}
	return 0.05
}

// rateParams gives base and gain of a counter rate per scope.
func rateParams(fam, scope string) (base, gain float64) {
	type k struct{ f, s string }
	tbl := map[k][2]float64{
		{"cpu", "node"}: {0.012, 0.31}, {"cpu", "system"}: {0.004, 0.02}, {"cpu", "pod"}: {0.003, 0.22},
		{"cpu", "container"}: {0.002, 0.12}, {"cpu", "pause"}: {0.00008, 0},
		{"memory", "node"}: {0.0008, 0.045}, {"memory", "system"}: {0.0002, 0.002}, {"memory", "pod"}: {0.0004, 0.06},
		{"memory", "container"}: {0.0002, 0.02}, {"memory", "pause"}: {0.00001, 0},
		{"io", "node"}: {0.004, 0.05}, {"io", "system"}: {0.002, 0.01}, {"io", "pod"}: {0.0015, 0.035},
		{"io", "container"}: {0.001, 0.012}, {"io", "pause"}: {0.00002, 0},
		{"stalled", "node"}: {0.004, 0.12}, {"stalled", "pod"}: {0.001, 0.09},
		{"usage", "pod"}: {0.06, 2.1}, {"usage", "container"}: {0.045, 0.7}, {"usage", "pause"}: {0.0003, 0},
	}
	v := tbl[k{fam, scope}]
	return v[0], v[1]
}

// segments draws the piecewise-constant rate behind a counter: segments of
// 30-240 s whose rate follows the load with multiplicative noise.
func (g *gen) segments(c cgroup, fam string, from, to int64) []RateSegment {
	base, gain := rateParams(fam, c.scope)
	r := rngFor(g.w.sc.Seed, "rate", fam, c.node, c.pod, c.scope)
	var out []RateSegment
	for t := from; t < to; {
		d := 30 + r.Int64N(211)
		if fam == "usage" {
			d = 15 + r.Int64N(60)
		}
		e := min(t+d, to)
		rate := (base + gain*g.load(c, t+(e-t)/2)) * lognormal(r, 0.22)
		out = append(out, RateSegment{From: t, To: e, Rate: rate})
		t = e
	}
	return out
}

// counterValues integrates segments up to each time, from init.
func counterValues(segs []RateSegment, init float64, times []int64) []float64 {
	out := make([]float64, len(times))
	acc, j := init, 0
	for i, t := range times {
		for j < len(segs) && segs[j].To <= t {
			acc += segs[j].Rate * float64(segs[j].To-segs[j].From)
			j++
		}
		v := acc
		if j < len(segs) && segs[j].From < t {
			v += segs[j].Rate * float64(t-segs[j].From)
		}
		out[i] = v
	}
	return out
}

func (g *gen) counter(name string, c cgroup, fam string, initScale float64) {
	times := lifeTimes(g.cad[c.node], c.born, c.died)
	if len(times) == 0 {
		return
	}
	from := max(c.born, g.w.w0)
	segs := g.segments(c, fam, from, min(c.died, g.telTo+1))
	r := rngFor(g.w.sc.Seed, "init", fam, c.node, c.pod, c.scope)
	init := 0.0
	if c.born < g.telFrom {
		if c.scope != "node" && c.scope != "system" {
			initScale /= 40 // pods are younger than their node
		}
		init = initScale * (0.5 + r.Float64())
	}
	vals := counterValues(segs, init, times)
	samples := make([]Sample, len(times))
	for i := range times {
		samples[i] = Sample{times[i], vals[i]}
	}
	g.o.series(name, c.labels, samples)
	if g.truth != nil && !g.lean && strings.HasPrefix(name, famPressurePrefix) {
		parts := strings.Split(strings.TrimPrefix(name, famPressurePrefix), "_")
		g.truth.Stalls = append(g.truth.Stalls, StallSeries{Scope: c.scope, Instance: g.w.nodes[c.node].name,
			Pod: labelValue(c.labels, "pod"), ID: labelValue(c.labels, "id"), Container: labelValue(c.labels, "container"),
			Resource: parts[0], Kind: parts[1], Segments: segs})
	}
}
