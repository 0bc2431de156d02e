package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/internal/statstest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/runs"
)

// phaseRun generates the steady scenario with pod logs.
func phaseRun(t *testing.T) (string, *simrun.Truth) {
	t.Helper()
	sc, _ := simrun.ByName("steady")
	sc.PhaseLogs = true
	dir := t.TempDir()
	tr, err := simrun.Generate(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tr
}

// logServer serves the simulated pod logs through the Kubernetes API.
func logServer(t *testing.T, dir string, tr *simrun.Truth) (*kubefake.LogServer, kubernetes.Interface) {
	t.Helper()
	pods, err := kubefake.SimulatedLogPods(dir, tr)
	if err != nil {
		t.Fatal(err)
	}
	s := kubefake.NewLogServer(pods)
	t.Cleanup(s.Close)
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// phaseLines returns the phase family rows of stats.jsonl, in order.
func phaseLines(t *testing.T, path string) []*artifact.Row {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*artifact.Row
	var server *artifact.Row
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		r, err := artifact.ParseRow([]byte(line))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Metric == artifact.MetricServerSummary {
			server = r
		}
		if strings.HasPrefix(r.Metric, "phase_") {
			if server == nil || r.Timestamp != server.Timestamp || r.Tag != server.Tag || r.TestName != server.TestName {
				t.Fatalf("%s does not follow server_summary with its timestamp, tag and test_name", r.Metric)
			}
			out = append(out, r)
		}
	}
	return out
}

// checkPhaseRows compares the rows with the simulator's truth exactly
// (pods nil: the records came from files).
func checkPhaseRows(t *testing.T, rows []*artifact.Row, tr *simrun.Truth, pods bool) {
	t.Helper()
	pt := tr.Phases
	if len(rows) != len(pt.Rows)+1 {
		t.Fatalf("%d phase rows, truth %d + summary", len(rows), len(pt.Rows))
	}
	for i, w := range pt.Rows {
		r := rows[i]
		if r.Metric != w.Metric {
			t.Fatalf("row %d: %s, truth %s", i, r.Metric, w.Metric)
		}
		if len(r.Measurements) != len(w.Measurements) {
			t.Fatalf("%s: %d measurements", r.Metric, len(r.Measurements))
		}
		for j, f := range r.Measurements {
			if f.Key != w.Measurements[j][0] || f.Value != w.Measurements[j][1] {
				t.Errorf("%s.%s = %v, truth %v", r.Metric, f.Key, f.Value, w.Measurements[j])
			}
		}
	}
	s := rows[len(rows)-1]
	str := func(n int) any { return strconv.Itoa(n) }
	want := artifact.Object{
		{Key: "records", Value: str(pt.Records)}, {Key: "pods_read", Value: nil}, {Key: "pods_failed", Value: nil},
		{Key: "atelet_checkpoint_records", Value: str(pt.AteletCheckpoint)}, {Key: "atelet_restore_records", Value: str(pt.AteletRestore)},
	}
	if pods {
		want[1].Value, want[2].Value = str(pt.PodsRead), str(pt.PodsFailed)
	}
	if s.Metric != "phase_breakdown_summary" || len(s.Measurements) != len(want) {
		t.Fatalf("summary %+v", s)
	}
	for i, f := range s.Measurements {
		if f != want[i] {
			t.Errorf("summary %s = %v, want %v", f.Key, f.Value, want[i])
		}
	}
}

// End to end on a simulated run: the rows equal the simulator's truth,
// from --phase-logs files and through the Kubernetes API.
func TestPhaseBreakdownSimulated(t *testing.T) {
	dir, tr := phaseRun(t)
	prom := promfake.New(t, promfake.Empty(0))
	base := []string{"--prometheus-url", prom.URL, "--no-wait"}

	t.Run("phase-logs", func(t *testing.T) {
		out := t.TempDir()
		e := newEnv(nil, nil)
		args := append([]string{"--run-dir", dir, "--out", out, "--phase-logs", filepath.Join(dir, simrun.PhaseLogDir)}, base...)
		if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, e.errOut.String())
		}
		checkPhaseRows(t, phaseLines(t, filepath.Join(out, "stats.jsonl")), tr, false)
		if !strings.Contains(e.out.String(), strconv.Itoa(tr.Phases.Late)+" record(s) after the run's end + atelet lag were dropped") {
			t.Errorf("no late-record notice:\n%s", e.out.String())
		}
		// pods_read and pods_failed are null from files, each with its reason.
		if !strings.Contains(e.out.String(), "pods_read, pods_failed: "+podsNotRead) {
			t.Errorf("no pod-count notice printed:\n%s", e.out.String())
		}
		if got := podCountNotices(t, out); got != "pods_read,pods_failed" {
			t.Errorf("notices.json pod-count reasons for %q, want pods_read,pods_failed", got)
		}
	})

	t.Run("PHASE_LOGS", func(t *testing.T) {
		out := t.TempDir()
		// One path per line: the directory's files given one by one.
		var files []string
		for _, l := range tr.Phases.Logs {
			for _, p := range []string{l.Previous, l.Current} {
				if p != "" && !l.Unreadable {
					files = append(files, filepath.Join(dir, p))
				}
			}
		}
		o, err := FromEnv(dir, func(k string) string {
			return map[string]string{"PHASE_LOGS": strings.Join(files, "\n") + "\n", "PROMETHEUS_URL": prom.URL, "OUT": out, "NO_WAIT": "true"}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(nil, nil)
		if code := Run(context.Background(), o, e.Env); code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, e.errOut.String())
		}
		checkPhaseRows(t, phaseLines(t, filepath.Join(out, "stats.jsonl")), tr, false)
	})

	t.Run("kubernetes API", func(t *testing.T) {
		out := t.TempDir()
		srv, c := logServer(t, dir, tr)
		e := newEnv(c, nil)
		args := append([]string{"--run-dir", dir, "--out", out}, base...)
		if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, e.errOut.String())
		}
		checkPhaseRows(t, phaseLines(t, filepath.Join(out, "stats.jsonl")), tr, true)
		if got := podCountNotices(t, out); got != "" {
			t.Errorf("pods were read, yet notices.json says %q are null", got)
		}
		var logs, previous int
		for _, r := range srv.Requests() {
			if strings.HasSuffix(strings.SplitN(r, "?", 2)[0], "/log") {
				logs++
				if !strings.Contains(r, "sinceTime=2024-03-12T09%3A59%3A00Z") || !strings.Contains(r, "limitBytes=268435456") {
					t.Errorf("log request %s", r)
				}
				if strings.Contains(r, "previous=true") {
					previous++
				}
			}
		}
		if logs != len(tr.Phases.Logs)+1 || previous != 1 {
			t.Errorf("%d log requests (%d previous) for %d pods", logs, previous, len(tr.Phases.Logs))
		}
	})

	t.Run("without trial_summary", func(t *testing.T) {
		// status.json says Locust produced no stats: no trial_summary row,
		// the phase rows still.
		run := t.TempDir()
		if err := os.CopyFS(run, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, "status.json"), []byte(`{"locust_exit_code": 1, "stats_generated": false}`), 0o644); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		e := newEnv(nil, nil)
		args := append([]string{"--run-dir", run, "--out", out, "--phase-logs", filepath.Join(run, simrun.PhaseLogDir)}, base...)
		if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, e.errOut.String())
		}
		rows := statstest.Rows(t, filepath.Join(out, "stats.jsonl"))
		if strings.Contains(metrics(rows), "trial_summary") {
			t.Errorf("rows %s: trial_summary written for a run without stats", metrics(rows))
		}
		checkPhaseRows(t, phaseLines(t, filepath.Join(out, "stats.jsonl")), tr, false)
	})

	t.Run("off", func(t *testing.T) {
		for _, args := range [][]string{{"--no-phase-breakdown"}, {"--no-cluster-facts"}} {
			out := t.TempDir()
			_, c := logServer(t, dir, tr)
			e := newEnv(c, nil)
			if code := Main(context.Background(), append(append([]string{"--run-dir", dir, "--out", out}, base...), args...), e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			if rows := phaseLines(t, filepath.Join(out, "stats.jsonl")); len(rows) != 0 {
				t.Errorf("%v: %d phase rows", args, len(rows))
			}
		}
	})
}

