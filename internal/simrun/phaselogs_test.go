package simrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/pytest"
)

// PhaseScenario is the steady scenario with the pod logs switched on.
func phaseScenario() Scenario {
	s, _ := ByName("steady")
	s.Name, s.PhaseLogs = "steady-phases", true
	return s
}

func TestPhaseLogs(t *testing.T) {
	dir := t.TempDir()
	tr, err := Generate(phaseScenario(), dir)
	if err != nil {
		t.Fatal(err)
	}
	pt := tr.Phases
	if pt == nil || len(pt.Rows) == 0 {
		t.Fatal("no phase truth")
	}
	var previous, unreadable int
	for _, l := range pt.Logs {
		if l.Unreadable {
			unreadable++
			if _, err := os.Stat(filepath.Join(dir, l.Current)); err == nil {
				t.Errorf("unreadable pod %s has a log file", l.Pod)
			}
			continue
		}
		if l.Previous != "" {
			previous++
		}
		data, err := os.ReadFile(filepath.Join(dir, l.Current))
		if err != nil || !strings.Contains(string(data), "timing breakdown") {
			t.Errorf("log of %s: %v", l.Pod, err)
		}
	}
	if previous != 1 || unreadable != 1 || pt.Failed == 0 || pt.PodsFailed != 1 {
		t.Fatalf("previous %d unreadable %d failed %d", previous, unreadable, pt.Failed)
	}
	layers := map[string]bool{}
	for _, r := range pt.Rows {
		layers[r.Measurements[0][1]+"/"+r.Measurements[2][1]] = true
	}
	for _, want := range []string{"atelet/microvm", "atelet/gvisor", "ateom/microvm", "ateom/gvisor"} {
		if !layers[want] {
			t.Errorf("no %s rows (have %v)", want, layers)
		}
	}
	// The truth's percentiles equal Python's statistics.quantiles on the
	// same values (N ≥ 2).
	var in [][]float64
	var idx []int
	for i, v := range pt.Values {
		if len(v) >= 2 {
			in, idx = append(in, v), append(idx, i)
		}
	}
	var want [][3]string
	pytest.Run(t, `
import json, statistics, sys
print(json.dumps([[str(q[49] * 1000), str(q[89] * 1000), str(q[94] * 1000)]
    for q in (statistics.quantiles(v, n=100, method="inclusive") for v in json.load(sys.stdin))]))
`, in, &want)
	for k, i := range idx {
		m := pt.Rows[i].Measurements
		if got := [3]string{m[7][1], m[8][1], m[9][1]}; got != want[k] {
			t.Errorf("%s: %v, python %v", pt.Rows[i].Metric, got, want[k])
		}
	}
}
