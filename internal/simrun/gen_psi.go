package simrun

import (
	"strings"
)

// PressureFamily is the counter name for a resource (cpu, memory, io) and
// kind (waiting, stalled).
func PressureFamily(resource, kind string) string {
	return famPressurePrefix + resource + "_" + kind + "_seconds_total"
}

func (g *gen) pressure(res, kind string) {
	name := PressureFamily(res, kind)
	g.o.family(strings.TrimSuffix(name, "_total"), "counter")
	fam := res
	if kind == "stalled" {
		fam = "stalled"
	}
	for n := range g.w.nodes {
		for _, c := range g.cgroups(n) {
			switch {
			case kind == "stalled" && c.scope != "node" && c.scope != "pod":
				continue
			case g.lean && c.scope == "container":
				continue
			}
			g.counter(name, c, fam, 40000)
		}
	}
}
