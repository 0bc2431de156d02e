package plugin

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// instance is the datasource instance the plugin serves for e (after a
// query of e).
func instance(t testing.TB, e *env) *Datasource {
	t.Helper()
	v, ok := instances.Load(e.uid)
	if !ok {
		t.Fatalf("no instance of %s", e.uid)
	}
	return v.(*Datasource)
}

// readStore is a store of n nightly runs (the exported steady run moved by
// 1..n days: server_summary.json, stats.jsonl, status.json each) and an env
// over it whose clock is a day after the last run.
func readStore(t testing.TB, n int) (e *env, ids []string, from, to int64) {
	t.Helper()
	e = newEnv(t, "steady")
	exported := exportedRun(t, e)
	for k := 1; k <= n; k++ {
		id, _ := storeShifted(t, e, exported, int64(k))
		ids = append(ids, id)
	}
	e.jsonData["discoverRuns"] = false
	e.now = time.Unix(e.truth.Start+int64(n+1)*day, 0)
	return e, ids, e.truth.Start + day - 600, e.truth.Start + int64(n)*day + 600
}

// opens runs the queries over gRPC and returns the stored files the
// instance opened for them.
func opens(t testing.TB, e *env, qs ...backend.DataQuery) int64 {
	t.Helper()
	c := e.client(t)
	var before int64
	if v, ok := instances.Load(e.uid); ok {
		before = v.(*Datasource).catalogs.Store.Opened()
	}
	for ref, r := range e.query(t, c, qs...) {
		if r.Error != nil {
			t.Fatalf("query %s: %v", ref, r.Error)
		}
	}
	return instance(t, e).catalogs.Store.Opened() - before
}

// A finished stored run is read once per datasource instance: the first
// summary over the range opens each stored file at most once (the listing
// peeks server_summary.json and reads status.json when it describes a run,
// the stored-run cache reads stats.jsonl), the identical next query opens
// none, and compare, gates (latest against the latest baseline) and
// changePoints over runs already read open
// none either (acks.yaml, beside the runs, is read once per liveTTL).
func TestStoredRunReadOnce(t *testing.T) {
	const n = 30
	e, ids, from, to := readStore(t, n)
	e.jsonData["gates"] = "gates:\n  - key: restore_p99_s\n    max_regression_pct: 10\n"
	summary := q("S", from, to, map[string]any{"queryType": "summary", "run": "range", "testName": e.truth.TestName})
	// Files per run: server_summary.json, stats.jsonl, status.json.
	if got := opens(t, e, summary); got > 3*n {
		t.Errorf("first summary over %d runs opened %d stored files, want at most %d (each once)", n, got, 3*n)
	} else {
		t.Logf("summary over %d runs: %d stored files opened cold", n, got)
	}
	if got := opens(t, e, summary); got != 0 {
		t.Errorf("repeated summary opened %d stored files, want 0", got)
	}
	compare := q("C", from, to, map[string]any{"queryType": "compare", "baseline": ids[0], "candidate": ids[n-1]})
	if got := opens(t, e, compare); got != 0 {
		t.Errorf("compare after summary opened %d stored files, want 0", got)
	}
	gates := q("G", from, to, map[string]any{"queryType": "gates", "run": "latest", "testName": e.truth.TestName, "baseline": "latest"})
	// The baseline's listing covers every run of the test: it describes
	// the env's own run before the range (at most its 3 files), and reads
	// no run's rows again.
	if got := opens(t, e, gates); got > 3 {
		t.Errorf("gates of the latest run against the latest baseline after summary opened %d stored files, want at most the run before the range", got)
	}
	cps := q("P", from, to, map[string]any{"queryType": "changePoints", "testName": e.truth.TestName})
	// changePoints also searches the run before the range (the env's own
	// run, described by gates: its stats.jsonl); acks.yaml (absent here) is
	// looked up once, and kept liveTTL.
	if got := opens(t, e, cps); got > 3+1 {
		t.Errorf("changePoints after summary opened %d stored files, want at most the run before the range and acks.yaml", got)
	}
	if got := opens(t, e, cps); got != 0 {
		t.Errorf("repeated changePoints opened %d stored files, want 0", got)
	}
}

// changePoints alone, cold: each run's files at most once (the n runs and
// the env's own run before the range, 3 files each, and acks.yaml).
func TestChangePointsReadOnce(t *testing.T) {
	const n = 30
	e, _, from, to := readStore(t, n)
	cps := q("P", from, to, map[string]any{"queryType": "changePoints", "testName": e.truth.TestName})
	got := opens(t, e, cps)
	if got > 3*(n+1)+1 {
		t.Errorf("first changePoints over %d runs opened %d stored files, want at most %d", n, got, 3*(n+1)+1)
	}
	t.Logf("changePoints over %d runs: %d stored files opened cold", n, got)
	if got := opens(t, e, cps); got != 0 {
		t.Errorf("repeated changePoints opened %d stored files, want 0", got)
	}
}

