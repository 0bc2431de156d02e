package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/simrun"
)

// TestExport runs the README's main job end to end: the demo run generated,
// loaded into a real Prometheus, exported, and summarized.
func TestExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-run")
	var out, errOut bytes.Buffer
	if code := Export(context.Background(), dir, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"server_summary.json", "stats.jsonl", "  " + filepath.Join(dir, "report.html"), "packing ratio", "checkpoints", "restore latency", "active actors"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "server_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	packing := doc["cluster_packing"].(map[string]any)["summary"].(map[string]any)
	if packing["p50"] == nil {
		t.Errorf("the demo run must measure packing: %v", packing)
	}
	if strings.Contains(out.String(), "p50 null") {
		t.Errorf("a headline number is null on the demo run:\n%s", out.String())
	}
	// The frontiers have numbers: the cluster facts come from the
	// simulator's cluster (its worker nodes, sandbox classes, capacity).
	sc, _ := simrun.ByName(Scenario)
	trial := trialSummary(t, filepath.Join(dir, "stats.jsonl"))
	for key, want := range map[string]string{
		"node_count": strconv.Itoa(len(sc.NodePods)), "sandbox_class": "gvisor,microvm",
		"worker_actor_capacity": strconv.Itoa(sc.PodCapacity), "machine_type": kubefake.SimulatedWorkerType,
	} {
		if trial[key] != want {
			t.Errorf("trial_summary %s = %v, want %s", key, trial[key], want)
		}
	}
	for _, key := range []string{"actors_per_node", "actors_per_vcpu", "actors_per_gb_ram", "actors_per_pod_p50"} {
		if trial[key] == nil {
			t.Errorf("frontier %s is null on the demo run", key)
		}
	}
	for _, want := range []string{"report.html in a browser", GatesExample, "mage demoStore", "regressions --store", "mage demoServe"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the closing lines lack %q:\n%s", want, out.String())
		}
	}
}

// trialSummary is the measurements of the trial_summary row of a stats.jsonl.
func trialSummary(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var row struct {
			Metric       string         `json:"metric"`
			Measurements map[string]any `json:"measurements"`
		}
		if json.Unmarshal([]byte(line), &row) == nil && row.Metric == "trial_summary" {
			return row.Measurements
		}
	}
	t.Fatalf("%s has no trial_summary row", path)
	return nil
}

// TestServeStopsOnCancel: Serve prints the URL and returns when ctx ends.
func TestServeStopsOnCancel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-run")
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, dir, &syncWriter{w: &out}, &bytes.Buffer{}) }()
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(readSync(&out), "Ctrl-C") {
		select {
		case err := <-done:
			t.Fatalf("Serve returned early: %v", err)
		case <-deadline:
			t.Fatal("Serve never became ready")
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readSync(&out), "http://127.0.0.1:") {
		t.Errorf("no loopback URL printed: %s", readSync(&out))
	}
}
