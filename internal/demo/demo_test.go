package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
