package main

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
)

// staleNaN is the staleness marker a live Prometheus writes when a series
// disappears from a target that is still scraped (backfill cannot write it;
// this tool can, so the scale run behaves like a live server).
var staleNaN = math.Float64frombits(value.StaleNaN)

// sink receives one whole series at a time (times in Unix seconds, in
// increasing order).
type sink interface {
	add(ls labels.Labels, ts []int64, vs []float64) error
}

// emitter writes the series of one job (a node, or the cluster-level
// series) and keeps the ground truth the export should find.
type emitter struct {
	w     *world
	out   sink
	err   error
	truth jobTruth
}

// jobTruth is what one job contributes to the ground truth.
type jobTruth struct {
	series, samples int64
	memGrowth       float64 // per-series growth of MEM _count over (A, B]
	memEnd          float64 // sum of v_B of MEM _count
	memRestarted    int     // MEM _count series that restarted inside (A, B]
}

func (e *emitter) emit(ls labels.Labels, ts []int64, vs []float64) {
	if e.err != nil || len(ts) == 0 {
		return
	}
	e.truth.series++
	e.truth.samples += int64(len(ts))
	e.err = e.out.add(ls, ts, vs)
}

func lbls(kv ...string) labels.Labels {
	// Empty values are not stored by Prometheus: drop them, as the
	// OpenMetrics writer of internal/simrun does.
	out := make([]string, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return labels.FromStrings(out...)
}

func withName(name string, ls labels.Labels) labels.Labels {
	return labels.NewBuilder(ls).Set(labels.MetricName, name).Labels(nil)
}

// cgroup is one cAdvisor-visible cgroup.
type cgroup struct {
	scope  string // node, pod, container
	labels labels.Labels
	load   func(k int) float64 // busy fraction at step k
	ws     func(k int, t int64) float64
	key    string // rng key
	oomAt  int64
	init   float64 // OOM counter at the start
}

// rateParams are a counter's base and gain per family and scope (the
// table of internal/simrun/gen.go).
func rateParams(fam, scope string) (base, gain float64) {
	type k struct{ f, s string }
	tbl := map[k][2]float64{
		{"cpu", "node"}: {0.012, 0.31}, {"cpu", "pod"}: {0.003, 0.22},
		{"memory", "node"}: {0.0008, 0.045}, {"memory", "pod"}: {0.0004, 0.06},
		{"io", "node"}: {0.004, 0.05}, {"io", "pod"}: {0.0015, 0.035},
		{"stalled", "node"}: {0.004, 0.12}, {"stalled", "pod"}: {0.001, 0.09},
		{"usage", "pod"}: {0.06, 2.1}, {"usage", "container"}: {0.045, 0.7},
	}
	v := tbl[k{fam, scope}]
	return v[0], v[1]
}

// counter integrates a piecewise-constant rate (segments of 30-240 s that
// follow the load, with multiplicative noise) at the scrape times.
func (e *emitter) counter(name string, c cgroup, fam string, times []int64, initScale float64) {
	base, gain := rateParams(fam, c.scope)
	r := rngFor(e.w.p.Seed, "rate", fam, c.key)
	v := initScale * (0.5 + r.Float64())
	vs := make([]float64, len(times))
	var rate float64
	segEnd := int64(math.MinInt64)
	prev := times[0]
	for i, t := range times {
		v += rate * float64(t-prev)
		if t >= segEnd {
			segEnd = t + 30 + r.Int64N(211)
			rate = (base + gain*c.load(e.w.stepOf(t))) * lognormal(r, 0.22)
		}
		vs[i] = v
		prev = t
	}
	e.emit(withName(name, c.labels), times, vs)
}

func (e *emitter) cadvisor(c cgroup, times []int64) {
	w := e.w
	if c.scope != "container" {
		for _, res := range []string{"cpu", "memory", "io"} {
			e.counter(pressureFamily(res, "waiting"), c, res, times, 40000/ifPod(c.scope, 40))
		}
		e.counter(pressureFamily("cpu", "stalled"), c, "stalled", times, 40000/ifPod(c.scope, 40))
	}
	if c.scope != "node" {
		e.counter(famCPUUsage, c, "usage", times, 90000/40)
	}
	r := rngFor(w.p.Seed, "ws", c.key)
	vs := make([]float64, len(times))
	for i, t := range times {
		vs[i] = math.Round(c.ws(w.stepOf(t), t) * (1 + 0.012*r.NormFloat64()))
	}
	e.emit(withName(famWorkingSet, c.labels), times, vs)
	oom := make([]float64, len(times))
	for i, t := range times {
		oom[i] = c.init
		if c.oomAt != 0 && t >= c.oomAt {
			oom[i]++
		}
	}
	e.emit(withName(famOOM, c.labels), times, oom)
}

func ifPod(scope string, div float64) float64 {
	if scope == "node" {
		return 1
	}
	return div
}

const mib = 1 << 20

// nodeJob writes every series of worker node n: cAdvisor for the node, its
// worker pods and its atelet pod, and the atelet's histograms and gauges.
func (e *emitter) nodeJob(n int) {
	w := e.w
	p := w.p
	nd := &w.nodes[n]
	times := w.scrapes(nd.phase, w.telFrom, w.telTo)
	cadv := []string{"job", "kubernetes-cadvisor", "instance", nd.name}
	nodeCap := float64(len(nd.pods) * p.Capacity)
	nodeLoad := func(k int) float64 { return float64(w.nodeAct[n][k]) / nodeCap }
	podWS := func(i, k int) float64 {
		a := float64(w.actors[i][k])
		return 170*mib + 1.6*mib*a + a*w.perActorBytes(w.telFrom+int64(k)*p.StepS)*0.93
	}
	nodeOOM := w.nodeOOMs[n] // 0: no global OOM on this node
	e.cadvisor(cgroup{scope: "node", labels: lbls(append(cadv, "container", "node", "id", "/")...), load: nodeLoad,
		ws: func(k int, t int64) float64 {
			v := 2.4 * (1 << 30)
			for _, i := range nd.pods {
				v += podWS(i, k)
			}
			return v
		}, key: nd.name, oomAt: nodeOOM, init: float64(rngFor(p.Seed, "oominit", n).IntN(3))}, times)
	img := "europe-docker.pkg.dev/substrate/ate/ateom-gvisor:v0.42.1"
	if nd.microVM {
		img = "europe-docker.pkg.dev/substrate/ate/ateom-microvm:v0.42.1"
	}
	for _, i := range nd.pods {
		pd := &w.pods[i]
		podID := "/kubepods.slice/kubepods-pod" + strings.ReplaceAll(pd.uid, "-", "_") + ".slice"
		pl := append(append([]string(nil), cadv...), "namespace", workerNamespace, "pod", pd.name)
		load := func(k int) float64 { return float64(w.actors[i][k]) / float64(p.Capacity) }
		podOOM, ctrOOM := int64(0), int64(0)
		switch pd.oomScope {
		case "pod":
			podOOM = pd.oomAt
		case "container":
			ctrOOM = pd.oomAt
		}
		e.cadvisor(cgroup{scope: "pod", labels: lbls(append(pl, "id", podID)...), load: load,
			ws: func(k int, _ int64) float64 { return podWS(i, k) }, key: pd.uid + "/pod", oomAt: podOOM}, times)
		e.cadvisor(cgroup{scope: "container",
			labels: lbls(append(pl, "container", workerContainer, "id", podID+"/cri-containerd-"+pd.cid+".scope", "image", img)...), load: load,
			ws: func(k int, _ int64) float64 { return 170*mib + 1.6*mib*float64(w.actors[i][k]) }, key: pd.uid + "/ctr", oomAt: ctrOOM}, times)
	}
	// The atelet pod (burstable QoS naming).
	aID := "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(nd.ateletUID, "-", "_") + ".slice"
	al := append(append([]string(nil), cadv...), "namespace", ateletNamespace, "pod", nd.ateletPod)
	aws := func(k int, _ int64) float64 { return 112*mib + 0.35*mib*float64(w.nodeAct[n][k]) }
	e.cadvisor(cgroup{scope: "pod", labels: lbls(append(al, "id", aID)...), load: nodeLoad, ws: aws, key: nd.ateletUID + "/pod"}, times)
	e.cadvisor(cgroup{scope: "container", labels: lbls(append(al, "container", ateletContainer, "id", aID+"/cri-containerd-"+randHex(rngFor(p.Seed, "cid", n), 64)+".scope",
		"image", "europe-docker.pkg.dev/substrate/ate/atelet:v0.42.1")...), load: nodeLoad, ws: aws, key: nd.ateletUID + "/ctr"}, times)

	e.atelet(n)
}

// histSet is one histogram label set of one atelet: per-bucket counts
// (not cumulative) since the atelet last started.
type histSet struct {
	fam    string
	labels labels.Labels
	bounds []float64
	counts []float64
	sum    float64
	seen   bool
	mem    bool // the MEM selector's _count (pages.img or memory-ranges)
	// output
	ts   []int64
	vals [][]float64 // per bucket (cumulative), then sum, then count
}

func (h *histSet) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: v <= bound
	h.counts[min(i, len(h.bounds)-1)]++
	h.sum += v
	h.seen = true
}

