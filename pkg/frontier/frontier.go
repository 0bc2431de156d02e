// Package frontier computes the trial_summary row of cluster-facts.md: the
// cluster facts as strings, the density frontiers (actors per node, per
// vCPU, per GiB of RAM, per pod) and the failure ratios. Pure functions of
// their inputs: the caller reads the cluster (pkg/cluster) and the Locust
// files (pkg/runs).
//
// What the frontiers assume, to be said wherever they are shown: actors =
// users × actors-per-user, all alive at once; the denominators are read
// once, after the run, so a cluster that autoscaled mid-run is measured at
// its final size.
package frontier

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// Inputs is everything a trial_summary row is computed from.
type Inputs struct {
	Facts clusterfacts.Facts
	// ObservedUsers are stats_history.csv's observed user counts
	// (runs.History.Observed); values <= 0 or not finite are ignored.
	ObservedUsers []float64
	// Users is the -u user count, used only when nothing was observed
	// (0: not given).
	Users float64
	// ActorsPerUser is --actors-per-user (0: not given, meaning 1).
	ActorsPerUser float64
	// Stats are stats.csv's rows (runs.ReadStatsCSV); StatsErr, when set,
	// is why stats.csv could not be read.
	Stats    []runs.OperationStats
	StatsErr error
	// Metadata is ParseMetadata's result.
	Metadata Metadata
	// RunStart, RunEnd are the run window in Unix seconds.
	RunStart, RunEnd int64
}

// Measurement is one key of the row; a nil Value is null.
type Measurement struct {
	Key   string
	Value *string
}

// Measurements are the row's measurements in the spec's key order.
type Measurements []Measurement

// Get returns the value of key and whether the key is present.
func (m Measurements) Get(key string) (*string, bool) {
	for _, x := range m {
		if x.Key == key {
			return x.Value, true
		}
	}
	return nil, false
}

// Object is the measurements in pkg/artifact's ordered model.
func (m Measurements) Object() artifact.Object {
	o := make(artifact.Object, 0, len(m))
	for _, x := range m {
		var v any // untyped nil: null
		if x.Value != nil {
			v = *x.Value
		}
		o = append(o, artifact.Field{Key: x.Key, Value: v})
	}
	return o
}

// Row is the stats.jsonl trial_summary row; its timestamp is the run start
// as YYYY-MM-DDTHH:MM:SSZ, the same as the server_summary row's.
func Row(m Measurements, runStart int64, tag, testName string) artifact.Row {
	return artifact.Row{
		Timestamp:    time.Unix(runStart, 0).UTC().Format("2006-01-02T15:04:05Z"),
		Tag:          tag,
		TestName:     testName,
		Metric:       artifact.MetricTrialSummary,
		Measurements: m.Object(),
	}
}

// Notice says why a computed measurement is null (facts that are null
// carry pkg/cluster's notices already).
type Notice struct {
	Field  string
	Reason string
}

// DensityKeys are the row's density keys in row order (after the facts,
// the run window and the metadata; before the failure ratios): whether a
// worker holds more than one actor, the frontiers over the final cluster
// size, the actors-per-pod percentiles.
func DensityKeys() []string {
	return []string{"multi_actor_worker", "actors_per_node", "actors_per_vcpu", "actors_per_gb_ram",
		"actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99"}
}

// TrialSummary computes the row's measurements: the cluster facts, the run
// window and metadata, the density keys (DensityKeys), the failure ratios.
func TrialSummary(in Inputs) (Measurements, []Notice) {
	m := factMeasurements(in.Facts)
	m = append(m, Measurement{"run_start", ptr(strconv.FormatInt(in.RunStart, 10))},
		Measurement{"run_end", ptr(strconv.FormatInt(in.RunEnd, 10))})
	for _, kv := range in.Metadata {
		m = append(m, Measurement{"metadata_" + kv.Key, ptr(kv.Value)})
	}
	density, notices := densityMeasurements(in)
	m = append(m, density...)
	ratios, ratioNotices := failureRatios(in.Stats, in.StatsErr)
	return append(m, ratios...), append(notices, ratioNotices...)
}

// factMeasurements are the cluster facts as printed, in clusterfacts.Keys
// order.
func factMeasurements(f clusterfacts.Facts) Measurements {
	return Measurements{
		{"machine_type", joinStrings(f.MachineType)},
		{"node_count", intText(f.NodeCount)},
		{"allocatable_cores", floatText(f.AllocatableCores)},
		{"allocatable_ram_gb", floatText(f.AllocatableRAMGB)},
		{"worker_pod_count", intText(f.WorkerPodCount)},
		{"kubernetes_version", joinStrings(f.KubernetesVersion)},
		{"worker_actor_capacity", joinInts(f.WorkerActorCapacity)},
		{"worker_memory_limit_gb", joinFloats(f.WorkerMemoryLimitGB)},
		{"sandbox_class", joinStrings(f.SandboxClass)},
	}
}