// storedRunCacheMiB bounds the cache: at 0 nothing is kept, so a repeated
// query reads its runs' stats.jsonl again.
func TestStoredRunCacheBound(t *testing.T) {
	const n = 10
	e, _, from, to := readStore(t, n)
	e.jsonData["storedRunCacheMiB"] = 0
	e.uid = fmt.Sprintf("%s-nocache", e.uid)
	cps := q("P", from, to, map[string]any{"queryType": "changePoints", "testName": e.truth.TestName})
	opens(t, e, cps)
	if got := opens(t, e, cps); got < n {
		t.Errorf("with storedRunCacheMiB 0 a repeated changePoints opened %d stored files, want every run's stats.jsonl (%d)", got, n)
	}
}

// changePoints searches the runs that start at or before the range's end
// (runs before the range too, none after it) and returns the points whose
// run starts in the range.
func TestChangePointsSearchUpToRangeEnd(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	ids := storeNightly(t, e.storeRoot, 20, 12, end)
	start := func(i int) int64 { return end - int64(20-i)*86400 }
	for _, c := range []struct {
		name     string
		from, to int64
		points   []string
		searched string
	}{
		{"change inside, history before", start(11), start(14), []string{ids[12]}, "15 stored runs of nightly up to the end of the range searched"},
		{"change before the range", start(15), end, nil, "20 stored runs of nightly up to the end of the range searched"},
		{"range before the change", start(0), start(10), nil, "11 stored runs of nightly up to the end of the range searched"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.query(t, e.client(t), q("A", c.from, c.to, map[string]any{"queryType": "changePoints", "testName": "nightly"}))["A"]
			if r.Error != nil {
				t.Fatal(r.Error)
			}
			f := r.Frames[0]
			var got []string
			for i := range f.Rows() {
				got = append(got, field(t, f, "run").At(i).(string))
			}
			if !slices.Equal(got, c.points) {
				t.Errorf("change points at %v, want %v", got, c.points)
			}
			if text := strings.Join(notices(r.Frames), "\n"); !strings.Contains(text, c.searched) {
				t.Errorf("no notice says %q:\n%s", c.searched, text)
			}
		})
	}
}

// TestStoredReadCounts measures, when DENSITY_READ_COUNT_RUNS is set, the
// stored files opened and the wall time of summary and changePoints over
// that many stored runs, cold then warm (numbers for docs, not a gate).
func TestStoredReadCounts(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("DENSITY_READ_COUNT_RUNS"))
	if n <= 0 {
		t.Skip("set DENSITY_READ_COUNT_RUNS to measure")
	}
	for _, qt := range []string{"summary", "changePoints"} {
		e, _, from, to := readStore(t, n)
		model := map[string]any{"queryType": qt, "testName": e.truth.TestName}
		if qt == "summary" {
			model["run"] = "range"
		}
		qq := q("A", from, to, model)
		for _, pass := range []string{"cold", "warm"} {
			t0 := time.Now()
			got := opens(t, e, qq)
			t.Logf("%s over %d runs, %s: %d stored files opened, %v", qt, n, pass, got, time.Since(t0).Round(time.Millisecond))
		}
		if qt == "summary" { // then the other query type over the same runs
			t0 := time.Now()
			got := opens(t, e, q("B", from, to, map[string]any{"queryType": "changePoints", "testName": e.truth.TestName}))
			t.Logf("changePoints after summary over %d runs: %d stored files opened, %v", n, got, time.Since(t0).Round(time.Millisecond))
		}
	}
}

// The rows a store listing reads (runs without server_summary.json, whose
// window comes from the trial_summary row of stats.jsonl) go straight into
// the stored-run cache, the one holder of stored rows: changePoints over
// 20 such runs opens each stats.jsonl once (when listed) and computes
// nothing in the cache, and the identical next query opens none.
func TestListedRowsKeptInTheOneCache(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	storeNightly(t, e.storeRoot, 20, 12, end)
	e.jsonData["discoverRuns"] = false
	cps := q("P", end-30*day, end, map[string]any{"queryType": "changePoints", "testName": "nightly"})
	if got := opens(t, e, cps); got > 20+1 {
		t.Errorf("changePoints over 20 runs opened %d stored files, want each stats.jsonl once and acks.yaml", got)
	}
	hits, misses, entries := instance(t, e).cache.rows.stats()
	if misses != 0 || entries != 20 {
		t.Errorf("stored-run cache: %d hits, %d misses, %d entries; want the 20 runs kept from the listing, none read again", hits, misses, entries)
	}
	if got := opens(t, e, cps); got != 0 {
		t.Errorf("repeated changePoints opened %d stored files, want 0", got)
	}
}
