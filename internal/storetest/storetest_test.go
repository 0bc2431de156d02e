package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/substrate/density/internal/statstest"
)

// TestBuild: every run of the store was exported (server_summary.json and
// its stats.jsonl row with restore_p99_s), and the slowed-down runs have
// the higher restore_p99_s.
func TestBuild(t *testing.T) {
	st := Build(t, Options{})
	if len(st.Runs) != 20 {
		t.Fatalf("%d runs", len(st.Runs))
	}
	var fast, slow []float64
	for _, r := range st.Runs {
		if _, err := os.Stat(filepath.Join(r.Dir, "server_summary.json")); err != nil {
			t.Fatal(err)
		}
		v := restoreP99(t, r.Dir)
		t.Logf("%s slow=%v restore_p99_s=%.4f", r.ID, r.Slow, v)
		if r.Slow {
			slow = append(slow, v)
		} else {
			fast = append(fast, v)
		}
	}
	if len(slow) != 8 || mean(slow) <= 1.2*mean(fast) {
		t.Errorf("restore_p99_s: mean %.4f before, %.4f from run 12 (%d runs)", mean(fast), mean(slow), len(slow))
	}
}

func restoreP99(t *testing.T, dir string) float64 {
	t.Helper()
	v := statstest.ServerSummary(t, dir)["restore_p99_s"]
	if v == nil {
		t.Fatalf("%s: restore_p99_s is null or missing", dir)
	}
	return *v
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
