package simrun

import (
	"math"
	"math/rand/v2"
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

// PressureFamily is the counter name for a resource (cpu, memory, io) and
// kind (waiting, stalled).
func PressureFamily(resource, kind string) string {
	return famPressurePrefix + resource + "_" + kind + "_seconds_total"
}

// SizeBounds and DurationBounds are the histogram bucket upper bounds.
var (
	SizeBounds     = sizeBounds()
	DurationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, math.Inf(1)}
)

func sizeBounds() []float64 {
	var b []float64
	for k := 0; k <= 12; k++ {
		b = append(b, float64(int64(1)<<(20+k)))
	}
	return append(b, math.Inf(1))
}

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

type killAt struct {
	t    int64
	kind string
	node int
	pod  int // index into w.pods, -1 for node kills
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

func (g *gen) users() {
	w := g.w
	g.o.family(FamUsers, "gauge")
	ls := []Label{{"job", "locust"}, {"instance", w.nodes[w.sysNode].ip + "41:9646"}}
	g.o.series(FamUsers, ls, present(g.locustT, false, func(t int64) (float64, bool) {
		return float64(w.usersAt(t)), true
	}))
}

// unrelatedStates is the other pool's slow random walk (4 workers).
func (g *gen) unrelatedStates(t int64) (idle, partial, full int) {
	r := rngFor(g.w.sc.Seed, "unrelated", t/120)
	busy := r.IntN(5)
	full = r.IntN(busy + 1)
	return 4 - busy, busy - full, full
}

func (g *gen) workers() {
	w := g.w
	sc := w.sc
	g.o.family(FamWorkers, "gauge")
	pools := []string{PoolName}
	if sc.UnrelatedPool {
		pools = append(pools, UnrelatedPool)
	}
	states := []string{"idle", "partial", "at_capacity"}
	for _, p := range w.ateapi {
		// The last time the process itself was scraped before exiting: its
		// values are what the collector keeps re-exporting.
		lastLive := int64(math.MinInt64)
		if p.Exit != 0 {
			for _, t := range g.ateapiT {
				if t >= p.Start && t < p.Exit {
					lastLive = t
				}
			}
		}
		valueTime := func(t int64) (int64, bool, bool) {
			switch {
			case t >= p.Start && (p.Exit == 0 || t < p.Exit):
				return t, false, true
			case p.Exit != 0 && t >= p.Exit && t < p.FrozenUntil && lastLive != math.MinInt64:
				return lastLive, true, true
			}
			return 0, false, false
		}
		for _, pool := range pools {
			stateAt := func(t int64) [3]int {
				var a, b, c int
				if pool == PoolName {
					a, b, c = w.poolStates(t)
				} else {
					a, b, c = g.unrelatedStates(t)
				}
				return [3]int{a, b, c}
			}
			if g.truth != nil && !g.lean {
				for _, t := range g.ateapiT {
					if vt, frozen, ok := valueTime(t); ok {
						st := stateAt(vt)
						g.truth.WorkerStates = append(g.truth.WorkerStates, WorkerStates{T: t, Process: p.Key, Pool: pool,
							Idle: float64(st[0]), Partial: float64(st[1]), AtCapacity: float64(st[2]), Frozen: frozen})
					}
				}
			}
			for si, state := range states {
				job := "otel-collector"
				if sc.AteapiDirect {
					job = "ateapi"
				}
				ls := []Label{{"job", job}, {"instance", p.Instance}, {"exported_instance", p.ExportedInstance},
					{"ate_workerpool_name", pool}, {"ate_worker_state", state}}
				g.o.series(FamWorkers, ls, present(g.ateapiT, sc.StaleNaN, func(t int64) (float64, bool) {
					vt, _, ok := valueTime(t)
					if !ok {
						return 0, false
					}
					return float64(stateAt(vt)[si]), true
				}))
			}
		}
	}
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

// obsOf lists the observations one event makes, for one histogram family.
type obs struct {
	t           float64
	label, kind string
	v           float64
	ev          int
}

func (g *gen) nodeEvents(n int) []event {
	if ev, ok := g.events[n]; ok {
		return ev
	}
	ev := g.w.nodeEvents(n)
	if !g.lean {
		g.events[n] = ev
	}
	return ev
}

func eventObs(fam string, evs []event, microVM func(pod int) bool) []obs {
	var out []obs
	kindOf := func(e event) string {
		if e.incr {
			return "incremental"
		}
		return "full"
	}
	for i, e := range evs {
		switch fam {
		case FamSnapshotSize:
			if !e.checkpoint {
				continue
			}
			mem, meta := "pages.img", "checkpoint.img"
			if microVM(e.pod) {
				mem, meta = "memory-ranges", "vmstate"
			}
			out = append(out, obs{e.t, mem, "", e.memBytes, i}, obs{e.t, meta, "", e.metaBytes, i})
		case FamCheckpoint, FamRestore:
			if e.checkpoint != (fam == FamCheckpoint) {
				continue
			}
			phase := "download"
			if e.checkpoint {
				phase = "upload"
			}
			out = append(out, obs{e.t, "total", kindOf(e), e.total, i}, obs{e.t, phase, kindOf(e), e.phase, i})
		}
	}
	return out
}

func (g *gen) histograms() {
	w := g.w
	micro := func(p int) bool { return w.pods[p].microVM }
	for _, fam := range []string{FamSnapshotSize, FamRestore, FamCheckpoint} {
		g.o.family(fam, "histogram")
		bounds := DurationBounds
		if fam == FamSnapshotSize {
			bounds = SizeBounds
		}
		for n := range w.nodes {
			if !w.nodes[n].worker {
				continue
			}
			all := eventObs(fam, g.nodeEvents(n), micro)
			// Label sets in first-observation order.
			type key struct{ label, kind string }
			var keys []key
			groups := map[key][]obs{}
			for _, o := range all {
				k := key{o.label, o.kind}
				if _, ok := groups[k]; !ok {
					keys = append(keys, k)
				}
				groups[k] = append(groups[k], o)
			}
			for _, k := range keys {
				ls := []Label{{"job", "otel-collector"}, {"instance", w.collectA}, {"exported_instance", w.nodes[n].atelet}}
				if fam == FamSnapshotSize {
					ls = append(ls, Label{"file_name", k.label})
				} else {
					ls = append(ls, Label{"ate_snapshot_phase", k.label}, Label{"ate_snapshot_kind", k.kind})
				}
				pts, exported := g.histPoints(n, groups[k], bounds)
				g.o.histogram(fam, ls, bounds, pts)
				if g.truth != nil && !g.lean {
					for i, o := range groups[k] {
						g.truth.Observations = append(g.truth.Observations, Observation{T: o.t, Atelet: w.nodes[n].atelet,
							Node: w.nodes[n].name, Family: fam, Label: k.label, Kind: k.kind, Value: o.v, Lost: !exported[i]})
					}
				}
			}
		}
	}
}

// histPoints accumulates observations into cumulative histogram samples at
// the collector's scrape times (value at real time ts - shift). A series
// exists from its first observation since the atelet last started; a
// restart sets it back to zero. exported[i] is false for an observation the
// atelet made but never exported (it died before the next scrape).
func (g *gen) histPoints(n int, os []obs, bounds []float64) ([]histPoint, []bool) {
	w := g.w
	exported := make([]bool, len(os))
	counts := make([]float64, len(bounds))
	var sum float64
	var pts []histPoint
	epoch := int64(math.MinInt64)
	j := 0
	seen := false
	prev := false
	for _, ts := range g.collA {
		real := ts - w.shift
		up := w.ateletUp(n, real)
		if ep := w.ateletEpoch(n, real); ep != epoch {
			epoch = ep
			for i := range counts {
				counts[i] = 0
			}
			sum, seen = 0, false
			for j < len(os) && os[j].t < float64(ep) {
				j++
			}
		}
		if up {
			for j < len(os) && os[j].t <= float64(real) {
				o := os[j]
				for i, b := range bounds {
					if o.v <= b {
						counts[i]++
					}
				}
				sum += o.v
				exported[j] = true
				seen = true
				j++
			}
		}
		ok := up && seen
		switch {
		case ok:
			pts = append(pts, histPoint{t: ts, counts: append([]float64(nil), counts...), sum: sum})
		case w.sc.StaleNaN && prev:
			pts = append(pts, histPoint{t: ts, nan: true})
		}
		prev = ok
	}
	return pts, exported
}

func (g *gen) actorGauges() {
	w := g.w
	noise := func(n int, real int64) float64 {
		return 1 + 0.02*rand.New(rand.NewPCG(uint64(w.sc.Seed), uint64(n)<<40^uint64(real))).NormFloat64() //nolint:gosec // G404: deterministic by design
	}
	for _, fam := range []string{FamSampledActors, FamActorWorkSet} {
		g.o.family(fam, "gauge")
		for n := range w.nodes {
			if !w.nodes[n].worker {
				continue
			}
			type rep struct {
				inst  string
				times []int64
			}
			reps := []rep{{w.collectA, g.collA}}
			if d := w.sc.DuplicateReplica; d != nil && d.Node == n {
				var ts []int64
				for _, t := range g.collB {
					if t >= w.start+d.FromS && t < w.start+d.ToS {
						ts = append(ts, t)
					} else if t >= w.start+d.ToS {
						ts = append(ts, t) // the scrape that notices the replica is gone
						break
					}
				}
				reps = append(reps, rep{w.collectB, ts})
			}
			for ri, rp := range reps {
				last := int64(math.MaxInt64)
				if ri == 1 {
					last = w.start + w.sc.DuplicateReplica.ToS
				}
				val := func(ts int64) (float64, bool) {
					real := ts - w.shift
					a := w.nodeActors(n, real)
					if ts >= last || !w.ateletUp(n, real) || a == 0 {
						return 0, false
					}
					if fam == FamSampledActors {
						return float64(a), true
					}
					return math.Round(float64(a) * w.perActorBytes(real) * noise(n, real)), true
				}
				ls := []Label{{"job", "otel-collector"}, {"instance", rp.inst}, {"exported_instance", w.nodes[n].atelet}}
				samples := present(rp.times, w.sc.StaleNaN, val)
				g.o.series(fam, ls, samples)
				if g.truth == nil || g.lean {
					continue
				}
				for _, s := range samples {
					if math.IsNaN(s.V) {
						continue
					}
					if fam == FamSampledActors {
						g.truth.SampledActors = append(g.truth.SampledActors, GaugeSample{T: s.T, RealT: s.T - w.shift,
							Atelet: w.nodes[n].atelet, Instance: rp.inst, Value: s.V})
					} else {
						g.truth.WorkingSets = append(g.truth.WorkingSets, WorkingSetSample{T: s.T, Scope: "actor",
							Instance: rp.inst, Atelet: w.nodes[n].atelet, Bytes: s.V})
					}
				}
			}
		}
	}
}