// densityMeasurements are the DensityKeys with the notices of the null
// ones: multi_actor_worker, the frontiers, the actors-per-pod percentiles.
func densityMeasurements(in Inputs) (Measurements, []Notice) {
	perUser := in.ActorsPerUser
	if perUser == 0 {
		perUser = 1
	}
	observed := observedUsers(in.ObservedUsers)
	frontiers, frontierNotices := frontierMeasurements(in.Facts, peakActors(observed, in.Users, perUser))
	p50, p90, p99, podReason := actorsPerPod(observed, perUser, in.Facts.WorkerPodCount)

	var (
		m       Measurements
		notices []Notice
	)
	put := func(k string, v *string) { m = append(m, Measurement{k, v}) }
	null := func(k, reason string) {
		put(k, nil)
		notices = append(notices, Notice{k, reason})
	}
	switch {
	case p50 == nil:
		null("multi_actor_worker", "actors_per_pod_p50 is null")
	case *p50 > 1:
		put("multi_actor_worker", ptr("true"))
	default:
		put("multi_actor_worker", ptr("false"))
	}
	m = append(m, frontiers...)
	notices = append(notices, frontierNotices...)
	for _, p := range []struct {
		key string
		v   *float64
	}{{"actors_per_pod_p50", p50}, {"actors_per_pod_p90", p90}, {"actors_per_pod_p99", p99}} {
		if p.v == nil {
			null(p.key, podReason)
		} else {
			put(p.key, floatText(p.v))
		}
	}
	return m, notices
}

// observedUsers keeps the finite, positive observed user counts.
func observedUsers(users []float64) []float64 {
	var observed []float64
	for _, u := range users {
		if u > 0 && u-u == 0 { // finite and positive
			observed = append(observed, u)
		}
	}
	return observed
}

// peakActors is the most actors alive at once: the peak observed user
// count, else the -u count, times actors per user; nil without either.
func peakActors(observed []float64, users, perUser float64) *float64 {
	switch {
	case len(observed) > 0:
		return ptr(slices.Max(observed) * perUser)
	case users > 0:
		return ptr(users * perUser)
	}
	return nil
}

// frontierMeasurements are the density frontiers over the final cluster
// size, each over its reported (already rounded) denominator.
func frontierMeasurements(f clusterfacts.Facts, peak *float64) (Measurements, []Notice) {
	var nodes *float64
	if f.NodeCount != nil {
		nodes = ptr(float64(*f.NodeCount))
	}
	m := Measurements{}
	notices := []Notice{}
	for _, fr := range []struct {
		key, denomName string
		denom          *float64
	}{
		{"actors_per_node", "node_count", nodes},
		{"actors_per_vcpu", "allocatable_cores", f.AllocatableCores},
		{"actors_per_gb_ram", "allocatable_ram_gb", f.AllocatableRAMGB},
	} {
		var reason string
		switch {
		case peak == nil:
			reason = "no user count: stats_history.csv has none and -u was not given"
		case fr.denom == nil:
			reason = fr.denomName + " is null"
		case percentile.Round(*fr.denom, 2) == 0:
			reason = fr.denomName + " is 0"
		default:
			m = append(m, Measurement{fr.key, floatText(ptr(percentile.Round(*peak/percentile.Round(*fr.denom, 2), 2)))})
			continue
		}
		m = append(m, Measurement{fr.key, nil})
		notices = append(notices, Notice{fr.key, reason})
	}
	return m, notices
}

// actorsPerPod are the p50, p90 and p99 of actors per worker pod over
// every observed user count (ramp-up included), or why they are null.
func actorsPerPod(observed []float64, perUser float64, pods *int) (p50, p90, p99 *float64, reason string) {
	switch {
	case pods == nil:
		return nil, nil, nil, "worker_pod_count is null"
	case *pods == 0:
		return nil, nil, nil, "worker_pod_count is 0"
	case len(observed) == 0:
		return nil, nil, nil, "no observed user counts in stats_history.csv"
	}
	ratios := make([]float64, len(observed))
	for i, u := range observed {
		ratios[i] = percentile.Round(u*perUser/float64(*pods), 4)
	}
	s := percentile.OfRounded(ratios, 2)
	return s.P50, s.P90, s.P99, ""
}

// ShouldWriteTrialSummary says whether the run produced stats: status.json
// (nil when absent or unreadable) says stats_generated: true, or, without
// status.json, stats.csv has at least one data row. A status.json without
// a boolean stats_generated counts as false: Locust wrote the file and did
// not claim stats.
func ShouldWriteTrialSummary(status *runs.Status, statsCSVHasRows bool) bool {
	if status != nil {
		return status.StatsGenerated != nil && *status.StatsGenerated
	}
	return statsCSVHasRows
}

func ptr[T any](v T) *T { return &v }

func intText(p *int) *string {
	if p == nil {
		return nil
	}
	return ptr(strconv.Itoa(*p))
}

func floatText(p *float64) *string {
	if p == nil {
		return nil
	}
	return ptr(artifact.FormatFloat(*p))
}

// join prints a set sorted by value (numbers numerically), distinct and
// comma-joined; an empty set is null. pkg/cluster already sorts; sorting
// again keeps the rule here, next to the printing.
func join[T cmp.Ordered](vs []T, text func(T) string) *string {
	if len(vs) == 0 {
		return nil
	}
	sorted := slices.Compact(slices.Sorted(slices.Values(vs)))
	parts := make([]string, len(sorted))
	for i, v := range sorted {
		parts[i] = text(v)
	}
	return ptr(strings.Join(parts, ","))
}

func joinStrings(vs []string) *string { return join(vs, func(s string) string { return s }) }

func joinInts(vs []int64) *string {
	return join(vs, func(i int64) string { return strconv.FormatInt(i, 10) })
}

func joinFloats(vs []float64) *string { return join(vs, artifact.FormatFloat) }
