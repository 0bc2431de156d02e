package phases

import (
	"reflect"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/artifact"
)

func TestMetricName(t *testing.T) {
	cases := []struct {
		g    Group
		want string
	}{
		{Group{Layer: "atelet", Op: "restore", Class: "microvm", Kind: "latest", Scope: "full", Phase: "download"}, "phase_atelet_restore_microvm_latest_full_download"},
		{Group{Layer: "ateom", Op: "checkpoint", Class: "-", Kind: "", Scope: "-", Phase: "total"}, "phase_ateom_checkpoint_none_none_none_total"},
		{Group{Layer: "atelet", Op: "restore", Class: "Micro VM", Kind: "golden/v2..x", Scope: "full", Phase: "net.setup-ipv6"}, "phase_atelet_restore_micro_vm_golden_v2_x_full_net_setup_ipv6"},
		{Group{Layer: "atelet", Op: "restore", Class: "gvisor", Kind: "é", Scope: "full", Phase: "total"}, "phase_atelet_restore_gvisor___full_total"},
	}
	for _, tc := range cases {
		if got := MetricName(tc.g); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.g, got, tc.want)
		}
	}
}

func TestRows(t *testing.T) {
	key := RunKey{Timestamp: "1790157600", Tag: "tag", TestName: "density"}
	groups := []Group{
		{Layer: "atelet", Op: "restore", Class: "microvm", Kind: "latest", Scope: "full", Phase: "download", Count: 1, P50: 2400, P90: 2400, P95: 2400, Max: 2400},
		{Layer: "ateom", Op: "restore", Class: "-", Kind: "a b", Scope: "-", Phase: "total", Count: 2, P50: 1.5, P90: 1e-05, P95: 0, Max: 123456789.125},
		{Layer: "ateom", Op: "restore", Class: "-", Kind: "a.b", Scope: "-", Phase: "total", Count: 1, P50: 1, P90: 1, P95: 1, Max: 1},
	}
	rows, notices := Rows(key, groups)
	var lines []string
	for _, r := range rows {
		b, err := r.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	want := []string{
		`{"timestamp": "1790157600", "tag": "tag", "test_name": "density", "metric": "phase_atelet_restore_microvm_latest_full_download", "measurements": {"layer": "atelet", "op": "restore", "class": "microvm", "kind": "latest", "scope": "full", "phase": "download", "count": "1", "p50_ms": "2400.0", "p90_ms": "2400.0", "p95_ms": "2400.0", "max_ms": "2400.0"}}`,
		`{"timestamp": "1790157600", "tag": "tag", "test_name": "density", "metric": "phase_ateom_restore_none_a_b_none_total", "measurements": {"layer": "ateom", "op": "restore", "class": "none", "kind": "a b", "scope": "none", "phase": "total", "count": "2", "p50_ms": "1.5", "p90_ms": "1e-05", "p95_ms": "0.0", "max_ms": "123456789.125"}}`,
		`{"timestamp": "1790157600", "tag": "tag", "test_name": "density", "metric": "phase_ateom_restore_none_a_b_none_total", "measurements": {"layer": "ateom", "op": "restore", "class": "none", "kind": "a.b", "scope": "none", "phase": "total", "count": "1", "p50_ms": "1.0", "p90_ms": "1.0", "p95_ms": "1.0", "max_ms": "1.0"}}`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("rows:\n%s", strings.Join(lines, "\n"))
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "phase_ateom_restore_none_a_b_none_total") {
		t.Fatalf("collision notices %v", notices)
	}

	// Read back.
	back, summary := FromRows(append(rows, SummaryRow(key, Summary{}), artifact.Row{Metric: "server_summary"}))
	for i := range groups {
		groups[i].Class = none(groups[i].Class)
		groups[i].Scope = none(groups[i].Scope)
	}
	if !reflect.DeepEqual(back, groups) || summary == nil {
		t.Fatalf("read back %+v %v", back, summary)
	}
}

func TestSummaryRowAndWarnings(t *testing.T) {
	key := RunKey{Timestamp: "1", Tag: "t", TestName: "n"}
	two, zero := 2, 0
	cases := []struct {
		name     string
		s        Summary
		groups   int
		line     string
		warnings []string
	}{
		{"files, no locust rows, no records", Summary{}, 0,
			`{"records": "0", "pods_read": null, "pods_failed": null, "atelet_checkpoint_records": "0", "atelet_restore_records": "0"}`,
			[]string{"no timing breakdown records in the node logs (0 pods read, 0 failed); check pods/log access"}},
		{"fewer records, pods failed", Summary{Records: 9, PodsRead: &two, PodsFailed: &two, AteletCheckpoint: 3, AteletRestore: 5,
			Suspend: &Locust{Requests: 5, Failures: 1}, Resume: &Locust{Requests: 5, Failures: 0}}, 4,
			`{"records": "9", "pods_read": "2", "pods_failed": "2", "atelet_checkpoint_records": "3", "locust_SuspendActor": "5", "locust_SuspendActor_failures": "1", "atelet_restore_records": "5", "locust_ResumeActor": "5", "locust_ResumeActor_failures": "0"}`,
			[]string{"locust made 4 successful SuspendActor requests but the atelet logs hold 3 records; 2 pod(s) could not be read"}},
		{"rotated", Summary{Records: 1, PodsRead: &two, PodsFailed: &zero, AteletRestore: 1, Resume: &Locust{Requests: 3}}, 1,
			`{"records": "1", "pods_read": "2", "pods_failed": "0", "atelet_checkpoint_records": "0", "atelet_restore_records": "1", "locust_ResumeActor": "3", "locust_ResumeActor_failures": "0"}`,
			[]string{"locust made 3 successful ResumeActor requests but the atelet logs hold 1 records; a node log was rotated during the run"}},
		{"more records than requests is normal", Summary{Records: 7, PodsRead: &two, PodsFailed: &zero, AteletCheckpoint: 7, Suspend: &Locust{Requests: 3}}, 1,
			`{"records": "7", "pods_read": "2", "pods_failed": "0", "atelet_checkpoint_records": "7", "locust_SuspendActor": "3", "locust_SuspendActor_failures": "0", "atelet_restore_records": "0"}`,
			nil},
	}
	for _, tc := range cases {
		b, err := SummaryRow(key, tc.s).MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		wantLine := `{"timestamp": "1", "tag": "t", "test_name": "n", "metric": "phase_breakdown_summary", "measurements": ` + tc.line + `}`
		if got != wantLine {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, wantLine)
		}
		if w := Warnings(tc.s, tc.groups); !reflect.DeepEqual(w, tc.warnings) {
			t.Errorf("%s: warnings %q, want %q", tc.name, w, tc.warnings)
		}
	}
}

