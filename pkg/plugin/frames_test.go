package plugin

import (
	"testing"
)

// The Grafana unit ids of the spec: percentunit for ratios, percent for
// stall %, gbytes for GiB, mbytes for MiB, MiBs for MiB/s, s for seconds.
func TestUnitIDs(t *testing.T) {
	for got, want := range map[string]string{unitRatio: "percentunit", unitPercent: "percent", unitGiB: "gbytes", unitMiB: "mbytes", unitMiBs: "MiBs", unitSeconds: "s"} {
		if got != want {
			t.Errorf("unit %q, spec %q", got, want)
		}
	}
}

// snapshots: "one-row table whose fields are named exactly as the 18
// snapshot keys (units s, MiB, MiB/s)", checked against the spec's table.
func TestSnapshotsFrameNamesAndUnits(t *testing.T) {
	e := newEnv(t, "steady")
	f := e.one(t, e.client(t), map[string]any{"queryType": "snapshots", "run": e.runID}).Frames[0]
	want := [][2]string{
		{"size_p50_mb", "mbytes"}, {"size_p90_mb", "mbytes"}, {"size_p95_mb", "mbytes"}, {"size_p99_mb", "mbytes"}, {"size_avg_mb", "mbytes"},
		{"checkpoints_in_window", "none"}, {"checkpoints_cumulative", "none"},
		{"restore_p50_s", "s"}, {"restore_p90_s", "s"}, {"restore_p95_s", "s"}, {"restore_p99_s", "s"}, {"restore_mean_s", "s"},
		{"checkpoint_p50_s", "s"}, {"checkpoint_p90_s", "s"}, {"checkpoint_p95_s", "s"}, {"checkpoint_p99_s", "s"}, {"checkpoint_mean_s", "s"},
		{"checkpoint_mb_s", "MiBs"},
	}
	if f.Rows() != 1 || len(f.Fields) != len(want) {
		t.Fatalf("%d rows, %d fields; want one row of %d", f.Rows(), len(f.Fields), len(want))
	}
	for i, w := range want {
		fld := f.Fields[i]
		if fld.Name != w[0] || fld.Config == nil || fld.Config.Unit != w[1] {
			t.Errorf("field %d: %s unit %v, want %s %s", i, fld.Name, fld.Config, w[0], w[1])
		}
	}
}

// summary: "numeric ones as numbers (strings only for text facts such as
// machine_type)".
func TestSummaryFieldTypes(t *testing.T) {
	e := newEnv(t, "ladder")
	e.storeExport(t)
	f := e.one(t, e.client(t), map[string]any{"queryType": "summary", "run": e.runID}).Frames[0]
	for _, k := range []string{"machine_type", "kubernetes_version", "worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class", "multi_actor_worker"} {
		if _, ok := field(t, f, k).At(0).(*string); !ok {
			t.Errorf("%s is %T, want a string", k, field(t, f, k).At(0))
		}
	}
	for _, k := range []string{"cluster_packing_p50", "oom_events_node", "checkpoints_in_window", "node_count", "allocatable_cores", "worker_pod_count",
		"run_start", "run_end", "actors_per_node", "actors_per_pod_p50", "aggregate_failure_ratio"} {
		if _, ok := field(t, f, k).At(0).(*float64); !ok {
			t.Errorf("%s is %T, want a number", k, field(t, f, k).At(0))
		}
	}
}
