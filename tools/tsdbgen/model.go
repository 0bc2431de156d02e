package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Names and selector defaults, the same as internal/simrun writes (gen.go,
// world.go) and the spec's selectors read.
const (
	poolName        = "benchmark-ateom"
	workerNamespace = "benchmark-workloads"
	workerContainer = "ateom"
	ateletNamespace = "ate-system"
	ateletContainer = "atelet"

	famWorkers       = "ate_workerpool_workers"
	famCPUUsage      = "container_cpu_usage_seconds_total"
	famWorkingSet    = "container_memory_working_set_bytes"
	famOOM           = "container_oom_events_total"
	famSnapshotSize  = "atelet_snapshot_size_bytes"
	famRestore       = "ate_actor_restore_duration_seconds"
	famCheckpoint    = "ate_actor_checkpoint_duration_seconds"
	famSampledActors = "ate_actor_stats_sampled_actors"
	famActorWorkSet  = "ate_actor_stats_memory_working_set_bytes"
)

func pressureFamily(res, kind string) string {
	return "container_pressure_" + res + "_" + kind + "_seconds_total"
}

var (
	sizeBounds     = makeSizeBounds()
	durationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, math.Inf(1)}
)

func makeSizeBounds() []float64 {
	var b []float64
	for k := 0; k <= 12; k++ {
		b = append(b, float64(int64(1)<<(20+k)))
	}
	return append(b, math.Inf(1))
}

// Params size the simulated cluster. The defaults are the scale run:
// 500 nodes, 5,000 worker pods, 24 hours at a 10 s scrape, 20 atelets
// restarting inside the steady window.
type Params struct {
	Nodes    int     // worker nodes (one atelet each)
	Pods     int     // worker pods, spread evenly over the nodes
	Hours    float64 // run length (start_ts to end_ts)
	StepS    int64   // scrape interval of every target
	Restarts int     // atelets that restart inside the steady window
	Capacity int     // actors per worker pod
	Start    int64   // start_ts, Unix seconds
	LagS     int64   // atelet lag; atelet timestamps are late by LagS/2
	PreS     int64   // telemetry before the start
	PostS    int64   // and after the end
	Seed     uint64
}

// DefaultParams is the scale scenario.
func DefaultParams() Params {
	return Params{Nodes: 500, Pods: 5000, Hours: 24, StepS: 10, Restarts: 20, Capacity: 40,
		Start: 1710756000, LagS: 70, PreS: 300, PostS: 300, Seed: 71}
}

func (p Params) validate() error {
	switch {
	case p.Nodes <= 0 || p.Pods <= 0:
		return errors.New("need at least one node and one pod")
	case p.Pods < p.Nodes:
		return errors.New("need at least one worker pod per node")
	case p.Hours <= 0 || p.StepS <= 0:
		return errors.New("hours and step must be positive")
	case p.Restarts < 0 || p.Restarts > p.Nodes:
		return fmt.Errorf("restarts must be in 0..%d", p.Nodes)
	case p.Capacity <= 0 || p.Capacity > 32767:
		return errors.New("capacity must be in 1..32767")
	case p.LagS < 0 || p.PreS < 0 || p.PostS < 0:
		return errors.New("lag, pre and post must not be negative")
	}
	return nil
}

func (p Params) duration() int64 { return int64(p.Hours * 3600) }
func (p Params) end() int64      { return p.Start + p.duration() }
func (p Params) shift() int64    { return p.LagS / 2 }

// rngFor derives an independent deterministic stream for one purpose, so
// series can be generated in any order and in parallel with the same values.
func rngFor(seed uint64, parts ...any) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprint(h, p, "\x00")
	}
	return rand.New(rand.NewPCG(seed, h.Sum64())) // #nosec G404 -- deterministic seeded randomness by design, not for security
}

func randName(r *rand.Rand, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func randHex(r *rand.Rand, n int) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hexd[r.IntN(16)]
	}
	return string(b)
}

func randUID(r *rand.Rand) string {
	return randHex(r, 8) + "-" + randHex(r, 4) + "-4" + randHex(r, 3) + "-" + string("89ab"[r.IntN(4)]) + randHex(r, 3) + "-" + randHex(r, 12)
}

func lognormal(r *rand.Rand, sigma float64) float64 { return math.Exp(sigma * r.NormFloat64()) }