// TestEndToEnd reads a small log through the whole chain.
func TestEndToEnd(t *testing.T) {
	log := lineAteomRestore + "\n" + lineAteletRestore + "\n" +
		`{"time":"2026-09-23T10:00:09Z","msg":"Checkpoint timing breakdown","ate.actor.uid":"u1","ate.snapshot.scope":"full","ate.snapshot.kind":"latest","ate.sandbox.class":"microvm","ate.actor.checkpoint.duration.sandbox_assets":0.25,"ate.actor.checkpoint.duration.ateom_checkpoint":1.5,"ate.actor.checkpoint.duration.persist":0.5,"ate.actor.checkpoint.duration.total":2.5}` + "\n" +
		`I1001 {"time":"2026-09-23T10:00:08.4Z","msg":"Checkpoint timing breakdown","ate.actor.uid":"u1","ate.snapshot.scope":"full","ateom.actor.checkpoint.duration.prep":0.1,"ateom.actor.checkpoint.duration.pause":0.2,"ateom.actor.checkpoint.duration.snapshot":0.9,"ateom.actor.checkpoint.duration.durable_dir":0.4,"ateom.actor.checkpoint.duration.teardown":0.1,"ateom.actor.checkpoint.duration.total":1.5}` + "\n"
	c := read(t, log)
	Analyze(c.Records)
	if pairs(c.Records)[0] != 1 || pairs(c.Records)[2] != 3 {
		t.Fatalf("pairs %v", pairs(c.Records))
	}
	rows, _ := Rows(RunKey{Timestamp: "1", Tag: "t", TestName: "n"}, Groups(c.Records))
	var names []string
	for _, r := range rows {
		names = append(names, r.Metric)
	}
	want := []string{
		"phase_atelet_checkpoint_microvm_latest_full_sandbox_assets",
		"phase_atelet_checkpoint_microvm_latest_full_ateom_checkpoint",
		"phase_atelet_checkpoint_microvm_latest_full_persist",
		"phase_atelet_checkpoint_microvm_latest_full_unattributed",
		"phase_atelet_checkpoint_microvm_latest_full_total",
		"phase_atelet_restore_microvm_latest_full_download",
		"phase_atelet_restore_microvm_latest_full_ateom_restore",
		"phase_atelet_restore_microvm_latest_full_total",
		"phase_ateom_checkpoint_microvm_latest_full_prep",
		"phase_ateom_checkpoint_microvm_latest_full_pause",
		"phase_ateom_checkpoint_microvm_latest_full_snapshot",
		"phase_ateom_checkpoint_microvm_latest_full_durable_dir",
		"phase_ateom_checkpoint_microvm_latest_full_teardown",
		"phase_ateom_checkpoint_microvm_latest_full_unattributed",
		"phase_ateom_checkpoint_microvm_latest_full_total",
		"phase_ateom_restore_microvm_latest_full_vm_restore",
		"phase_ateom_restore_microvm_latest_full_total",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("metrics:\n%s", strings.Join(names, "\n"))
	}
}
