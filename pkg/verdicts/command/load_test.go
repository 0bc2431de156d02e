package command

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// A command reads each stored run once: listing a run without
// server_summary.json reads its stats.jsonl for the window, and the
// verdicts take their rows from that read (what `density regressions`
// does); --baseline-run latest reads the candidate once and then the
// newest runs of its cohort until one is found.
func TestCommandReadsEachRunOnce(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	const n = 12
	ids := writeStore(t, root, n, 8)
	// Finished runs (the orchestrator uploads status.json last): their
	// descriptions, and the rows read for them, are kept.
	dirs, err := filepath.Glob(filepath.Join(root, "runs", "nightly", "*", "*", "*"))
	if err != nil || len(dirs) != n {
		t.Fatalf("%d run directories (%v)", len(dirs), err)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, runs.FileStatus), []byte(`{"locust_exit_code": 0}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *runs.Store {
		s, err := runs.OpenStore(ctx, "file://"+root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}

	s := open()
	all, err := verdicts.LoadTest(ctx, s, "nightly", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("%d runs loaded, want %d", len(all), n)
	}
	if got := s.Opened(); got != 2*n {
		t.Errorf("regressions' load of %d runs opened %d stored files, want %d (each status.json and stats.jsonl once)", n, got, 2*n)
	}
	for i, r := range all {
		if _, ok := r.Number("restore_p99_s"); !ok || r.ID != ids[n-1-i] {
			t.Errorf("run %d: %s without restore_p99_s (want %s)", i, r.ID, ids[n-1-i])
		}
	}

	s = open()
	cand, err := verdicts.LoadStoreRun(ctx, s, ids[n-1])
	if err != nil {
		t.Fatal(err)
	}
	base, err := verdicts.LatestBaseline(ctx, s, cand)
	if err != nil {
		t.Fatal(err)
	}
	if base.ID != ids[n-2] {
		t.Errorf("latest baseline %s, want %s", base.ID, ids[n-2])
	}
	// The listing describes every run (reading each status.json and
	// stats.jsonl once); only the candidate and the baseline are taken as runs.
	if got := s.Opened(); got != 2*n {
		t.Errorf("check --baseline-run latest opened %d stored files, want %d (each run's files once)", got, 2*n)
	}
}
