package verdicts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/statstest"
	"github.com/substrate/density/pkg/runs"
)

// A run directory's run is the one its server_summary.json recorded, else
// the one of its last server_summary row: another run's rows appended to
// the same stats.jsonl, and a key only in an older set of a family, are not
// the run's (export.md "Which rows belong to a run").
func TestLoadDirTakesTheRunsRows(t *testing.T) {
	dir := t.TempDir()
	const ts, other = "2026-12-01T10:00:00Z", "2026-12-02T10:00:00Z"
	data := statstest.Line(ts, "abc", "server_summary", "restore_p99_s", "1.0") +
		statstest.Line(ts, "abc", "phase_a", "p95_ms", "10") + statstest.Line(ts, "abc", "phase_old", "p95_ms", "11") +
		statstest.Line(ts, "abc", "phase_breakdown_summary", "records", "2") +
		statstest.Line(ts, "abc", "server_summary", "restore_p99_s", "2.0") +
		statstest.Line(ts, "abc", "phase_a", "p95_ms", "20") + statstest.Line(ts, "abc", "phase_breakdown_summary", "records", "1") +
		statstest.Line(other, "abc", "server_summary", "restore_p99_s", "9.0") +
		statstest.Line(other, "abc", "phase_a", "p95_ms", "90")
	if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(what, wantRestore, wantPhase string, wantOld bool) {
		t.Helper()
		r, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		restore, _ := r.Text("restore_p99_s")
		phase, _ := r.Text("phase_a.p95_ms")
		_, old := r.Get("phase_old.p95_ms")
		if restore != wantRestore || phase != wantPhase || old != wantOld {
			t.Errorf("%s: restore_p99_s %q phase_a.p95_ms %q phase_old %v; want %q %q %v", what, restore, phase, old, wantRestore, wantPhase, wantOld)
		}
	}
	// No server_summary.json: the rows decide (the last server_summary row's run).
	check("rows decide", "9.0", "90", false)
	summary := `{"metadata": {"test_name": "nightly", "tag": "abc", "start_ts": 1796119200, "end_ts": 1796122800}}`
	if err := os.WriteFile(filepath.Join(dir, "server_summary.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	check("recorded run", "2.0", "20", false)
}

// A run named by its caller that cannot be used is an InputError (the
// commands exit 2 on it, the plugin answers 400/404); a stored run whose
// stats.jsonl cannot be read is not (exit 1: the store failed).
func TestLoadInputErrors(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	// Two runs of nightly, of different cohorts (machine types).
	var ids []string
	for i, machine := range []string{"n2", "c3"} {
		ts := int64(1796119200 + i*86400)
		tag := fmt.Sprintf("c%02d", i)
		dir := filepath.Join(root, "runs", "nightly", "run_date=2026-12-0"+fmt.Sprint(1+i), fmt.Sprintf("run_ts=%d", ts), "run_tag="+tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stamp := fmt.Sprintf("2026-12-0%dT10:00:00Z", 1+i)
		data := statstest.Line(stamp, tag, "server_summary", "restore_p99_s", "4.0") +
			statstest.Line(stamp, tag, "trial_summary", "machine_type", machine, "run_start", fmt.Sprint(ts))
		if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fmt.Sprintf("nightly/%d/%s", ts, tag))
	}
	s, err := runs.OpenStore(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	empty := t.TempDir()

	cand, err := LoadStoreRun(ctx, s, ids[1])
	if err != nil {
		t.Fatalf("LoadStoreRun %s: %v", ids[1], err)
	}
	if v, ok := cand.Number("restore_p99_s"); !ok || v != 4 || cand.ID != ids[1] || cand.Tag != "c01" {
		t.Errorf("stored run %s: restore_p99_s %v %v, tag %q", cand.ID, v, ok, cand.Tag)
	}
	// An entry whose stats.jsonl the store does not hold.
	var gone runs.Entry
	gone.ID, gone.TestName, gone.Tag, gone.Source = "nightly/1796000000/zz", "nightly", "zz", runs.SourceStore
	gone.Artifacts.StatsJSONL = true

	for _, tc := range []struct {
		name  string
		load  func() (*Run, error)
		input bool
		text  string
	}{
		{"missing directory", func() (*Run, error) { return LoadDir(filepath.Join(empty, "nope")) }, true, "nope"},
		{"directory without stats.jsonl", func() (*Run, error) { return LoadDir(empty) }, true, "no stats.jsonl"},
		{"malformed run id", func() (*Run, error) { return LoadStoreRun(ctx, s, "nightly/x") }, true, `run id "nightly/x"`},
		{"run not in the store", func() (*Run, error) { return LoadStoreRun(ctx, s, "nightly/1796000000/zz") }, true, "nightly/1796000000/zz"},
		{"no baseline in the cohort", func() (*Run, error) { return LatestBaseline(ctx, s, cand) }, true, "no other run of nightly in its cohort"},
		{"stats.jsonl unreadable in the store", func() (*Run, error) { return LoadEntry(ctx, s, gone) }, false, "run nightly/1796000000/zz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.load()
			if err == nil {
				t.Fatalf("read %s, want an error", r.ID)
			}
			var in *InputError
			if errors.As(err, &in) != tc.input {
				t.Errorf("%v: InputError %v, want %v", err, !tc.input, tc.input)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not say %q", err, tc.text)
			}
		})
	}
}
