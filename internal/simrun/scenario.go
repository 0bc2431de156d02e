// Package simrun generates one benchmark run as Prometheus and the load
// generator would have recorded it, deterministically from a seed, together
// with the ground truth the generator used. Tests elsewhere derive their
// expected outputs from the Truth (never through PromQL) and compare them
// with what the code under test reads back from a real Prometheus loaded
// with the generated OpenMetrics file.
//
// The simulated world: worker nodes host worker pods (the `benchmark-ateom`
// pool), each pod hosts up to PodCapacity actors; the number of actors is the
// Locust user count (one actor per user). One atelet per worker node records
// checkpoints and restores of the actors on its node and exports them through
// an OpenTelemetry collector whose timestamps are late by lag_s//2. The
// ateapi exports the pool's worker states. cAdvisor (one kubelet per node)
// exports PSI, CPU, working-set and OOM series for every cgroup, including
// the distractors the spec excludes.
package simrun

import "sort"

// LoadPhase moves the Locust user count linearly from the previous level
// (0 at the start) to To over DurS seconds.
type LoadPhase struct {
	DurS int64
	To   int
}

// PoolScale sets the number of live worker pods at AtS seconds after the
// run start. New pods go to the node with the fewest pods (unless pinned);
// scale-downs remove the newest pods.
type PoolScale struct {
	AtS     int64
	Pods    int
	MicroVM bool // new pods run microVM sandboxes (memory-ranges files)
	// PinNode puts new pods on worker node Node instead of the emptiest.
	PinNode bool
	Node    int
}

// PodDeletion deletes the oldest live worker pod of Node at AtS; its
// replacement (new name and UID, same node) starts ReplaceAfterS later.
type PodDeletion struct {
	AtS           int64
	Node          int
	ReplaceAfterS int64
}

// Redeploy replaces the ateapi process at AtS. The new process starts DownS
// later; the collector keeps re-exporting the exited process's last values
// (frozen) until AtS+FrozenS.
type Redeploy struct {
	AtS, DownS, FrozenS int64
}

// AteletRestart restarts the atelet of Node at AtS (real time); it is down
// for DownS seconds and its counters start again from zero.
type AteletRestart struct {
	Node       int
	AtS, DownS int64
}

// DuplicateReplica is a second collector replica that re-exports the
// actor-stats gauges of Node's atelet (same exported_instance, different
// instance) between FromS and ToS. Only the gauges are duplicated: the spec
// merges duplicate gauge series by max, but defines no de-duplication for
// counters, so duplicating them would make the snapshot truth ambiguous.
type DuplicateReplica struct {
	Node       int
	FromS, ToS int64
}

// Gap is an interval [FromS, ToS) (seconds after the start, Prometheus
// time) in which no target was scraped (Prometheus itself was down).
type Gap struct {
	FromS, ToS int64
}

// OOMSpec is an OOM kill at AtS. Kind is "node" (global OOM, charged to the
// node's id="/" series), "pod" (the worker pod's cgroup, container="") or
// "container" (the worker container's cgroup). Node indexes the worker
// nodes; Node == -1 is the system node (only with Kind "node"). Pod is the
// index among the node's live worker pods at AtS.
type OOMSpec struct {
	AtS  int64
	Kind string
	Node int
	Pod  int
}

// Scenario is every knob of one simulated run. Offsets (…S fields) are
// seconds after the run start.
type Scenario struct {
	Name     string
	Seed     int64
	TestName string
	Tag      string
	Start    int64 // start_ts, Unix seconds

	Load    []LoadPhase
	LagS    int64 // lag_s written to run.json; atelet timestamps are late by LagS/2
	ScrapeS int64 // Prometheus scrape interval for every target
	PreS    int64 // cluster telemetry before the run start
	PostS   int64 // cluster telemetry after the run end

	NodePods     []int // worker pods per worker node at start
	PodCapacity  int   // actors per worker pod (--max-actors)
	MicroVMPods  []int // indexes of initial pods that run microVM sandboxes
	WorkersFromS int64 // > 0: the pool has zero workers until this offset
	PoolScales   []PoolScale
	PodDeletion  *PodDeletion

	NoAteMetrics  bool // no atelet, no ateapi: cAdvisor and Locust only
	AteapiDirect  bool // ateapi scraped directly: no exported_instance label
	UnrelatedPool bool
	Redeploy      *Redeploy

	AteletRestart    *AteletRestart
	DuplicateReplica *DuplicateReplica
	ScrapeGap        *Gap
	// StaleNaN ends a collector/ateapi series that stops being exported
	// while its target is still scraped with a NaN sample, the way a live
	// Prometheus writes a staleness marker (backfill has none).
	StaleNaN bool
	CgroupFS bool // cgroupfs naming (/kubepods/pod<uid>) instead of systemd
	OOMs     []OOMSpec
	// RestoreSlowdown multiplies every restore's duration (0 or 1: as
	// modelled), for runs whose configuration makes restores slower. The
	// random draws stay the same, so only the restore times change.
	RestoreSlowdown float64

	// Ladder drives load steps written to logs.txt, with the load
	// generator's, Postgres exporter's and three components' series.
	Ladder *LadderSpec

	NoHistory bool // do not write stats_history.csv
	// PhaseLogs writes the atelet and worker pod logs with the timing
	// breakdown records of the modelled checkpoints and restores (under
	// pod-logs/) and their expected phase rows (Truth.Phases). Off by
	// default: the other scenarios' files stay as they are.
	PhaseLogs bool
	// Lean skips the distractor cgroups and keeps no per-sample truth
	// (Truth.Exported and the observation lists stay empty): for "large".
	Lean bool
}