func poisson(r *rand.Rand, lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	if lambda > 30 {
		return max(0, int(math.Round(lambda+math.Sqrt(lambda)*r.NormFloat64())))
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

type node struct {
	name      string // cAdvisor instance
	atelet    string // exported_instance of its atelet
	ateletPod string
	ateletUID string
	microVM   bool  // its pods run microVM sandboxes (memory-ranges files)
	phase     int64 // cAdvisor scrape phase
	restartAt int64 // real time the atelet goes down (0: never)
	downS     int64
	pods      []int
}

type pod struct {
	name, uid, cid string
	node           int
	oomAt          int64  // a kill charged to this pod's cgroup (0: none)
	oomScope       string // "pod" or "container"
}

// world is the simulated cluster on a grid of StepS-second steps of real
// time from telFrom: per-pod actor counts per step, from which every
// series is derived.
type world struct {
	p              Params
	telFrom, telTo int64 // telemetry window (cAdvisor); the collector runs to telTo+shift
	steps          int
	users          []int32   // per step
	actors         [][]int16 // per pod, per step
	nodeAct        [][]int32 // per node, per step
	states         [][3]int32
	nodes          []node
	sysNode        string
	pods           []pod
	collector      string
	collPhase      int64
	ateapi         string
	nodeOOMs       map[int]int64 // node index -> kill time
}

func (w *world) stepOf(t int64) int {
	k := int((t - w.telFrom) / w.p.StepS)
	return min(max(k, 0), w.steps-1)
}

// usersAt is the Locust user count: a ramp over the first eighth, a
// plateau, a ramp down over the last eighth (like simrun.Large).
func (w *world) usersAt(t int64) int {
	p := w.p
	if t < p.Start || t > p.end() {
		return 0
	}
	peak := float64(p.Pods * p.Capacity * 3 / 4)
	d := float64(p.duration())
	ramp := d / 8
	x := float64(t - p.Start)
	switch {
	case x < ramp:
		return int(math.Round(peak * x / ramp))
	case x > d-ramp:
		return int(math.Round(peak * (d - x) / ramp))
	}
	return int(peak)
}

func newWorld(p Params) *world {
	w := &world{p: p}
	w.telFrom = p.Start - p.PreS
	w.telTo = p.end() + p.PostS
	w.steps = int((w.telTo+p.shift()+p.StepS-w.telFrom)/p.StepS) + 1
	r := rngFor(p.Seed, "topology")
	pool := randHex(r, 8)
	for i := 0; i < p.Nodes; i++ {
		ip := fmt.Sprintf("10.%d.%d.", 60+i/250, 2+i%250)
		w.nodes = append(w.nodes, node{
			name:      fmt.Sprintf("gke-density-bench-pool-%s-%s%d", pool, randName(r, 4), i),
			atelet:    fmt.Sprintf("%s%d:9464", ip, 2+r.IntN(200)),
			ateletPod: "atelet-" + randName(r, 5),
			ateletUID: randUID(r),
			microVM:   i%10 == 9,
			phase:     r.Int64N(p.StepS),
		})
	}
	w.sysNode = fmt.Sprintf("gke-density-system-pool-%s-%s", randHex(r, 8), randName(r, 4))
	w.collector = fmt.Sprintf("10.%d.0.%d:8889", 60+p.Nodes/250+1, 10+r.IntN(50))
	w.collPhase = r.Int64N(p.StepS)
	w.ateapi = fmt.Sprintf("10.%d.0.%d:8080", 60+p.Nodes/250+1, 120+r.IntN(100))
	rs := randHex(r, 9)
	for i := 0; i < p.Pods; i++ {
		n := i % p.Nodes
		w.pods = append(w.pods, pod{name: "benchmark-ateom-" + rs + "-" + randName(r, 5) + fmt.Sprint(i),
			uid: randUID(r), cid: randHex(r, 64), node: n})
		w.nodes[n].pods = append(w.nodes[n].pods, i)
	}

	// Steady window (the Locust rows written are every StepS seconds).
	ss, se := w.steady()
	// Restarts: spread over the steady window, each on a different node.
	rr := rngFor(p.Seed, "restarts")
	perm := rr.Perm(p.Nodes)
	for i := 0; i < p.Restarts; i++ {
		n := perm[i]
		at := ss + (se-ss)*int64(i+1)/int64(p.Restarts+1) + rr.Int64N(p.StepS)
		w.nodes[n].restartAt = at
		w.nodes[n].downS = 15 + rr.Int64N(16)
	}
	// OOM kills: a few pod and container kills, two node kills.
	ro := rngFor(p.Seed, "oom")
	for i := 0; i < 8 && i < p.Pods; i++ {
		pi := ro.IntN(p.Pods)
		w.pods[pi].oomAt = p.Start + ro.Int64N(p.duration())
		w.pods[pi].oomScope = []string{"pod", "container"}[i%2]
	}
	w.nodeOOMs = map[int]int64{}
	for i := 0; i < 2; i++ {
		w.nodeOOMs[ro.IntN(p.Nodes)] = p.Start + ro.Int64N(p.duration())
	}
	w.allocate()
	return w
}

// steady is the steady-state window the export derives from the
// stats_history.csv this tool writes (runs.md: users >= 0.9 * peak).
func (w *world) steady() (int64, int64) {
	peak, first, last := 0, int64(0), int64(0)
	for t := w.p.Start; t <= w.p.end(); t += w.p.StepS {
		peak = max(peak, w.usersAt(t))
	}
	if peak <= 0 {
		return w.p.Start, w.p.end()
	}
	for t := w.p.Start; t <= w.p.end(); t += w.p.StepS {
		if float64(w.usersAt(t)) >= 0.9*float64(peak) {
			if first == 0 {
				first = t
			}
			last = t
		}
	}
	return first, last
}

// allocate places the users on pods per step: 60 % bin-packed onto pods in
// a fixed order (they show as at_capacity), the rest spread by random
// weights over the other pods (partial), some pods left idle.
func (w *world) allocate() {
	p := w.p
	r := rngFor(p.Seed, "allocate")
	order := r.Perm(p.Pods)
	weight := make([]float64, p.Pods)
	period := make([]float64, p.Pods)
	phase := make([]float64, p.Pods)
	for i := range weight {
		period[i] = 60 + 300*r.Float64() // steps: a slow wobble, not per-step noise
		phase[i] = 2 * math.Pi * r.Float64()
		if r.Float64() < 0.08 {
			continue // mostly idle pods
		}
		weight[i] = 0.3 + r.Float64()
	}
	w.actors = make([][]int16, p.Pods)
	for i := range w.actors {
		w.actors[i] = make([]int16, w.steps)
	}
	w.users = make([]int32, w.steps)
	w.states = make([][3]int32, w.steps)
	capTotal := p.Pods * p.Capacity
	for k := 0; k < w.steps; k++ {
		t := w.telFrom + int64(k)*p.StepS
		u := min(w.usersAt(t), capTotal)
		w.users[k] = int32(u) // #nosec G115 -- users are capped at pods x capacity, far below 2^31
		packed := u * 6 / 10
		full := packed / p.Capacity
		rest := u - full*p.Capacity
		var wsum float64
		for _, i := range order[full:] {
			wsum += weight[i]
		}
		for j, i := range order {
			var a int
			switch {
			case j < full:
				a = p.Capacity
			case wsum > 0:
				a = int(float64(rest)*weight[i]/wsum*(1+0.1*math.Sin(float64(k)/period[i]*2*math.Pi+phase[i])) + 0.5)
				a = min(a, p.Capacity-1)
			}
			w.actors[i][k] = int16(a)
			switch {
			case a == 0:
				w.states[k][0]++
			case a >= p.Capacity:
				w.states[k][2]++
			default:
				w.states[k][1]++
			}
		}
	}
	w.nodeAct = make([][]int32, p.Nodes)
	for n := range w.nodes {
		row := make([]int32, w.steps)
		for _, i := range w.nodes[n].pods {
			for k, a := range w.actors[i] {
				row[k] += int32(a)
			}
		}
		w.nodeAct[n] = row
	}
}

// perActorBytes grows over the run (actors accumulate state).
func (w *world) perActorBytes(t int64) float64 {
	f := float64(t-w.p.Start) / float64(w.p.duration())
	f = math.Max(0, math.Min(1, f))
	return (74 + 46*f) * (1 << 20)
}

// ateletUp reports whether node n's atelet runs at real time t.
func (w *world) ateletUp(n int, t int64) bool {
	nd := &w.nodes[n]
	return nd.restartAt == 0 || t < nd.restartAt || t >= nd.restartAt+nd.downS
}

// scrapes lists a target's scrape times in [from, to] with the given phase.
func (w *world) scrapes(phase, from, to int64) []int64 {
	s := w.p.StepS
	t := from - ((from%s)+s)%s + phase
	if t < from {
		t += s
	}
	out := make([]int64, 0, (to-t)/s+1)
	for ; t <= to; t += s {
		out = append(out, t)
	}
	return out
}
