package simrun

import (
	"strings"
)

type killAt struct {
	t    int64
	kind string
	node int
	pod  int // index into w.pods, -1 for node kills
}

func (g *gen) resolveKills() {
	w := g.w
	for i, k := range w.sc.OOMs {
		r := rngFor(w.sc.Seed, "oom", i)
		t := w.start + k.AtS + r.Int64N(10)
		ka := killAt{t: t, kind: k.Kind, node: k.Node, pod: -1}
		if k.Node < 0 {
			ka.node = w.sysNode
		}
		if k.Kind != "node" {
			var live []int
			for p := 0; p < w.nWorker; p++ {
				if w.pods[p].node == k.Node && w.pods[p].alive(t) {
					live = append(live, p)
				}
			}
			if k.Pod >= len(live) {
				continue
			}
			ka.pod = live[k.Pod]
		}
		g.kills = append(g.kills, ka)
	}
}

func (g *gen) oom() {
	w := g.w
	g.o.family(strings.TrimSuffix(FamOOM, "_total"), "counter")
	for n := range w.nodes {
		for _, c := range g.cgroups(n) {
			if c.scope != "node" && c.scope != "pod" && c.scope != "container" {
				continue
			}
			times := lifeTimes(g.cad[n], c.born, c.died)
			init := 0.0
			if c.scope == "node" {
				init = float64(rngFor(w.sc.Seed, "oominit", n).IntN(3))
			}
			var mine []int64
			for _, k := range g.kills {
				if k.node == n && k.kind == c.scope && (c.scope == "node" || k.pod == c.pod) {
					mine = append(mine, k.t)
					if g.truth != nil {
						g.truth.OOMKills = append(g.truth.OOMKills, OOMKill{T: k.t, Kind: k.kind, Instance: w.nodes[n].name,
							Pod: labelValue(c.labels, "pod"), ID: labelValue(c.labels, "id"), Container: labelValue(c.labels, "container"),
							WorkerNode: w.nodes[n].worker})
					}
				}
			}
			samples := make([]Sample, 0, len(times))
			for _, t := range times {
				v := init
				for _, kt := range mine {
					if kt <= t {
						v++
					}
				}
				samples = append(samples, Sample{t, v})
			}
			g.o.series(FamOOM, c.labels, samples)
		}
	}
}