// Duration is the run length end_ts - start_ts.
func (s Scenario) Duration() int64 {
	var d int64
	for _, p := range s.Load {
		d += p.DurS
	}
	return d
}

// End is end_ts.
func (s Scenario) End() int64 { return s.Start + s.Duration() }

// Shift is lag_s // 2, how late atelet timestamps are.
func (s Scenario) Shift() int64 { return s.LagS / 2 }

func base(name string, seed, start int64) Scenario {
	return Scenario{
		Name: name, Seed: seed, TestName: "actor-density", Tag: "c0ffee1",
		Start: start, LagS: 70, ScrapeS: 15, PreS: 300, PostS: 300,
		NodePods: []int{2, 2, 2}, PodCapacity: 50,
	}
}

// Scenarios returns every named scenario, sorted by name.
func Scenarios() []Scenario {
	var out []Scenario

	steady := base("steady", 11, 1710237600) // 2024-03-12 10:00:00Z
	steady.Load = []LoadPhase{{600, 240}, {900, 240}, {25, 205}, {40, 205}, {20, 240}, {1100, 240}, {300, 0}}
	steady.MicroVMPods = []int{5}
	steady.OOMs = []OOMSpec{{AtS: 1700, Kind: "pod", Node: 1, Pod: 0}, {AtS: 2100, Kind: "container", Node: 2, Pod: 1}, {AtS: 2500, Kind: "node", Node: 0}}
	out = append(out, steady)

	nh := steady
	nh.Name, nh.Seed, nh.NoHistory = "no-history", 12, true
	out = append(out, nh)

	rd := base("redeploy", 21, 1710324000)
	rd.Load = []LoadPhase{{480, 260}, {2100, 260}, {240, 0}}
	rd.NodePods = []int{2, 2, 2}
	rd.MicroVMPods = []int{4}
	rd.PoolScales = []PoolScale{{AtS: 700, Pods: 9}, {AtS: 1900, Pods: 7}}
	rd.UnrelatedPool = true
	rd.Redeploy = &Redeploy{AtS: 1200, DownS: 25, FrozenS: 420}
	out = append(out, rd)

	ld := base("ladder", 31, 1710410400)
	ld.LagS = 90
	ld.Load = []LoadPhase{{60, 60}, {540, 60}, {60, 120}, {540, 120}, {60, 180}, {1500, 180}, {120, 0}}
	ld.NodePods = []int{2, 2, 1}
	ld.PodCapacity = 40
	ld.WorkersFromS = 40
	ld.PoolScales = []PoolScale{{AtS: 1500, Pods: 6, MicroVM: true, PinNode: true, Node: 0}}
	ld.PodDeletion = &PodDeletion{AtS: 2000, Node: 2, ReplaceAfterS: 150}
	ld.AteletRestart = &AteletRestart{Node: 1, AtS: 1800, DownS: 20}
	ld.DuplicateReplica = &DuplicateReplica{Node: 0, FromS: 1400, ToS: 2300}
	ld.ScrapeGap = &Gap{FromS: 2400, ToS: 2500} // under the 2-minute run-split gap
	ld.AteapiDirect = true
	ld.StaleNaN = true
	ld.CgroupFS = true
	ld.OOMs = []OOMSpec{{AtS: 1900, Kind: "pod", Node: 0, Pod: 1}, {AtS: 2200, Kind: "node", Node: -1}}
	out = append(out, ld)

	na := base("no-atelet", 41, 1710496800)
	na.Load = []LoadPhase{{300, 150}, {1500, 150}, {180, 0}}
	na.NoAteMetrics = true
	out = append(out, na)

	demo := base("demo", 51, 1710583200)
	demo.Load = []LoadPhase{{480, 300}, {1200, 300}, {30, 250}, {30, 300}, {1620, 300}, {240, 0}}
	demo.NodePods = []int{2, 2, 2, 2}
	demo.MicroVMPods = []int{6, 7}
	demo.PoolScales = []PoolScale{{AtS: 1500, Pods: 10}}
	demo.UnrelatedPool = true
	demo.Redeploy = &Redeploy{AtS: 2400, DownS: 20, FrozenS: 300}
	demo.AteletRestart = &AteletRestart{Node: 2, AtS: 2000, DownS: 15}
	demo.DuplicateReplica = &DuplicateReplica{Node: 1, FromS: 900, ToS: 1500}
	demo.StaleNaN = true
	demo.OOMs = []OOMSpec{{AtS: 1300, Kind: "container", Node: 3, Pod: 0}, {AtS: 2700, Kind: "pod", Node: 1, Pod: 1}}
	demo.PhaseLogs = true // the demo export reads them with --phase-logs (no cluster behind it)
	out = append(out, demo)

	out = append(out, Large(LargeParams{}))
	out = append(out, LadderSteps())

	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LargeParams sizes the "large" scenario; zero fields take the defaults
// (6 h, 10 s scrape, 500 worker pods).
type LargeParams struct {
	Hours   int
	ScrapeS int64
	Pods    int
}

// Large is the benchmark-sized run. It is lean (no distractor cgroups, no
// per-sample truth) and its generation streams to disk.
func Large(p LargeParams) Scenario {
	if p.Hours <= 0 {
		p.Hours = 6
	}
	if p.ScrapeS <= 0 {
		p.ScrapeS = 10
	}
	if p.Pods <= 0 {
		p.Pods = 500
	}
	s := base("large", 61, 1710669600)
	s.ScrapeS = p.ScrapeS
	nodes := (p.Pods + 19) / 20 // dense nodes: fewer atelets, so histograms do not dominate
	s.NodePods = make([]int, nodes)
	for i := 0; i < p.Pods; i++ {
		s.NodePods[i%nodes]++
	}
	s.PodCapacity = 40
	peak := p.Pods * 30
	total := int64(p.Hours) * 3600
	ramp := total / 8
	s.Load = []LoadPhase{{ramp, peak}, {total - 2*ramp, peak}, {ramp, 0}}
	s.Lean = true
	s.StaleNaN = true
	return s
}

// ByName finds a named scenario.
func ByName(name string) (Scenario, bool) {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// LadderSteps is a paced ladder of five steps (ladder-steps.md): the log
// has noise around the ladder lines, steps 3 and 5 keep the target
// (`unchanged`), one load-generator process restarts inside step 2,
// resume and pause fail in some steps, GetActorStatus fails only in
// step 4, step 3 is shorter than the trim, step 4 falls short of its
// target and step 5 has no end (no `Ladder complete`: the run time ran
// out).
func LadderSteps() Scenario {
	s := base("ladder-steps", 71, 1710756000) // 2024-03-18 10:00:00Z
	s.ScrapeS = 10
	s.PreS, s.PostS = 120, 120
	s.NodePods = []int{1, 1}
	s.PodCapacity = 40
	s.Load = []LoadPhase{{5, 10}, {300, 10}, {1, 20}, {299, 20}, {1, 30}, {19, 30}, {1, 40}, {299, 40}, {1, 50}, {124, 50}, {30, 0}}
	f := func(x float64) *float64 { return &x }
	s.Ladder = &LadderSpec{
		StartMs:          5123,
		LoadgenProcesses: 2,
		RestartS:         5 + 300 + 150,
		RestartDownS:     20,
		Steps: []LadderStepSpec{
			{Users: 10, TargetRPS: f(20), DurMs: 300_000, Achieved: 19.8, PauseFailS: 0.2, LatencyMS: 30},
			{Users: 20, TargetRPS: f(40), DurMs: 300_000, Achieved: 41, ResumeFailS: 0.1, LatencyMS: 34},
			{Users: 30, DurMs: 20_000, Achieved: 60, LatencyMS: 45},
			{Users: 40, TargetRPS: f(120), DurMs: 300_000, Achieved: 104.5, ResumeFailS: 0.4, PauseFailS: 1, StatusFailS: 0.3, LatencyMS: 120},
			{Users: 50, Achieved: 106, LatencyMS: 300},
		},
	}
	return s
}
