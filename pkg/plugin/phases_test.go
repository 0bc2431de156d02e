package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/runs"
)

// phaseGroups are the stored run's phase groups: both layers, both ops.
var phaseGroups = []phases.Group{
	{Layer: "atelet", Op: "checkpoint", Class: "small", Kind: "full", Scope: "actor", Phase: "freeze", Count: 40, P50: 12.5, P90: 30, P95: 41.25, Max: 77},
	{Layer: "atelet", Op: "restore", Class: "small", Kind: "full", Scope: "actor", Phase: "total", Count: 38, P50: 101, P90: 180.5, P95: 199, Max: 420},
	{Layer: "ateom", Op: "restore", Class: "-", Kind: "lazy", Scope: "actor", Phase: "pages", Count: 38, P50: 55, P90: 70, P95: 80, Max: 95.125},
}

// storePhaseRows appends rows to the env's stored stats.jsonl.
func storePhaseRows(t testing.TB, e *env, rows ...artifact.Row) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(e.runDir(), runs.FileStatsJSONL), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range rows {
		line, err := r.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}

// phaseRowsOf are the groups as `density export` writes them.
func phaseRowsOf(e *env, groups []phases.Group) []artifact.Row {
	key := phases.RunKey{Timestamp: "2024-03-12T10:00:00Z", Tag: e.truth.Tag, TestName: e.truth.TestName}
	rows, _ := phases.Rows(key, groups)
	return rows
}

// frameGroups reads the phases table back as groups.
func frameGroups(t testing.TB, f *data.Frame) []phases.Group {
	t.Helper()
	var out []phases.Group
	for i := range field(t, f, "layer").Len() {
		s := func(name string) string { return field(t, f, name).At(i).(string) }
		p := func(name string) float64 { return field(t, f, name).At(i).(float64) }
		out = append(out, phases.Group{Layer: s("layer"), Op: s("op"), Class: s("class"), Kind: s("kind"), Scope: s("scope"), Phase: s("phase"),
			Count: int(field(t, f, "count").At(i).(int64)), P50: p("p50_ms"), P90: p("p90_ms"), P95: p("p95_ms"), Max: p("max_ms")})
	}
	for _, name := range []string{"p50_ms", "p90_ms", "p95_ms", "max_ms"} {
		if u := field(t, f, name).Config.Unit; u != "ms" {
			t.Errorf("%s unit %q, want ms", name, u)
		}
	}
	return out
}

// A stored run's phase rows come back as the table, row for row, filtered
// by op and layer, without a Prometheus request; the last set of the run's
// rows in stats.jsonl wins (another run's rows after it are not the run's)
// and the summary's counts are in the notices.
func TestPhasesStoredRun(t *testing.T) {
	e := newEnv(t, "steady")
	stale := phaseRowsOf(e, []phases.Group{{Layer: "atelet", Op: "restore", Phase: "old", Count: 1, P50: 1, P90: 1, P95: 1, Max: 1}})
	storePhaseRows(t, e, stale...)
	storePhaseRows(t, e, artifact.Row{Timestamp: "2024-03-12T10:00:00Z", Tag: e.truth.Tag, TestName: e.truth.TestName,
		Metric: artifact.MetricTrialSummary, Measurements: artifact.Object{{Key: "x", Value: "1"}}})
	rows := phaseRowsOf(e, phaseGroups)
	rc := 38
	// The summary row repeats the run's key: a row with another timestamp
	// belongs to another run (the one row rule).
	rows = append(rows, phases.SummaryRow(phases.RunKey{Timestamp: "2024-03-12T10:00:00Z", Tag: e.truth.Tag, TestName: e.truth.TestName},
		phases.Summary{Records: 116, PodsRead: &rc, AteletCheckpoint: 40, AteletRestore: 38}))
	storePhaseRows(t, e, rows...)
	// Another run's phase rows after them are not this run's.
	otherRun, _ := phases.Rows(phases.RunKey{Timestamp: "2024-03-13T10:00:00Z", Tag: e.truth.Tag, TestName: e.truth.TestName},
		[]phases.Group{{Layer: "atelet", Op: "restore", Phase: "other", Count: 2, P50: 2, P90: 2, P95: 2, Max: 2}})
	storePhaseRows(t, e, otherRun...)
	proxy := newCountingProxy(t, e.prom.URL)
	e.promURL = proxy.URL
	c := e.client(t)

	// The rows as FromRows reads them (class "-" is written "none").
	want, _ := phases.FromRows(rows)
	r := e.one(t, c, map[string]any{"queryType": "phases", "run": e.runID})
	if len(r.Frames) != 1 {
		t.Fatalf("%d frames", len(r.Frames))
	}
	if got := frameGroups(t, r.Frames[0]); !slices.Equal(got, want) {
		t.Errorf("table\n%+v\nwant\n%+v", got, want)
	}
	notes := noticeTexts(r)
	for _, w := range []string{"source: results store", "records 116", "pods_read 38", "pods_failed null", "atelet_restore_records 38"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notices lack %q:\n%s", w, notes)
		}
	}

	for _, tc := range []struct {
		op, layer string
		want      []phases.Group
	}{
		{"restore", "", want[1:]},
		{"checkpoint", "", want[:1]},
		{"", "ateom", want[2:]},
		{"restore", "atelet", want[1:2]},
		{"checkpoint", "ateom", nil},
	} {
		r := e.one(t, c, map[string]any{"queryType": "phases", "run": e.runID, "op": tc.op, "layer": tc.layer})
		if got := frameGroups(t, r.Frames[0]); !slices.Equal(got, tc.want) {
			t.Errorf("op %q layer %q: %+v, want %+v", tc.op, tc.layer, got, tc.want)
		}
	}
	if n := proxy.n.Load(); n != 0 {
		t.Errorf("phases of a stored run sent %d Prometheus requests, want 0", n)
	}

	for _, m := range []map[string]any{
		{"queryType": "phases", "run": e.runID, "op": "suspend"},
		{"queryType": "phases", "run": e.runID, "layer": "kubelet"},
		{"queryType": "phases", "run": e.runID, "op": "$op"},
		{"queryType": "phases", "run": e.runID, "op": 3},
	} {
		r := e.query(t, c, q("A", e.truth.Start, e.truth.End, m))["A"]
		if r.Status != backend.StatusBadRequest || r.ErrorSource != backend.ErrorSourceDownstream {
			t.Errorf("%v: status %d source %q (%v), want 400 downstream", m, r.Status, r.ErrorSource, r.Error)
		}
	}
}