func (h *histSet) reset() {
	clear(h.counts)
	h.sum, h.seen = 0, false
}

func (h *histSet) record(t int64, stale bool) {
	h.ts = append(h.ts, t)
	acc := 0.0
	for i, c := range h.counts {
		acc += c
		v := acc
		if stale {
			v = staleNaN
		}
		h.vals[i] = append(h.vals[i], v)
	}
	s, c := h.sum, acc
	if stale {
		s, c = staleNaN, staleNaN
	}
	h.vals[len(h.counts)] = append(h.vals[len(h.counts)], s)
	h.vals[len(h.counts)+1] = append(h.vals[len(h.counts)+1], c)
}

// atelet writes node n's atelet series as the collector re-exports them:
// timestamps late by shift, counters from zero after the restart, series
// absent (with a staleness marker) while the atelet is down.
func (e *emitter) atelet(n int) {
	w := e.w
	p := w.p
	nd := &w.nodes[n]
	shift := p.shift()
	base := []string{"job", "otel-collector", "instance", w.collector, "exported_instance", nd.atelet}
	memFile, metaFile := "pages.img", "checkpoint.img"
	if nd.microVM {
		memFile, metaFile = "memory-ranges", "vmstate"
	}
	mk := func(fam string, bounds []float64, kv ...string) *histSet {
		h := &histSet{fam: fam, labels: lbls(append(append([]string(nil), base...), kv...)...), bounds: bounds,
			counts: make([]float64, len(bounds)), vals: make([][]float64, len(bounds)+2)}
		return h
	}
	mem := mk(famSnapshotSize, sizeBounds, "file_name", memFile)
	mem.mem = true
	meta := mk(famSnapshotSize, sizeBounds, "file_name", metaFile)
	sets := []*histSet{mem, meta}
	dur := map[string]*histSet{}
	for _, fam := range []string{famRestore, famCheckpoint} {
		phase := "download"
		if fam == famCheckpoint {
			phase = "upload"
		}
		for _, ph := range []string{"total", phase} {
			for _, kind := range []string{"full", "incremental"} {
				h := mk(fam, durationBounds, "ate_snapshot_phase", ph, "ate_snapshot_kind", kind)
				dur[fam+"/"+ph+"/"+kind] = h
				sets = append(sets, h)
			}
		}
	}

	r := rngFor(p.Seed, "events", n)
	event := func(t int64, checkpoint bool) {
		incr := r.Float64() < 0.55
		kind := "full"
		if incr {
			kind = "incremental"
		}
		ws := w.perActorBytes(t) * lognormal(r, 0.18)
		if incr {
			ws *= 0.22 + 0.2*r.Float64()
		}
		memB := math.Floor(ws*(0.86+0.12*r.Float64())) + 1
		var total, phase float64
		if checkpoint {
			tp := (140 + 260*r.Float64()) * mib
			total = (0.12 + memB/tp) * lognormal(r, 0.3)
			phase = total * (0.35 + 0.35*r.Float64())
			metaB := math.Floor(2.5*mib + 9*mib*r.Float64())
			if nd.microVM {
				metaB = math.Floor(60*1024 + 150*1024*r.Float64())
			}
			mem.observe(memB)
			meta.observe(metaB)
			dur[famCheckpoint+"/total/"+kind].observe(total)
			dur[famCheckpoint+"/upload/"+kind].observe(phase)
		} else {
			tp := (320 + 600*r.Float64()) * mib
			total = (0.06 + memB/tp) * lognormal(r, 0.35)
			phase = total * (0.25 + 0.4*r.Float64())
			dur[famRestore+"/total/"+kind].observe(total)
			dur[famRestore+"/download/"+kind].observe(phase)
		}
	}

	scr := w.scrapes(w.collPhase, w.telFrom, w.telTo+shift)
	var gTimes []int64
	var sampled, actorWS []float64
	gaugePrev := false
	next := 0 // next step whose events are not yet applied
	wasUp := true
	nr := rngFor(p.Seed, "actorws", n)
	for _, ts := range scr {
		real := ts - shift
		up := w.ateletUp(n, real)
		if up && !wasUp {
			// Restarted: counters start again from zero; events of the
			// down time are lost.
			for _, h := range sets {
				h.reset()
			}
			for next < w.steps && w.telFrom+int64(next+1)*p.StepS <= real {
				next++
			}
		}
		wasUp = up
		// Apply the events of every step that ended by real time `real`.
		for next < w.steps && w.telFrom+int64(next+1)*p.StepS <= real {
			k := next
			next++
			t := w.telFrom + int64(k)*p.StepS
			if !w.ateletUp(n, t) {
				continue
			}
			a := float64(w.nodeAct[n][k])
			prev := a
			if k > 0 {
				prev = float64(w.nodeAct[n][k-1])
			}
			nc := poisson(r, a*float64(p.StepS)/600) + int(max(0, prev-a))
			nrs := poisson(r, a*float64(p.StepS)/700) + int(max(0, a-prev))
			for j := 0; j < nc; j++ {
				event(t, true)
			}
			for j := 0; j < nrs; j++ {
				event(t, false)
			}
		}
		for _, h := range sets {
			present := up && h.seen
			switch {
			case present:
				h.record(ts, false)
			case len(h.ts) > 0 && !isStale(h.vals[0][len(h.vals[0])-1]):
				h.record(ts, true)
			}
		}
		k := w.stepOf(real)
		a := w.nodeAct[n][k]
		if up && a > 0 {
			gTimes = append(gTimes, ts)
			sampled = append(sampled, float64(a))
			actorWS = append(actorWS, math.Round(float64(a)*w.perActorBytes(real)*(1+0.02*nr.NormFloat64())))
			gaugePrev = true
		} else if gaugePrev {
			gTimes = append(gTimes, ts)
			sampled = append(sampled, staleNaN)
			actorWS = append(actorWS, staleNaN)
			gaugePrev = false
		}
	}
	for _, h := range sets {
		for i, b := range h.bounds {
			le := "+Inf"
			if !math.IsInf(b, 1) {
				le = strconv.FormatFloat(b, 'g', -1, 64)
			}
			e.emit(withName(h.fam+"_bucket", labels.NewBuilder(h.labels).Set("le", le).Labels(nil)), h.ts, h.vals[i])
		}
		e.emit(withName(h.fam+"_sum", h.labels), h.ts, h.vals[len(h.bounds)])
		count := h.vals[len(h.bounds)+1]
		e.emit(withName(h.fam+"_count", h.labels), h.ts, count)
		if h.mem {
			a, b := w.window()
			g, end, hasEnd, restarted := growth(h.ts, count, a, b)
			e.truth.memGrowth += g
			if hasEnd {
				e.truth.memEnd += end
			}
			if restarted {
				e.truth.memRestarted++
			}
		}
	}
	gl := lbls(base...)
	e.emit(withName(famSampledActors, gl), gTimes, sampled)
	e.emit(withName(famActorWorkSet, gl), gTimes, actorWS)
}