// A bad --phase-logs path is a usage error: exit 2, nothing written.
func TestPhaseLogsBadPath(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"stats.csv": covStats})
	before := snapshotDir(t, dir)
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", "http://127.0.0.1:9", "--start", itoa(covStart),
		"--end", itoa(covEnd), "--phase-logs", filepath.Join(dir, "missing")}, e.Env)
	if code != cli.ExitUsage || !strings.Contains(e.errOut.String(), "--phase-logs") {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	if after := snapshotDir(t, dir); len(after) != len(before) {
		t.Fatalf("files written: %v", after)
	}
}

// --replace swaps the phase family only when this export produced it;
// other rows stay byte for byte.
func TestPhaseReplace(t *testing.T) {
	prom := promfake.New(t, promfake.Empty(0))
	dir := t.TempDir()
	logs := filepath.Join(t.TempDir(), "a.log")
	writeFiles(t, filepath.Dir(logs), map[string]string{"a.log": `{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1.5}` + "\n"})
	writeFiles(t, dir, map[string]string{"stats.csv": covStats})
	other := `{"timestamp": "1", "tag": "x", "test_name": "y", "metric": "phase_foreign", "measurements": {}}`
	if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(other+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) {
		t.Helper()
		e := newEnv(nil, nil)
		args := append([]string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(covStart), "--end", itoa(covEnd), "--no-cluster-facts"}, extra...)
		if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, e.errOut.String())
		}
	}
	metrics := func() []string {
		b, _ := os.ReadFile(filepath.Join(dir, "stats.jsonl"))
		var out []string
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			r, err := artifact.ParseRow(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Metric)
		}
		return out
	}
	run("--phase-logs", logs)
	run("--replace", "--phase-logs", logs)
	want := "phase_foreign server_summary trial_summary phase_atelet_restore_none_none_none_total phase_breakdown_summary"
	if got := strings.Join(metrics(), " "); got != want {
		t.Fatalf("after replace with phases:\n%s\nwant\n%s", got, want)
	}
	// No phase rows produced (--no-cluster-facts without --phase-logs): the
	// old phase rows stay.
	run("--replace")
	if got := strings.Join(metrics(), " "); got != want {
		t.Fatalf("after replace without phases:\n%s\nwant\n%s", got, want)
	}
}

