package simrun

import (
	"math"
	"sort"
)

// Sample is one point as written to the OpenMetrics file and stored by
// Prometheus: T is Unix seconds (backfilled timestamps are whole seconds).
type Sample struct {
	T int64
	V float64
}

// ExportedSeries is one series exactly as written (histograms are expanded
// into their _bucket, _sum and _count series). Labels exclude __name__ and
// never hold empty values (Prometheus does not store those).
type ExportedSeries struct {
	Name    string
	Labels  map[string]string
	Samples []Sample
}

// Key is a stable identity: name{k="v",...} with sorted label names.
func (e ExportedSeries) Key() string { return seriesKey(e.Name, e.Labels) }

// At is the instant-query value at t: the latest sample at or before t
// within lookback seconds (Prometheus's default is 300; 2.42 still finds a
// sample exactly lookback old). NaN samples are returned as they are
// (Prometheus returns them too); ok is false when no sample is in reach.
func (e ExportedSeries) At(t, lookback int64) (v float64, ok bool) {
	i := sort.Search(len(e.Samples), func(i int) bool { return e.Samples[i].T > t })
	if i == 0 {
		return 0, false
	}
	s := e.Samples[i-1]
	if s.T < t-lookback {
		return 0, false
	}
	return s.V, true
}

// Range returns the samples with from <= T <= to (Prometheus 2.42 range
// selectors are closed on both ends).
func (e ExportedSeries) Range(from, to int64) []Sample {
	lo := sort.Search(len(e.Samples), func(i int) bool { return e.Samples[i].T >= from })
	hi := sort.Search(len(e.Samples), func(i int) bool { return e.Samples[i].T > to })
	if lo >= hi {
		return nil
	}
	return e.Samples[lo:hi]
}

// UserSample is one Locust user-count sample (one per second).
type UserSample struct {
	T     int64
	Users float64
}

// NodeInfo describes one node. Instance is the cAdvisor `instance` label
// (the node name). Atelet is the atelet process's exported_instance (empty
// on the system node and without atelets).
type NodeInfo struct {
	Instance  string
	Worker    bool
	Atelet    string
	AteletPod string
}

// PodInfo describes one pod with cAdvisor series. Died is 0 for a pod that
// lived to the end of the telemetry. Born/Died are Unix seconds.
type PodInfo struct {
	Name, UID, Namespace, Container, Node string
	Worker                                bool
	MicroVM                               bool
	Capacity                              int
	Born, Died                            int64
}

// AteapiProcess is one ateapi process. Key is how the spec groups its
// series (exported_instance if set, else instance). Exit is 0 if it ran to
// the end; FrozenUntil is when the collector stopped re-exporting its last
// values after it exited (0 if never frozen).
type AteapiProcess struct {
	Key, Instance, ExportedInstance string
	Start, Exit, FrozenUntil        int64
}

// WorkerStates is one exported ate_workerpool_workers sample set of a pool
// from one process. Frozen marks re-exported values of an exited process.
type WorkerStates struct {
	T                         int64
	Process, Pool             string
	Idle, Partial, AtCapacity float64
	Frozen                    bool
}

// RateSegment is a constant counter rate (units per second) over [From, To).
type RateSegment struct {
	From, To int64
	Rate     float64
}

// StallSeries is the true stall rate (seconds stalled per second, the PSI
// fraction; multiply by 100 for percent) behind one cAdvisor pressure
// counter. Scope is node, system, pod, container or pause.
type StallSeries struct {
	Scope, Instance, Pod, ID, Container string
	Resource                            string // cpu, memory, io
	Kind                                string // waiting or stalled
	Segments                            []RateSegment
}

// Observation is one histogram observation recorded by an atelet. T is the
// real (unshifted) time of the event; in Prometheus it first shows in the
// collector sample with timestamp >= T + Shift. Family is
// atelet_snapshot_size_bytes, ate_actor_restore_duration_seconds or
// ate_actor_checkpoint_duration_seconds; Label is the file_name or the
// ate_snapshot_phase; Kind the ate_snapshot_kind (durations only).
type Observation struct {
	T            float64
	Atelet, Node string
	Family       string
	Label, Kind  string
	Value        float64
	// Lost: the atelet restarted before the collector scraped it, so the
	// observation never reached Prometheus.
	Lost bool
}

// GaugeSample is one exported atelet gauge sample: T is the Prometheus
// timestamp, RealT = T - Shift the time it describes.
type GaugeSample struct {
	T, RealT         int64
	Atelet, Instance string
	Value            float64
}

