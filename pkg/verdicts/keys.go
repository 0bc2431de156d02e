// Package verdicts turns a run's stored rows into verdicts: gates (bounds
// and regressions against a baseline), run-to-run comparison and change
// points across the runs of one test name. It is pure: callers read the
// artifacts and pass typed values in; results are data (rows, tables).
package verdicts

import (
	"strings"

	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
)

// Direction says which way a key is better.
type Direction int

// Directions of a key.
const (
	None Direction = iota
	Higher
	Lower
)

func (d Direction) String() string {
	switch d {
	case Higher:
		return "higher"
	case Lower:
		return "lower"
	}
	return "none"
}

// ParseDirection reads "higher" or "lower".
func ParseDirection(s string) (Direction, bool) {
	switch s {
	case "higher":
		return Higher, true
	case "lower":
		return Lower, true
	}
	return None, false
}

// directionRule is one line of the ordered directions table: an exact name,
// a prefix or a suffix of the key's last part (after the last dot).
type directionRule struct {
	exact, prefix, suffix, contains string
	dir                             Direction
}

// directionRules is the ordered table: exact names first, then name
// families, then suffixes. The first matching rule wins.
var directionRules = []directionRule{
	// Counts, sizes and capacities: no better side.
	{exact: "step", dir: None}, {exact: "steps", dir: None}, {exact: "window_s", dir: None},
	{exact: "node_count", dir: None}, {exact: "worker_pod_count", dir: None},
	{exact: "worker_actor_capacity", dir: None}, {exact: "allocatable_cores", dir: None},
	{exact: "allocatable_ram_gb", dir: None}, {exact: "worker_memory_limit_gb", dir: None},
	{exact: "checkpoints_in_window", dir: None}, {exact: "count", dir: None},
	{exact: "run_start", dir: None}, {exact: "run_end", dir: None},
	{exact: "window_start", dir: None}, {exact: "window_end", dir: None},
	// Density: higher is better.
	{exact: "checkpoint_mb_s", dir: Higher}, {exact: "max_sustained_rps", dir: Higher},
	{exact: "actors_per_node", dir: Higher}, {exact: "actors_per_vcpu", dir: Higher},
	{exact: "actors_per_gb_ram", dir: Higher},
	{prefix: "actors_per_pod_", dir: Higher}, {prefix: "cluster_packing_", dir: Higher},
	{prefix: "active_actors_", dir: Higher},
	// Pressure, sizes, failures: lower is better.
	{prefix: "psi_", dir: Lower}, {prefix: "pod_psi_", dir: Lower},
	{prefix: "snapshot_size_", dir: Lower}, {prefix: "working_set_", dir: Lower},
	{prefix: "oom_events_", dir: Lower}, {contains: "failure", dir: Lower},
	{contains: "evict", dir: Lower},
	// Units.
	{suffix: "_rps", dir: Higher}, {suffix: "_per_s", dir: Higher}, {suffix: "_mb_s", dir: Higher},
	{suffix: "_s", dir: Lower}, {suffix: "_ms", dir: Lower},
}

// DirectionOf is a key's built-in direction. A dotted key
// (`<metric>.<key>`) is judged by its part after the last dot.
func DirectionOf(key string) Direction {
	name := key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		name = key[i+1:]
	}
	for _, r := range directionRules {
		switch {
		case r.exact != "" && name == r.exact,
			r.prefix != "" && strings.HasPrefix(name, r.prefix),
			r.suffix != "" && strings.HasSuffix(name, r.suffix),
			r.contains != "" && strings.Contains(name, r.contains):
			return r.dir
		}
	}
	return None
}

// Excluded reports keys left out of comparison and change points:
// timestamps and run metadata.
func Excluded(key string) bool {
	name := key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		name = key[i+1:]
	}
	switch name {
	case "run_start", "run_end", "window_start", "window_end":
		return true
	}
	return strings.HasPrefix(name, "metadata_")
}

// knownKeys are the undotted keys a gate may name: the server_summary and
// trial_summary measurements, from the tables that name them (spec
// stats-jsonl.md). Per-operation failure ratios are a pattern (Known);
// dotted keys (`<metric>.<key>`: ladder, phase and other rows) are judged
// by their row, not here. TestKnownKeysAreTheExportsKeys pins the set to
// what the export writes for a simulated run.
var knownKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range serverSummaryKeys() {
		m[k] = true
	}
	for _, k := range trialSummaryKeys() {
		m[k] = true
	}
	return m
}()

// serverSummaryKeys are the server_summary row's flat keys.
func serverSummaryKeys() []string {
	ps := []string{"p50", "p90", "p95", "p99"}
	var ks []string
	for _, p := range ps {
		ks = append(ks, "cluster_packing_"+p)
	}
	for _, res := range harvest.PSIResources() {
		for _, p := range ps {
			ks = append(ks, "psi_"+res.Key+"_stall_"+p, "pod_psi_"+res.Key+"_stall_"+p)
		}
	}
	for _, f := range (&harvest.Snapshots{}).Fields() {
		switch {
		case f.Key == "checkpoints_cumulative": // server_summary.json only
		case strings.HasPrefix(f.Key, "size_"):
			ks = append(ks, "snapshot_"+f.Key)
		default:
			ks = append(ks, f.Key)
		}
	}
	for _, p := range ps {
		ks = append(ks, "active_actors_"+p)
	}
	for _, b := range harvest.WorkingSetBlocks() {
		for _, p := range append(ps, "max") {
			ks = append(ks, "working_set_"+b+"_"+p+"_gb")
		}
	}
	for _, k := range harvest.OOMKeys() {
		ks = append(ks, "oom_events_"+k)
	}
	return ks
}

// trialSummaryKeys are the trial_summary row's fixed keys: the cluster
// facts, the run window, the density frontiers and the aggregate failure
// ratio (metadata_* keys are the run's own and not gated).
func trialSummaryKeys() []string {
	ks := append(clusterfacts.Keys(), "run_start", "run_end")
	ks = append(ks, frontier.DensityKeys()...)
	return append(ks, frontier.RatioKey(frontier.AggregateName))
}

// Known reports whether an undotted key is a server_summary or
// trial_summary measurement (per-operation failure ratios included).
func Known(key string) bool {
	return knownKeys[key] || strings.HasSuffix(key, "_failure_ratio")
}

// Sanitise maps a key into a row metric suffix as phase metrics are:
// lowercased, every run of characters outside [a-z0-9_] becomes "_".
func Sanitise(key string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return b.String()
}