// Where the phase records come from, for every combination of the
// switches (phase-breakdown.md "Decisions"): files win, --no-cluster-facts
// and a --store re-harvest keep the API off unless --phase-breakdown was
// given explicitly.
func TestPhaseSource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		source string
		off    string // a substring of the notice; "" = none
	}{
		{"default: the API", Options{PhaseBreakdown: true, ClusterFacts: true}, "api", ""},
		{"--no-phase-breakdown", Options{ClusterFacts: true}, "", ""},
		{"--no-phase-breakdown with --phase-logs", Options{ClusterFacts: true, PhaseLogs: []string{"x"}}, "", "--phase-logs ignored"},
		{"--phase-logs", Options{PhaseBreakdown: true, ClusterFacts: true, PhaseLogs: []string{"x"}}, "files", ""},
		{"--phase-logs without cluster facts", Options{PhaseBreakdown: true, PhaseLogs: []string{"x"}}, "files", ""},
		{"--no-cluster-facts", Options{PhaseBreakdown: true}, "", "--no-cluster-facts"},
		{"--store", Options{PhaseBreakdown: true, ClusterFacts: true, Store: "file:///r"}, "", "for a stored run"},
		{"--store --phase-breakdown", Options{PhaseBreakdown: true, PhaseBreakdownSet: true, ClusterFacts: true, Store: "file:///r"}, "api", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source, off := tc.o.phaseSource()
			if source != tc.source || (tc.off == "") != (off == "") || !strings.Contains(off, tc.off) {
				t.Errorf("phaseSource() = %q, %q; want %q and a notice with %q", source, off, tc.source, tc.off)
			}
		})
	}
}

// podCountNotices are the fields of the phase_breakdown warnings in out's
// notices.json that say the pod counts were not read, comma-joined.
func podCountNotices(t *testing.T, out string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, runs.FileNotices))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := artifact.ReadNotices(b)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, n := range ns {
		if n.Block == noticePhases && n.Severity == artifact.SeverityWarning && n.Text == podsNotRead {
			fields = append(fields, n.Field)
		}
	}
	return strings.Join(fields, ",")
}
