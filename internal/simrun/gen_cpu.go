package simrun

import (
	"strings"
)

func (g *gen) cpuUsage() {
	g.o.family(strings.TrimSuffix(FamCPUUsage, "_total"), "counter")
	for n := range g.w.nodes {
		for _, c := range g.cgroups(n) {
			if c.scope == "pod" || c.scope == "container" || c.scope == "pause" {
				g.counter(FamCPUUsage, c, "usage", 90000)
			}
		}
	}
	if g.w.sc.Ladder != nil {
		g.ladderCPU()
	}
}
