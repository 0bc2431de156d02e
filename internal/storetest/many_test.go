package storetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// TestWriteMany: 50 runs written from one template are 50 distinct stored
// runs in the layout the catalogs read (run ids parse back from their
// paths), alternating two cohorts a night apart, each with the template's
// ladder, phase and Locust rows and its own restore_p99_s.
func TestWriteMany(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	m := BuildMany(t, 50, now)
	if len(m.Runs) != 50 {
		t.Fatalf("%d runs", len(m.Runs))
	}
	ids := map[string]bool{}
	values := map[float64]bool{}
	for i, r := range m.Runs {
		rel, err := filepath.Rel(m.Root, r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := runs.ParseStorePath(rel)
		if !ok || runs.StoreRunID(p.TestName, p.RunTS, p.Tag) != r.ID || r.TestName != ManyTest {
			t.Fatalf("run %d: %s does not parse back to %s (%+v)", i, rel, r.ID, p)
		}
		ids[r.ID] = true
		if want := []string{"gvisor", "microvm"}[i%2]; r.Sandbox != want {
			t.Errorf("run %d: sandbox %s, want %s", i, r.Sandbox, want)
		}
		if i >= 2 && r.Start-m.Runs[i-2].Start != day {
			t.Errorf("run %d starts %d s after run %d, want a night", i, r.Start-m.Runs[i-2].Start, i-2)
		}
		metrics := stored(t, r.Dir)
		values[restoreP99(t, r.Dir)] = true
		for _, prefix := range []string{artifact.MetricServerSummary, artifact.MetricTrialSummary, artifact.MetricLadderStepPrefix, artifact.MetricPhasePrefix, "locust"} {
			if !hasPrefix(metrics, prefix) {
				t.Fatalf("run %s: no %s* row among %v", r.ID, prefix, metrics)
			}
		}
		for _, f := range []string{runs.FileServerSummary, runs.FilePSISeries, runs.FileStatus} {
			if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
				t.Errorf("run %s: %v", r.ID, err)
			}
		}
	}
	if len(ids) != 50 || len(values) < 40 {
		t.Errorf("%d distinct run ids, %d distinct restore_p99_s values of 50 runs", len(ids), len(values))
	}
	if newest := m.Runs[len(m.Runs)-1]; newest.Start >= now.Unix() || newest.Start < now.Add(-48*time.Hour).Unix() {
		t.Errorf("newest run starts %v, want the night before %v", time.Unix(newest.Start, 0).UTC(), now)
	}
}

// stored is the metric names of a run's stats.jsonl rows.
func stored(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runs.FileStatsJSONL)) // #nosec G304 -- a fixture the test wrote
	if err != nil {
		t.Fatal(err)
	}
	lines, err := artifact.ReadRows(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lines {
		if l.Err != nil {
			t.Fatalf("%s: %v", dir, l.Err)
		}
		out = append(out, l.Row.Metric)
	}
	return out
}

func hasPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// BenchmarkWriteMany is the writing of 1,000 runs from one template (the
// template's export not counted).
func BenchmarkWriteMany(b *testing.B) {
	tmpl, _ := Template(b)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for b.Loop() {
		if _, err := WriteMany(tmpl, b.TempDir(), 1000, now); err != nil {
			b.Fatal(err)
		}
	}
}
