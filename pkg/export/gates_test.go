package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/cli"
)

// TestExportFailingGate: a gate that fails exits 3 and every artifact is
// still written, the gate family last in stats.jsonl; a malformed gates
// file exits 2 and writes nothing.
func TestExportFailingGate(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tr := run.Truth
	dir := copyRun(t, run)
	gates := filepath.Join(t.TempDir(), "gates.yaml")
	// Packing can never exceed 1: the min fails. OOM events are 0 in the
	// steady scenario; a typo-free unmeasured ladder key is allowed null.
	text := "gates:\n  - key: cluster_packing_p50\n    min: 2\n  - key: oom_events_pod\n    max: 1000\n  - key: ladder_summary.max_sustained_rps\n    min: 1\n    allow_null: true\n"
	if err := os.WriteFile(gates, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "gates.xml")
	args := []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts",
		"--gates", gates, "--junit", junit}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("gates:\n  - key: cluster_packing_p5O\n    min: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir)
	e := newEnv(nil, nil)
	badArgs := append(append([]string(nil), args[:len(args)-4]...), "--gates", bad)
	if code := Main(context.Background(), badArgs, e.Env); code != cli.ExitUsage {
		t.Fatalf("malformed gates: exit %d, want 2: %s", code, e.errOut.String())
	}
	if got := listDir(t, dir); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("malformed gates wrote files: %v", got)
	}

	e = newEnv(nil, nil)
	if code := Main(context.Background(), args, e.Env); code != cli.ExitGateFailed {
		t.Fatalf("exit %d, want 3: %s %s", code, e.out.String(), e.errOut.String())
	}
	for _, name := range []string{"server_summary.json", "stats.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	rows := readRows(t, filepath.Join(dir, "stats.jsonl"))
	var metrics []string
	for _, r := range rows {
		metrics = append(metrics, r["metric"].(string))
	}
	want := "server_summary,trial_summary,gate_cluster_packing_p50,gate_oom_events_pod,gate_ladder_summary_max_sustained_rps,gate_summary"
	if strings.Join(metrics, ",") != want {
		t.Fatalf("rows %v, want %s", metrics, want)
	}
	sum := rows[len(rows)-1]["measurements"].(map[string]any)
	if sum["failed"] != "1" || sum["verdict"] != "fail" {
		t.Errorf("gate_summary %v", sum)
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `failures="1"`) {
		t.Errorf("junit: %v %s", err, b)
	}

	// --replace swaps the gate family in place instead of appending.
	e = newEnv(nil, nil)
	if code := Main(context.Background(), append(args, "--replace"), e.Env); code != cli.ExitGateFailed {
		t.Fatalf("replace: exit %d: %s", code, e.errOut.String())
	}
	if n := len(readRows(t, filepath.Join(dir, "stats.jsonl"))); n != len(rows) {
		t.Errorf("after --replace %d rows, want %d", n, len(rows))
	}
}