// WorkingSetSample is one exported working-set sample. Scope is node,
// worker (the worker container), atelet (the atelet container) or actor
// (the atelet's ate_actor_stats_memory_working_set_bytes, T shifted).
type WorkingSetSample struct {
	T                    int64
	Scope, Instance, Pod string
	Atelet               string
	Bytes                float64
}

// OOMKill is one OOM kill and the series it was charged to.
type OOMKill struct {
	T                 int64
	Kind              string // node, pod, container
	Instance, Pod, ID string
	Container         string
	WorkerNode        bool // the node hosted a live worker pod during the run
}

// OpStats is one stats.csv row.
type OpStats struct {
	Type, Name         string
	Requests, Failures int64
}

// Restart is an atelet restart: down from At until Up (real time).
type Restart struct {
	Atelet string
	At, Up int64
}

// Truth is the ground truth of one generated run.
type Truth struct {
	Scenario      string
	TestName, Tag string
	Start, End    int64
	LagS, Shift   int64
	ScrapeS       int64
	Users         []UserSample
	SteadyStart   int64
	SteadyEnd     int64
	PeakUsers     float64
	Nodes         []NodeInfo
	Pods          []PodInfo
	// Phases is the phase breakdown truth (nil unless Scenario.PhaseLogs).
	Phases            *PhaseTruth
	PoolName          string
	UnrelatedPoolName string // empty without an unrelated pool
	Collectors        []string
	AteapiProcesses   []AteapiProcess
	WorkerStates      []WorkerStates
	Stalls            []StallSeries
	Observations      []Observation
	SampledActors     []GaugeSample
	WorkingSets       []WorkingSetSample
	OOMKills          []OOMKill
	Restarts          []Restart
	Stats             []OpStats
	// Exported holds every series as written (nil for lean scenarios).
	Exported []ExportedSeries
	// Files written, by base name.
	Files []string
	// OMBytes is the size of metrics.om.
	OMBytes int64
	// Ladder is the expected ladder rows (nil without a ladder).
	Ladder *LadderTruth

	w0         int64
	nodeActors [][]int32
}

// Series returns the exported series named name whose labels include every
// pair of match (an empty value matches an absent label), in file order.
func (t *Truth) Series(name string, match map[string]string) []ExportedSeries {
	var out []ExportedSeries
	for _, e := range t.Exported {
		if e.Name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if e.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// Names returns the distinct exported metric names, sorted.
func (t *Truth) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range t.Exported {
		if !seen[e.Name] {
			seen[e.Name] = true
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Actors is the true number of actors on worker node instance at real
// time t (Unix seconds); 0 outside the simulated range.
func (t *Truth) Actors(instance string, at int64) int {
	for i, n := range t.Nodes {
		if n.Instance != instance || i >= len(t.nodeActors) {
			continue
		}
		k := at - t.w0
		if k < 0 || k >= int64(len(t.nodeActors[i])) {
			return 0
		}
		return int(t.nodeActors[i][k])
	}
	return 0
}

// UsersAt is the Locust user count at t (0 outside the run).
func (t *Truth) UsersAt(at int64) float64 {
	if len(t.Users) == 0 || at < t.Users[0].T || at > t.Users[len(t.Users)-1].T {
		return 0
	}
	return t.Users[at-t.Users[0].T].Users
}

// LiveProcess is the key of the ateapi process that was really running at
// t, or "" when none was (between an exit and the next start).
func (t *Truth) LiveProcess(at int64) string {
	for _, p := range t.AteapiProcesses {
		if at >= p.Start && (p.Exit == 0 || at < p.Exit) {
			return p.Key
		}
	}
	return ""
}

// SteadyWindow applies the spec's steady-state rule (runs.md) to samples in
// file order. No samples or a peak <= 0 gives [start, end].
func SteadyWindow(samples []UserSample, start, end int64) (steadyStart, steadyEnd int64, peak float64) {
	peak = math.Inf(-1)
	for _, s := range samples {
		if s.Users > peak {
			peak = s.Users
		}
	}
	if len(samples) == 0 || peak <= 0 {
		if len(samples) == 0 {
			peak = 0
		}
		return start, end, peak
	}
	first, last := int64(0), int64(0)
	found := false
	for _, s := range samples {
		if s.Users >= 0.9*peak {
			if !found {
				first, found = s.T, true
			}
			last = s.T
		}
	}
	if !found || first < start || first > end {
		return start, end, peak
	}
	e := last
	if e < first {
		e = first
	}
	if e > end {
		e = end
	}
	return first, e, peak
}
