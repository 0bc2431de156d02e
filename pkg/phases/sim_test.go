package phases_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/phases"
)

// TestSimulatedRun reads the simulator's pod logs and compares the rows
// with the rows the simulator computed from the durations it drew.
func TestSimulatedRun(t *testing.T) {
	sc, _ := simrun.ByName("steady")
	sc.PhaseLogs = true
	dir := t.TempDir()
	tr, err := simrun.Generate(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	c := phases.NewCollector()
	c.DropAfter((tr.End + tr.LagS) * 1_000_000)
	for _, l := range tr.Phases.Logs {
		for _, p := range []string{l.Previous, l.Current} {
			if p == "" || l.Unreadable {
				continue
			}
			f, err := os.Open(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			err = c.ReadLog(f, l.Pod)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	phases.Analyze(c.Records)
	rows, notices := phases.Rows(phases.RunKey{}, phases.Groups(c.Records))
	if len(notices) > 0 {
		t.Fatal(notices)
	}
	if c.Stats.Records != tr.Phases.Records || c.BadValues != 0 {
		t.Fatalf("stats %+v, truth %d records", c.Stats, tr.Phases.Records)
	}
	want := tr.Phases.Rows
	if len(rows) != len(want) {
		t.Fatalf("%d rows, truth %d", len(rows), len(want))
	}
	for i, r := range rows {
		if r.Metric != want[i].Metric {
			t.Fatalf("row %d: %s, truth %s", i, r.Metric, want[i].Metric)
		}
		for j, f := range r.Measurements {
			if w := want[i].Measurements[j]; f.Key != w[0] || fmt.Sprint(f.Value) != w[1] {
				t.Errorf("%s %s: %v, truth %v", r.Metric, f.Key, f.Value, w)
			}
		}
	}
	s := phases.Summarize(c.Records)
	if s.AteletCheckpoint != tr.Phases.AteletCheckpoint || s.AteletRestore != tr.Phases.AteletRestore {
		t.Fatalf("summary %+v, truth %+v", s, tr.Phases)
	}
}
