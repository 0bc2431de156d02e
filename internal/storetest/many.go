package storetest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/substrate/density/internal/demo"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// ManyTest is the test name of the runs Many writes.
const ManyTest = "nightly-many"

// manyCohorts are the two cohorts Many alternates its runs between, one
// sandbox class each, starting at 02:00 and 03:00 UTC.
func manyCohorts() []demo.Series {
	return []demo.Series{
		{Test: ManyTest, Sandbox: "gvisor", Hour: 2, Seed: 11, Scale: 1},
		{Test: ManyTest, Sandbox: "microvm", Hour: 3, Seed: 12, Scale: 0.93},
	}
}

// Many is a results store of n nightly runs of one test written directly
// from one template run's artifacts (not one simulated export per run),
// values varied per run from a fixed seed.
type Many struct {
	Root     string // the store's root directory
	URL      string // file://Root
	TestName string
	Runs     []demo.StoreRun // ordered by start
	PromURL  string          // BuildMany: the template's Prometheus (up until the test ends)
}

// Template exports the simulator's ladder run with its pod logs (ladder
// and phase rows in its stats.jsonl, a psi_series.json) through a real
// Prometheus and the real `density export`, appends the Locust rows the
// orchestrator adds to a stored stats.jsonl (one per endpoint, rows the
// export keeps as foreign), and returns its directory: the template Many
// writes its runs from, and the Prometheus holding the run (up until the
// test ends). It costs one simulated export.
func Template(t testing.TB) (string, string) {
	t.Helper()
	sc := simrun.LadderSteps()
	sc.PhaseLogs = true
	dir := t.TempDir()
	tr, err := simrun.Generate(sc, dir)
	if err != nil {
		t.Fatalf("generating the template run: %v", err)
	}
	prom := promtest.StartRuns(t, filepath.Join(dir, simrun.OMFile))
	exportSimulated(t, "exporting the template run", dir, prom.URL, tr, "--phase-logs", filepath.Join(dir, simrun.PhaseLogDir))
	var locust []artifact.Row
	for i, ep := range []string{"suspend", "resume", "status", "Aggregated"} {
		locust = append(locust, artifact.Row{Timestamp: artifact.DataTimestamp(tr.Start), Tag: tr.Tag, TestName: tr.TestName, Metric: "locust_stats",
			Measurements: artifact.Object{{Key: "name", Value: ep}, {Key: "requests", Value: num(12000 * float64(i+1))},
				{Key: "failures", Value: num(3 * float64(i))}, {Key: "rps", Value: num(20.5 * float64(i+1))},
				{Key: "p50_ms", Value: num(31 + float64(i))}, {Key: "p95_ms", Value: num(120 + 7*float64(i))}, {Key: "p99_ms", Value: num(300 + 11*float64(i))}}})
	}
	if err := artifact.AppendRows(context.Background(), filepath.Join(dir, runs.FileStatsJSONL), locust...); err != nil {
		t.Fatalf("appending the Locust rows: %v", err)
	}
	return dir, prom.URL
}

// WriteMany writes n nightly runs from the template run in templateDir
// into a new store under root: runs alternate between two cohorts of one
// test, one night apart per cohort, the newest on the night before now.
func WriteMany(templateDir, root string, n int, now time.Time) (*Many, error) {
	tmpl, err := demo.ReadTemplate(templateDir)
	if err != nil {
		return nil, err
	}
	m := &Many{Root: root, URL: "file://" + root, TestName: ManyTest}
	cohorts := manyCohorts()
	nights := (n + len(cohorts) - 1) / len(cohorts)
	last := now.UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour).Unix()
	for i := range n {
		night, s := i/len(cohorts), cohorts[i%len(cohorts)]
		start := last - int64(nights-1-night)*day + s.Hour*3600
		r, err := tmpl.WriteRun(root, s, night, start, demo.PlainWrite)
		if err != nil {
			return nil, fmt.Errorf("writing run %d of %d: %w", i, n, err)
		}
		m.Runs = append(m.Runs, r)
	}
	return m, nil
}

// BuildMany is WriteMany into a temporary directory from a fresh template.
func BuildMany(t testing.TB, n int, now time.Time) *Many {
	t.Helper()
	tmpl, promURL := Template(t)
	t0 := time.Now()
	m, err := WriteMany(tmpl, t.TempDir(), n, now)
	if err != nil {
		t.Fatal(err)
	}
	m.PromURL = promURL
	t.Logf("store of %d runs written from one template in %v", n, time.Since(t0).Round(time.Millisecond))
	return m
}

// num is a measurement's number as stats.jsonl holds it (text).
func num(x float64) string { return artifact.FormatFloat(x) }
