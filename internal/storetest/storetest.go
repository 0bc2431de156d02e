// Package storetest builds a file:// results store of nightly runs of one
// test name for end-to-end tests of verdicts over stored runs: each run is
// simulated (internal/simrun), all runs are backfilled into one real
// Prometheus (internal/promtest), and each is exported by the real
// `density export` (pkg/export) straight into its store directory. From run
// ChangeAt on the simulated restores are slower, so restore_p99_s steps up
// there and nowhere else by construction.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/runs"
)

// day is the spacing of the nightly runs, in seconds.
const day = 86400

// firstStart is the first run's start: 2024-05-01 02:00:00Z.
const firstStart = 1714528800

// Options size the store; zero fields take the defaults.
type Options struct {
	Runs     int     // number of nightly runs (default 20)
	ChangeAt int     // 0-based index of the first run with slower restores (default 12)
	Slowdown float64 // restore duration factor from ChangeAt on (default 1.6)
	TestName string  // default "nightly-density"
}

func (o Options) withDefaults() Options {
	if o.Runs <= 0 {
		o.Runs = 20
	}
	if o.ChangeAt <= 0 {
		o.ChangeAt = 12
	}
	if o.Slowdown <= 0 {
		o.Slowdown = 1.6
	}
	if o.TestName == "" {
		o.TestName = "nightly-density"
	}
	return o
}

// Run is one stored run.
type Run struct {
	ID    string // the store run id
	Tag   string
	Start int64
	Dir   string // the run's directory in the store
	Slow  bool   // restores slowed down
	Truth *simrun.Truth
}

// Store is the built store and the Prometheus that still holds every run.
type Store struct {
	Root     string // the store's root directory
	URL      string // file://Root
	TestName string
	Runs     []Run // ordered by start
	Prom     *promtest.Server
}

// Scenario is nightly run i of the store: two worker nodes of two pods, a
// 2-minute ramp to 120 users, 30 minutes steady, a 1-minute ramp down,
// scraped every 30 s, without the distractor cgroups (lean); its seed and
// so its noise differ per night. The steady window holds a few hundred
// restores, so the rare stuck restore the simulator models (beyond the
// 60 s top bucket) does not decide p99.
func Scenario(o Options, i int) simrun.Scenario {
	o = o.withDefaults()
	s := simrun.Scenario{
		Name: fmt.Sprintf("nightly-%02d", i), Seed: int64(9000 + i), TestName: o.TestName,
		Tag: fmt.Sprintf("%07x", 0xc0ffe00+i), Start: firstStart + int64(i)*day,
		LagS: 60, ScrapeS: 30, PreS: 120, PostS: 120, Lean: true,
		NodePods: []int{2, 2}, PodCapacity: 40,
		Load: []simrun.LoadPhase{{DurS: 120, To: 120}, {DurS: 1800, To: 120}, {DurS: 60, To: 0}},
	}
	if i >= o.ChangeAt {
		s.RestoreSlowdown = o.Slowdown
	}
	return s
}

// Build generates, backfills and exports the store's runs; the Prometheus
// stops and the files go in t.Cleanup.
func Build(t testing.TB, o Options) *Store {
	t.Helper()
	o = o.withDefaults()
	t0 := time.Now()
	gen := t.TempDir()
	root := t.TempDir()
	st := &Store{Root: root, URL: "file://" + root, TestName: o.TestName}
	var oms []string
	for i := range o.Runs {
		sc := Scenario(o, i)
		dir := filepath.Join(gen, sc.Name)
		tr, err := simrun.Generate(sc, dir)
		if err != nil {
			t.Fatalf("generating %s: %v", sc.Name, err)
		}
		oms = append(oms, filepath.Join(dir, simrun.OMFile))
		st.Runs = append(st.Runs, Run{
			ID: runs.StoreRunID(o.TestName, tr.Start, tr.Tag), Tag: tr.Tag, Start: tr.Start,
			Dir:  filepath.Join(root, filepath.FromSlash(runs.StorePath{TestName: o.TestName, Tag: tr.Tag, RunTS: tr.Start}.Prefix())),
			Slow: sc.RestoreSlowdown > 0, Truth: tr,
		})
	}
	generated := time.Since(t0)
	st.Prom = promtest.StartRuns(t, oms...)
	t1 := time.Now()
	for i, r := range st.Runs {
		exportRun(t, st.Prom.URL, filepath.Dir(oms[i]), r)
	}
	t.Logf("store of %d runs: generated in %v, exported in %v", len(st.Runs), generated.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
	return st
}

// exportRun runs `density export` in the run's generated directory against
// the Prometheus and copies the artifacts it wrote, with a status.json, into
// the run's store directory. The Locust files stay out of the store: the
// verdicts read only the artifacts, and listing a store reads every stored
// stats_history.csv.
func exportRun(t testing.TB, promURL, genDir string, r Run) {
	t.Helper()
	exportSimulated(t, "export of "+r.ID, genDir, promURL, r.Truth, "--no-phase-breakdown")
	if err := os.MkdirAll(r.Dir, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		t.Fatal(err)
	}
	for _, f := range []string{runs.FileServerSummary, runs.FileStatsJSONL, runs.FilePSISeries} {
		b, err := os.ReadFile(filepath.Join(genDir, f)) // #nosec G304 -- reads a path the operator or the test harness named
		if err != nil {
			t.Fatalf("export of %s: %v", r.ID, err)
		}
		if err := os.WriteFile(filepath.Join(r.Dir, f), b, 0o644); err != nil { // #nosec G306 G703 -- files written are artifacts or fixtures for others to read; path built from the caller's own directory
			t.Fatal(err)
		}
	}
	status := []byte(`{"locust_exit_code": 0, "stats_generated": true}` + "\n")
	if err := os.WriteFile(filepath.Join(r.Dir, runs.FileStatus), status, 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		t.Fatal(err)
	}
}

// exportSimulated runs the real `density export` on the simulated run
// tr generated in dir, against the Prometheus holding it, without cluster
// facts, report or wait, plus the flags extra; a failed export fails the
// test, named by what.
func exportSimulated(t testing.TB, what, dir, promURL string, tr *simrun.Truth, extra ...string) {
	t.Helper()
	args := append([]string{"--run-dir", dir, "--prometheus-url", promURL,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10),
		"--atelet-lag-s", strconv.FormatInt(tr.LagS, 10), "--test-name", tr.TestName, "--tag", tr.Tag},
		extra...)
	args = append(args, "--no-cluster-facts", "--no-report", "--no-wait")
	var out bytes.Buffer
	if code := export.Main(context.Background(), args, export.DefaultEnv(io.Discard, &out)); code != cli.ExitOK {
		t.Fatalf("%s: exit %d: %s", what, code, out.String())
	}
}