// A run outside the results store (the dashboard range) and a stored run
// without phase rows: an empty table whose notice names `density export`.
func TestPhasesWithoutRows(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	for _, run := range []string{"range", e.runID} {
		r := e.one(t, c, map[string]any{"queryType": "phases", "run": run})
		if len(r.Frames) != 1 || r.Frames[0].Rows() != 0 {
			t.Fatalf("run %s: %d frames, want one empty table", run, len(r.Frames))
		}
		if len(r.Frames[0].Fields) != 12 {
			t.Errorf("run %s: %d columns, want the rows' 11 and group", run, len(r.Frames[0].Fields))
		}
		if n := noticeTexts(r); !strings.Contains(n, "density export") || !strings.Contains(n, "live pod logs") {
			t.Errorf("run %s: notices lack the export hint:\n%s", run, n)
		}
	}
}

// A recent run without stored phase rows, with Kubernetes access on: the
// phases come from the live pod logs (the simulator's, served through the
// Kubernetes API) and equal the rows an export writes from them; a run
// ended longer ago than liveFactsMaxAgeSeconds reads no log.
func TestPhasesLivePodLogs(t *testing.T) {
	e := newEnv(t, "steady")
	sc, _ := simrun.ByName("steady")
	sc.PhaseLogs = true
	dir := t.TempDir()
	tr, err := simrun.Generate(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Start != e.truth.Start || len(tr.Phases.Rows) == 0 {
		t.Fatalf("the phase-log run starts at %d, the env's at %d (%d rows)", tr.Start, e.truth.Start, len(tr.Phases.Rows))
	}
	pods, err := kubefake.SimulatedLogPods(dir, tr)
	if err != nil {
		t.Fatal(err)
	}
	srv := kubefake.NewTLSLogServer(pods)
	t.Cleanup(srv.Close)
	e.kubeToken(srv.URL(), srv.CACertPEM(), "t0ken")
	e.now = time.Unix(tr.End+600, 0)

	{
		run := e.runID
		r := e.one(t, e.client(t), map[string]any{"queryType": "phases", "run": run})
		if len(r.Frames) != 1 {
			t.Fatalf("run %s: %d frames", run, len(r.Frames))
		}
		rows, _ := phases.Rows(phases.RunKey{}, frameGroups(t, r.Frames[0]))
		if len(rows) != len(tr.Phases.Rows) {
			t.Fatalf("run %s: %d groups, the simulator's export has %d; notices %s", run, len(rows), len(tr.Phases.Rows), noticeTexts(r))
		}
		for i, w := range tr.Phases.Rows {
			if rows[i].Metric != w.Metric {
				t.Fatalf("row %d: %s, truth %s", i, rows[i].Metric, w.Metric)
			}
			for j, f := range rows[i].Measurements {
				if f.Key != w.Measurements[j][0] || f.Value != w.Measurements[j][1] {
					t.Errorf("%s.%s = %v, truth %v", rows[i].Metric, f.Key, f.Value, w.Measurements[j])
				}
			}
		}
		n := noticeTexts(r)
		for _, s := range []string{"source: the live pod logs", fmt.Sprintf("pods_read %d, pods_failed %d", tr.Phases.PodsRead, tr.Phases.PodsFailed)} {
			if !strings.Contains(n, s) {
				t.Errorf("run %s: notices lack %q:\n%s", run, s, n)
			}
		}
	}
	// A run outside the store (discovered from Prometheus, its end where
	// the user count says) reads the live logs too.
	delete(e.jsonData, "resultsStore")
	e.uid += "-nostore"
	r := e.one(t, e.client(t), map[string]any{"queryType": "phases", "run": "range"})
	if r.Frames[0].Rows() == 0 || !strings.Contains(noticeTexts(r), "source: the live pod logs (the run is not in the results store)") {
		t.Errorf("run outside the store: %d rows, notices %s", r.Frames[0].Rows(), noticeTexts(r))
	}
	reads := len(srv.Requests())

	old := newEnv(t, "steady")
	old.kubeToken(srv.URL(), srv.CACertPEM(), "t0ken")
	old.now = time.Unix(tr.End+7200, 0)
	r = old.one(t, old.client(t), map[string]any{"queryType": "phases", "run": old.runID})
	if r.Frames[0].Rows() != 0 || !strings.Contains(noticeTexts(r), "liveFactsMaxAgeSeconds") {
		t.Errorf("a run ended 2 h ago: %d rows, notices %s", r.Frames[0].Rows(), noticeTexts(r))
	}
	if got := len(srv.Requests()); got != reads {
		t.Errorf("%d Kubernetes requests for a run too old for live logs", got-reads)
	}
}