func isStale(v float64) bool { return value.IsStaleNaN(v) }

// clusterJob writes the pool's worker states (re-exported by the collector
// for the ateapi) and the system node's cAdvisor node series.
func (e *emitter) clusterJob() {
	w := e.w
	times := w.scrapes(w.collPhase, w.telFrom, w.telTo)
	for si, state := range []string{"idle", "partial", "at_capacity"} {
		vs := make([]float64, len(times))
		for i, t := range times {
			vs[i] = float64(w.states[w.stepOf(t)][si])
		}
		e.emit(withName(famWorkers, lbls("job", "otel-collector", "instance", w.collector, "exported_instance", w.ateapi,
			"ate_workerpool_name", poolName, "ate_worker_state", state)), times, vs)
	}
	sys := w.scrapes(rngFor(w.p.Seed, "sysphase").Int64N(w.p.StepS), w.telFrom, w.telTo)
	e.cadvisor(cgroup{scope: "node", labels: lbls("job", "kubernetes-cadvisor", "instance", w.sysNode, "container", "node", "id", "/"),
		load: func(int) float64 { return 0.05 }, ws: func(int, int64) float64 { return 3.1 * (1 << 30) }, key: w.sysNode}, sys)
}

// window is the snapshot window (A, B] the export uses: the steady window
// shifted by lag_s // 2.
func (w *world) window() (int64, int64) {
	ss, se := w.steady()
	return ss + w.p.shift(), se + w.p.shift()
}

// growth applies the spec's per-series rule to one counter series: v_A is
// the instant value at a (latest sample within the 5-minute lookback, none
// if it is a staleness marker), growth sums next-prev, or next after a drop,
// over the finite samples in (a, b]; v_B likewise at b.
func growth(ts []int64, vs []float64, a, b int64) (g, end float64, hasEnd, restarted bool) {
	at := func(t int64) (float64, bool) {
		i := sort.Search(len(ts), func(i int) bool { return ts[i] > t })
		if i == 0 || ts[i-1] < t-300 || math.IsNaN(vs[i-1]) {
			return 0, false
		}
		return vs[i-1], true
	}
	prev, _ := at(a)
	for i, t := range ts {
		if t <= a || t > b || math.IsNaN(vs[i]) {
			continue
		}
		if vs[i] >= prev {
			g += vs[i] - prev
		} else {
			g += vs[i]
			restarted = true
		}
		prev = vs[i]
	}
	end, hasEnd = at(b)
	return g, end, hasEnd, restarted
}
