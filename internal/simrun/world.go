package simrun

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
)

// Selector defaults of the spec, used for the names the simulator writes.
const (
	PoolName        = "benchmark-ateom"
	UnrelatedPool   = "interactive-ateom"
	WorkerNamespace = "benchmark-workloads"
	WorkerContainer = "ateom"
	AteletNamespace = "ate-system"
	AteletContainer = "atelet"
)

const never = math.MaxInt64

// rngFor derives an independent deterministic stream for one purpose, so
// each series can be generated on its own (streaming) with the same values.
func rngFor(seed int64, parts ...any) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprint(h, p, "\x00")
	}
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64())) // #nosec G115 G404 -- deterministic seeded randomness by design (the seed's bits as they are)
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
	if lambda > 40 {
		v := int(math.Round(lambda + math.Sqrt(lambda)*r.NormFloat64()))
		if v < 0 {
			return 0
		}
		return v
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

type wnode struct {
	name      string
	worker    bool
	ip        string // pod network prefix for pods on the node
	atelet    string // exported_instance
	ateletPod string
}

type wpod struct {
	name, uid, ns, container, image string
	node                            int
	worker, microVM                 bool
	qos                             string // guaranteed or burstable
	capacity                        int
	born, died                      int64
	cid, pauseID                    string
}

// world is the simulated cluster: compact per-second state from which
// every series is generated on demand.
type world struct {
	sc       Scenario
	w0, n    int64 // first simulated second, number of seconds
	start    int64
	end      int64
	shift    int64
	users    []int32 // per second of the run, index t-start, start..end inclusive
	nodes    []wnode // worker nodes, then the system node
	sysNode  int
	pods     []wpod // worker pods first (by creation), then the others
	nWorker  int
	actors   [][]int16 // per worker pod, per second from w0
	nodeAct  [][]int32 // per node, per second from w0
	collectA string    // collector replica instances
	collectB string
	ateapi   []AteapiProcess
	restart  *Restart
}

func (w *world) idx(t int64) int64 { return t - w.w0 }

func (w *world) usersAt(t int64) int {
	if t < w.start || t > w.end {
		return 0
	}
	return int(w.users[t-w.start])
}

func (w *world) podActors(p int, t int64) int {
	k := w.idx(t)
	if p >= w.nWorker || k < 0 || k >= w.n {
		return 0
	}
	return int(w.actors[p][k])
}

func (w *world) nodeActors(n int, t int64) int {
	k := w.idx(t)
	if k < 0 || k >= w.n || n >= len(w.nodeAct) {
		return 0
	}
	return int(w.nodeAct[n][k])
}

func (p *wpod) alive(t int64) bool { return t >= p.born && t < p.died }

// ateletUp reports whether node n's atelet process runs at real time t.
func (w *world) ateletUp(n int, t int64) bool {
	if w.sc.NoAteMetrics || !w.nodes[n].worker {
		return false
	}
	if r := w.sc.AteletRestart; r != nil && n == r.Node {
		at := w.start + r.AtS
		if t >= at && t < at+r.DownS {
			return false
		}
	}
	return true
}

// ateletEpoch is the time the atelet's counters last started at or before t.
func (w *world) ateletEpoch(n int, t int64) int64 {
	if r := w.sc.AteletRestart; r != nil && n == r.Node {
		up := w.start + r.AtS + r.DownS
		if t >= up {
			return up
		}
	}
	return math.MinInt64
}

func loadCurve(sc Scenario) []int32 {
	d := sc.Duration()
	out := make([]int32, d+1)
	level, off := 0.0, int64(0)
	for _, ph := range sc.Load {
		for k := int64(1); k <= ph.DurS; k++ {
			v := level + (float64(ph.To)-level)*float64(k)/float64(ph.DurS)
			out[off+k] = int32(math.Round(v))
		}
		level = float64(ph.To)
		off += ph.DurS
	}
	return out
}

func newWorld(sc Scenario) *world {
	w := &world{sc: sc, start: sc.Start, end: sc.End(), shift: sc.Shift()}
	w.w0 = sc.Start - sc.PreS - w.shift - 2*sc.ScrapeS
	w.n = w.end + sc.PostS + w.shift + 2*sc.ScrapeS - w.w0
	w.users = loadCurve(sc)
	r := rngFor(sc.Seed, "topology")

	pool := randHex(r, 8)
	for i := range sc.NodePods {
		w.nodes = append(w.nodes, wnode{
			name:   fmt.Sprintf("gke-density-bench-pool-%s-%s", pool, randName(r, 4)),
			worker: true,
			ip:     fmt.Sprintf("10.60.%d.", 2+i),
		})
	}
	w.sysNode = len(w.nodes)
	w.nodes = append(w.nodes, wnode{name: fmt.Sprintf("gke-density-system-pool-%s-%s", randHex(r, 8), randName(r, 4)), ip: fmt.Sprintf("10.60.%d.", 2+len(sc.NodePods))})
	sysIP := w.nodes[w.sysNode].ip
	w.collectA = fmt.Sprintf("%s%d:8889", sysIP, 10+r.IntN(50))
	w.collectB = fmt.Sprintf("%s%d:8889", sysIP, 70+r.IntN(50))

	// Worker pods: initial ones, then scale events and the deletion, in time order.
	rs := randHex(r, 9)[:9]
	newWorker := func(node int, born int64, micro bool) {
		img := "europe-docker.pkg.dev/substrate/ate/ateom-gvisor:v0.42.1"
		if micro {
			img = "europe-docker.pkg.dev/substrate/ate/ateom-microvm:v0.42.1"
		}
		w.pods = append(w.pods, wpod{
			name: "benchmark-ateom-" + rs + "-" + randName(r, 5), uid: randUID(r),
			ns: WorkerNamespace, container: WorkerContainer, image: img, node: node,
			worker: true, microVM: micro, qos: "guaranteed", capacity: sc.PodCapacity,
			born: born, died: never, cid: randHex(r, 64), pauseID: randHex(r, 64),
		})
	}
	initBorn := w.w0
	if sc.WorkersFromS > 0 {
		initBorn = sc.Start + sc.WorkersFromS
	}
	micro := map[int]bool{}
	for _, i := range sc.MicroVMPods {
		micro[i] = true
	}
	k := 0
	for rnd := 0; ; rnd++ {
		placed := false
		for n, c := range sc.NodePods {
			if rnd < c {
				newWorker(n, initBorn, micro[k])
				k++
				placed = true
			}
		}
		if !placed {
			break
		}
	}
	type ev struct {
		at    int64
		scale *PoolScale
		del   *PodDeletion
	}
	var evs []ev
	for i := range sc.PoolScales {
		evs = append(evs, ev{at: sc.Start + sc.PoolScales[i].AtS, scale: &sc.PoolScales[i]})
	}
	if d := sc.PodDeletion; d != nil {
		evs = append(evs, ev{at: sc.Start + d.AtS, del: d})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	aliveAt := func(t int64) []int {
		var out []int
		for i := range w.pods {
			if w.pods[i].alive(t) {
				out = append(out, i)
			}
		}
		return out
	}
	for _, e := range evs {
		alive := aliveAt(e.at)
		switch {
		case e.scale != nil:
			for len(alive) < e.scale.Pods {
				counts := make([]int, len(sc.NodePods))
				for _, i := range alive {
					counts[w.pods[i].node]++
				}
				best := 0
				for n := range counts {
					if counts[n] < counts[best] {
						best = n
					}
				}
				if e.scale.PinNode {
					best = e.scale.Node
				}
				newWorker(best, e.at, e.scale.MicroVM)
				alive = append(alive, len(w.pods)-1)
			}
			for len(alive) > e.scale.Pods {
				last := alive[len(alive)-1]
				w.pods[last].died = e.at
				alive = alive[:len(alive)-1]
			}
		case e.del != nil:
			for _, i := range alive {
				if w.pods[i].node == e.del.Node {
					w.pods[i].died = e.at
					newWorker(e.del.Node, e.at+e.del.ReplaceAfterS, w.pods[i].microVM)
					break
				}
			}
		}
	}
	w.nWorker = len(w.pods)

	// Other pods with cAdvisor series.
	other := func(node int, ns, name, container, image string) {
		w.pods = append(w.pods, wpod{name: name, uid: randUID(r), ns: ns, container: container, image: image,
			node: node, qos: "burstable", born: w.w0, died: never, cid: randHex(r, 64), pauseID: randHex(r, 64)})
	}
	if !sc.NoAteMetrics {
		for n := range sc.NodePods {
			name := "atelet-" + randName(r, 5)
			w.nodes[n].ateletPod = name
			w.nodes[n].atelet = fmt.Sprintf("%s%d:9464", w.nodes[n].ip, 2+r.IntN(200))
			other(n, AteletNamespace, name, AteletContainer, "europe-docker.pkg.dev/substrate/ate/atelet:v0.42.1")
		}
		other(w.sysNode, AteletNamespace, "ateapi-"+randHex(r, 9)+"-"+randName(r, 5), "ateapi", "europe-docker.pkg.dev/substrate/ate/ateapi:v0.42.1")
	}
	other(w.sysNode, WorkerNamespace, "benchmark-locust-master-"+randHex(r, 9)+"-"+randName(r, 5), "locust", "docker.io/locustio/locust:2.31.8")
	other(0, WorkerNamespace, "benchmark-locust-worker-"+randHex(r, 9)+"-"+randName(r, 5), "locust", "docker.io/locustio/locust:2.31.8")
	other(w.sysNode, "monitoring", "otel-collector-"+randHex(r, 9)+"-"+randName(r, 5), "otelcol", "otel/opentelemetry-collector-contrib:0.112.0")

	// ateapi processes.
	if !sc.NoAteMetrics {
		mk := func(start int64) AteapiProcess {
			ip := fmt.Sprintf("%s%d:8080", sysIP, 120+r.IntN(100))
			if sc.AteapiDirect {
				return AteapiProcess{Key: ip, Instance: ip, Start: start}
			}
			return AteapiProcess{Key: ip, Instance: w.collectA, ExportedInstance: ip, Start: start}
		}
		p1 := mk(w.w0)
		if d := sc.Redeploy; d != nil {
			p1.Exit = sc.Start + d.AtS
			p1.FrozenUntil = p1.Exit + d.FrozenS
			p2 := mk(p1.Exit + d.DownS)
			for p2.Key == p1.Key {
				p2 = mk(p1.Exit + d.DownS)
			}
			w.ateapi = []AteapiProcess{p1, p2}
		} else {
			w.ateapi = []AteapiProcess{p1}
		}
	}
	if rr := sc.AteletRestart; rr != nil && !sc.NoAteMetrics {
		w.restart = &Restart{Atelet: w.nodes[rr.Node].atelet, At: sc.Start + rr.AtS, Up: sc.Start + rr.AtS + rr.DownS}
	}

	w.allocate()
	return w
}

// allocate places one actor per user on the live worker pods, second by
// second. The scheduler prefers pods that already host actors (packing), so
// the pool shows idle, partial and full workers at once. Actors of a pod
// that dies are placed again elsewhere.
func (w *world) allocate() {
	r := rngFor(w.sc.Seed, "allocate")
	w.actors = make([][]int16, w.nWorker)
	for i := range w.actors {
		w.actors[i] = make([]int16, w.n)
	}
	cur := make([]int, w.nWorker)
	var alive, room, busy []int
	for k := int64(0); k < w.n; k++ {
		t := w.w0 + k
		alive = alive[:0]
		placed, capTotal := 0, 0
		for i := 0; i < w.nWorker; i++ {
			if w.pods[i].alive(t) {
				alive = append(alive, i)
				placed += cur[i]
				capTotal += w.pods[i].capacity
			} else {
				cur[i] = 0
			}
		}
		target := w.usersAt(t)
		if target > capTotal {
			target = capTotal
		}
		for placed < target {
			room, busy = room[:0], busy[:0]
			for _, i := range alive {
				if cur[i] < w.pods[i].capacity {
					room = append(room, i)
					if cur[i] > 0 {
						busy = append(busy, i)
					}
				}
			}
			pick := room[r.IntN(len(room))]
			switch u := r.Float64(); {
			case len(busy) > 0 && u < 0.5: // bin-packing: the fullest pod with room
				pick = busy[0]
				for _, i := range busy {
					if cur[i] > cur[pick] {
						pick = i
					}
				}
			case len(busy) > 0 && u < 0.75:
				pick = busy[r.IntN(len(busy))]
			}
			cur[pick]++
			placed++
		}
		for placed > target {
			j := r.IntN(placed)
			for _, i := range alive {
				if j < cur[i] {
					cur[i]--
					break
				}
				j -= cur[i]
			}
			placed--
		}
		for _, i := range alive {
			w.actors[i][k] = int16(cur[i]) // #nosec G115 -- at most the pod capacity (validate bounds it far below 32,767)
		}
	}
	w.nodeAct = make([][]int32, len(w.nodes))
	for n := range w.nodes {
		w.nodeAct[n] = make([]int32, w.n)
	}
	for i := 0; i < w.nWorker; i++ {
		row := w.nodeAct[w.pods[i].node]
		for k, v := range w.actors[i] {
			row[k] += int32(v)
		}
	}
}

// poolStates counts idle, partial and full worker pods at t.
func (w *world) poolStates(t int64) (idle, partial, full int) {
	for i := 0; i < w.nWorker; i++ {
		p := &w.pods[i]
		if !p.alive(t) {
			continue
		}
		switch a := w.podActors(i, t); {
		case a == 0:
			idle++
		case a >= p.capacity:
			full++
		default:
			partial++
		}
	}
	return
}

// perActorBytes is the mean working set of one actor at t: actors grow as
// the run goes on.
func (w *world) perActorBytes(t int64) float64 {
	f := float64(t-w.start) / float64(w.end-w.start)
	f = math.Max(0, math.Min(1, f))
	return (74 + 46*f) * (1 << 20)
}

// event is one checkpoint or restore on a pod's actor.
type event struct {
	t          float64 // real time
	pod        int
	checkpoint bool
	incr       bool
	memBytes   float64 // memory image
	metaBytes  float64 // the other file
	total      float64 // seconds
	phase      float64 // upload (checkpoint) or download (restore) seconds
}

// nodeEvents generates the checkpoint/restore events of node n's actors in
// time order (deterministic per pod, so it can be regenerated while
// streaming). Events while the atelet is down are lost.
func (w *world) nodeEvents(n int) []event {
	var out []event
	for i := 0; i < w.nWorker; i++ {
		p := &w.pods[i]
		if p.node != n {
			continue
		}
		r := rngFor(w.sc.Seed, "events", i)
		prev := 0
		for k := int64(0); k < w.n; k++ {
			t := w.w0 + k
			a := int(w.actors[i][k])
			nc := poisson(r, float64(a)/600)
			nr := poisson(r, float64(a)/700)
			if d := a - prev; d > 0 {
				nr += d // first resume / re-homing restores the actor
			} else if d < 0 && p.alive(t) {
				nc += -d // a user going away suspends (checkpoints) its actor
			}
			prev = a
			for j := 0; j < nc+nr; j++ {
				e := event{t: float64(t) + r.Float64(), pod: i, checkpoint: j < nc, incr: r.Float64() < 0.55}
				ws := w.perActorBytes(t) * lognormal(r, 0.18)
				if e.incr {
					ws *= 0.22 + 0.2*r.Float64()
				}
				e.memBytes = math.Floor(ws*(0.86+0.12*r.Float64())) + 1
				if p.microVM {
					e.metaBytes = math.Floor(60*1024 + 150*1024*r.Float64())
				} else {
					e.metaBytes = math.Floor(2.5*(1<<20) + 9*(1<<20)*r.Float64())
				}
				if e.checkpoint {
					tp := (140 + 260*r.Float64()) * (1 << 20)
					e.total = (0.12 + e.memBytes/tp) * lognormal(r, 0.3)
					e.phase = e.total * (0.35 + 0.35*r.Float64())
				} else {
					tp := (320 + 600*r.Float64()) * (1 << 20)
					e.total = (0.06 + e.memBytes/tp) * lognormal(r, 0.35)
					e.phase = e.total * (0.25 + 0.4*r.Float64())
					if f := w.sc.RestoreSlowdown; f > 0 {
						e.total, e.phase = e.total*f, e.phase*f
					}
				}
				if r.Float64() < 0.0015 { // a stuck operation beyond the 60 s top bucket
					e.total = 61 + 40*r.Float64()
					e.phase = e.total * 0.9
				}
				if !w.ateletUp(n, int64(math.Floor(e.t))) {
					continue
				}
				out = append(out, e)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out
}
