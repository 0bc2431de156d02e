package simrun

import (
	"math"
)

// wsModel is the true working set of a cgroup at t, in bytes.
func (g *gen) wsModel(c cgroup, t int64) float64 {
	w := g.w
	const mib = 1 << 20
	switch c.scope {
	case "node":
		if !w.nodes[c.node].worker {
			return 3.1 * (1 << 30)
		}
		v := 2.4 * (1 << 30)
		for i := 0; i < w.nWorker; i++ {
			if w.pods[i].node == c.node && w.pods[i].alive(t) {
				v += g.wsModel(cgroup{scope: "pod", node: c.node, pod: i}, t)
			}
		}
		return v
	case "system":
		return 870 * mib
	case "pause":
		return 440 * 1024
	}
	p := &w.pods[c.pod]
	switch {
	case p.worker:
		a := float64(w.podActors(c.pod, t))
		ctr := 170*mib + 1.6*mib*a
		if c.scope == "container" {
			return ctr
		}
		return ctr + a*w.perActorBytes(t)*0.93
	case p.container == AteletContainer:
		return 112*mib + 0.35*mib*float64(w.nodeActors(c.node, t))
	}
	return 310 * mib
}

func (g *gen) workingSet() {
	w := g.w
	g.o.family(FamWorkingSet, "gauge")
	for n := range w.nodes {
		for _, c := range g.cgroups(n) {
			times := lifeTimes(g.cad[n], c.born, c.died)
			r := rngFor(w.sc.Seed, "ws", c.node, c.pod, c.scope)
			samples := make([]Sample, 0, len(times))
			for _, t := range times {
				v := math.Round(g.wsModel(c, t) * (1 + 0.012*r.NormFloat64()))
				samples = append(samples, Sample{t, v})
			}
			g.o.series(FamWorkingSet, c.labels, samples)
			if g.truth == nil || g.lean {
				continue
			}
			scope := ""
			switch {
			case c.scope == "node":
				scope = "node"
			case c.scope == "container" && c.pod < w.nWorker:
				scope = "worker"
			case c.scope == "container" && w.pods[c.pod].container == AteletContainer:
				scope = "atelet"
			}
			if scope == "" {
				continue
			}
			for _, s := range samples {
				g.truth.WorkingSets = append(g.truth.WorkingSets, WorkingSetSample{T: s.T, Scope: scope,
					Instance: w.nodes[n].name, Pod: labelValue(c.labels, "pod"), Bytes: s.V})
			}
		}
	}
	if w.sc.Ladder != nil {
		g.ladderMemory()
	}
}
