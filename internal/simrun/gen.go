package simrun

import (
	"math"
	"strings"
)

// Families written, in file order.
const (
	FamUsers          = "locust_users"
	FamWorkers        = "ate_workerpool_workers"
	FamCPUUsage       = "container_cpu_usage_seconds_total"
	FamWorkingSet     = "container_memory_working_set_bytes"
	FamOOM            = "container_oom_events_total"
	FamSnapshotSize   = "atelet_snapshot_size_bytes"
	FamRestore        = "ate_actor_restore_duration_seconds"
	FamCheckpoint     = "ate_actor_checkpoint_duration_seconds"
	FamSampledActors  = "ate_actor_stats_sampled_actors"
	FamActorWorkSet   = "ate_actor_stats_memory_working_set_bytes"
	famPressurePrefix = "container_pressure_"
)

type gen struct {
	w     *world
	o     *omWriter
	truth *Truth
	lean  bool

	telFrom, telTo int64
	cad            [][]int64 // cAdvisor scrape times per node
	collA, collB   []int64
	ateapiT        []int64
	locustT        []int64
	events         map[int][]event
	kills          []killAt
}

func (g *gen) scrapeTimes(target string, from, to int64) []int64 {
	sc := g.w.sc
	r := rngFor(sc.Seed, "scrape", target)
	iv := sc.ScrapeS
	phase := r.Int64N(iv)
	t := from - ((from%iv)+iv)%iv + phase
	if t < from {
		t += iv
	}
	var out []int64
	for ; t <= to; t += iv {
		ts := t
		if r.Float64() < 0.05 {
			ts++ // a late scrape
		}
		if gp := sc.ScrapeGap; gp != nil && ts >= sc.Start+gp.FromS && ts < sc.Start+gp.ToS {
			continue
		}
		out = append(out, ts)
	}
	return out
}

// present walks scrape times; val reports the value and whether the series
// is exported at that time. With stale, a series that disappears while
// its target is still scraped gets one NaN sample.
func present(times []int64, stale bool, val func(t int64) (float64, bool)) []Sample {
	var out []Sample
	prev := false
	for _, t := range times {
		v, ok := val(t)
		switch {
		case ok:
			out = append(out, Sample{t, v})
		case stale && prev:
			out = append(out, Sample{t, math.NaN()})
		}
		prev = ok
	}
	return out
}

// run writes every family in file order; each family's writer is in the
// gen_*.go file named for it (gen_counters.go holds the counter model the
// PSI and CPU counters share).
func (g *gen) run() {
	w := g.w
	sc := w.sc
	g.telFrom, g.telTo = sc.Start-sc.PreS, w.end+sc.PostS
	for n := range w.nodes {
		g.cad = append(g.cad, g.scrapeTimes("cadvisor/"+w.nodes[n].name, g.telFrom, g.telTo))
	}
	g.collA = g.scrapeTimes("collector/"+w.collectA, g.telFrom, g.telTo+w.shift)
	g.collB = g.scrapeTimes("collector/"+w.collectB, g.telFrom, g.telTo+w.shift)
	if sc.AteapiDirect {
		g.ateapiT = g.scrapeTimes("ateapi", g.telFrom, g.telTo)
	} else {
		g.ateapiT = g.collA
	}
	g.locustT = g.scrapeTimes("locust", w.start, w.end)
	g.resolveKills()

	g.users()
	if !sc.NoAteMetrics {
		g.workers()
	}
	for _, res := range []string{"cpu", "memory", "io"} {
		g.pressure(res, "waiting")
		if res == "cpu" {
			g.pressure(res, "stalled")
		}
	}
	g.cpuUsage()
	g.workingSet()
	g.oom()
	if !sc.NoAteMetrics {
		g.histograms()
		g.actorGauges()
	}
	if sc.Ladder != nil {
		g.ladderLoadgen()
		g.ladderPostgres()
	}
	g.o.eof()
}

// cgroup is one cAdvisor-visible cgroup on a node.
type cgroup struct {
	scope      string // node, system, pod, container, pause
	node, pod  int    // pod -1 for node-level cgroups
	labels     []Label
	born, died int64
}

func (g *gen) cgroups(n int) []cgroup {
	w := g.w
	node := w.nodes[n]
	base := []Label{{"job", "kubernetes-cadvisor"}, {"instance", node.name}}
	out := []cgroup{{scope: "node", node: n, pod: -1, labels: append(base[:2:2], Label{"container", "node"}, Label{"id", "/"}), born: math.MinInt64, died: never}}
	if !g.lean {
		out = append(out, cgroup{scope: "system", node: n, pod: -1, labels: append(base[:2:2], Label{"id", "/system.slice"}), born: math.MinInt64, died: never})
	}
	for i := range w.pods {
		p := &w.pods[i]
		if p.node != n {
			continue
		}
		var podID, ctrID, pauseID string
		if w.sc.CgroupFS {
			podID = "/kubepods/burstable/pod" + p.uid
			if p.qos == "guaranteed" {
				podID = "/kubepods/pod" + p.uid
			}
			ctrID, pauseID = podID+"/"+p.cid, podID+"/"+p.pauseID
		} else {
			u := strings.ReplaceAll(p.uid, "-", "_")
			podID = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + u + ".slice"
			if p.qos == "guaranteed" {
				podID = "/kubepods.slice/kubepods-pod" + u + ".slice"
			}
			ctrID, pauseID = podID+"/cri-containerd-"+p.cid+".scope", podID+"/cri-containerd-"+p.pauseID+".scope"
		}
		pl := append(base[:2:2], Label{"namespace", p.ns}, Label{"pod", p.name})
		out = append(out, cgroup{scope: "pod", node: n, pod: i, labels: append(pl[:4:4], Label{"id", podID}), born: p.born, died: p.died})
		out = append(out, cgroup{scope: "container", node: n, pod: i, labels: append(pl[:4:4], Label{"container", p.container}, Label{"id", ctrID}, Label{"image", p.image}), born: p.born, died: p.died})
		if !g.lean {
			out = append(out, cgroup{scope: "pause", node: n, pod: i, labels: append(pl[:4:4], Label{"id", pauseID}, Label{"image", "registry.k8s.io/pause:3.9"}), born: p.born, died: p.died})
		}
	}
	return out
}

func labelValue(ls []Label, name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// lifeTimes are the node's scrape times inside [born, died).
func lifeTimes(times []int64, born, died int64) []int64 {
	var out []int64
	for _, t := range times {
		if t >= born && t < died {
			out = append(out, t)
		}
	}
	return out
}
