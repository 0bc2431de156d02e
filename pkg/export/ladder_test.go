package export

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/internal/statstest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
)

// ladderRun copies the ladder scenario's Locust files and logs.txt.
func ladderRun(t *testing.T) (dir, promURL string, tr *simrun.Truth) {
	t.Helper()
	run, prom := cache.Prometheus(t, "ladder-steps")
	dir = copyRun(t, run)
	b, err := os.ReadFile(filepath.Join(run.Dir, simrun.LogsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs.txt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, prom.URL, run.Truth
}

func ladderArgs(dir, url string, tr *simrun.Truth, extra ...string) []string {
	return append([]string{"--run-dir", dir, "--prometheus-url", url, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts"}, extra...)
}

func metrics(rows []artifact.Row) string {
	var m []string
	for _, r := range rows {
		m = append(m, r.Metric)
	}
	return strings.Join(m, ",")
}

func TestExportLadder(t *testing.T) {
	dir, url, tr := ladderRun(t)
	jsonl := filepath.Join(dir, "stats.jsonl")
	e := newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	want := "server_summary,trial_summary,ladder_step_001,ladder_step_002,ladder_step_004,ladder_summary"
	rows := statstest.Rows(t, jsonl)
	if metrics(rows) != want {
		t.Fatalf("rows %s, want %s", metrics(rows), want)
	}
	for i, wr := range tr.Ladder.Rows {
		got := rows[2+i].Measurements
		for j, kv := range wr.Values {
			w := "null"
			if kv.Value != nil {
				w = *kv.Value
			}
			g := "missing"
			if j < len(got) {
				g = got[j].Key + "=" + valText(got[j].Value)
			}
			if g != kv.Key+"="+w {
				t.Errorf("%s: %s, want %s=%s", wr.Metric, g, kv.Key, w)
			}
		}
		if rows[2+i].Timestamp != artifact.DataTimestamp(tr.Start) || rows[2+i].Tag != tr.Tag || rows[2+i].TestName != tr.TestName {
			t.Errorf("row identity %+v", rows[2+i])
		}
	}
	for _, s := range []string{"ladder: 3 step row(s), 2 step(s) skipped", "step 5/5 has no end", "step 3/5 lasted"} {
		if !strings.Contains(e.out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, e.out.String())
		}
	}

	// --replace swaps every family this export produced, in place.
	e = newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr, "--replace"), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	if got := metrics(statstest.Rows(t, jsonl)); got != want {
		t.Fatalf("after --replace: %s", got)
	}
	// --no-ladder --replace keeps the old ladder rows.
	before, _ := os.ReadFile(jsonl)
	e = newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr, "--replace", "--no-ladder"), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	after := statstest.Rows(t, jsonl)
	if metrics(after) != want || strings.Contains(e.out.String(), "ladder:") {
		t.Fatalf("--no-ladder --replace: %s\n%s", metrics(after), e.out.String())
	}
	if b, _ := os.ReadFile(jsonl); !strings.Contains(string(b), strings.SplitN(string(before), "\n", 3)[2]) {
		t.Errorf("the kept ladder rows changed")
	}
}

func valText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "null"
}

func TestExportLadderFailedRead(t *testing.T) {
	dir, url, tr := ladderRun(t)
	e := newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, promfake.FailingProxy(t, url, "pg_stat_activity_count"), tr), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	rows := statstest.Rows(t, filepath.Join(dir, "stats.jsonl"))
	if metrics(rows) != "server_summary,trial_summary" {
		t.Fatalf("rows %s", metrics(rows))
	}
	// The other rows are exactly those of an export whose ladder reads
	// succeed.
	okDir, _, _ := ladderRun(t)
	if code := Main(context.Background(), ladderArgs(okDir, url, tr), newEnv(nil, nil).Env); code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	okRows := statstest.Rows(t, filepath.Join(okDir, "stats.jsonl"))
	for i := range 2 {
		a, _ := rows[i].MarshalLine()
		b, _ := okRows[i].MarshalLine()
		if string(a) != string(b) {
			t.Errorf("%s differs from the export without a failure:\n%s\n%s", rows[i].Metric, a, b)
		}
	}
	if !strings.Contains(e.out.String(), "no ladder rows written") || !strings.Contains(e.out.String(), "ladder: no rows (a read failed)") {
		t.Errorf("output:\n%s", e.out.String())
	}
}

func TestExportLadderProfileFlag(t *testing.T) {
	dir, url, tr := ladderRun(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("- key: a\n  query: x\n  reduce: median\n"), 0o644)
	e := newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr, "--ladder-profile", bad), e.Env); code != cli.ExitUsage {
		t.Fatalf("invalid profile: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "stats.jsonl")); err == nil {
		t.Error("a usage error wrote stats.jsonl")
	}
	good := filepath.Join(t.TempDir(), "good.yaml")
	os.WriteFile(good, []byte("- key: resume_rps\n  query: 'locust_requests_total{name=\"${resume_name}\", status=\"success\"}'\n  reduce: growth_rate\n"), 0o644)
	e = newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr, "--ladder-profile", good), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	rows := statstest.Rows(t, filepath.Join(dir, "stats.jsonl"))
	if len(rows) != 6 || len(rows[2].Measurements) != 8 || rows[2].Measurements[7].Key != "resume_rps" {
		t.Fatalf("user profile rows %s %v", metrics(rows), rows[2].Measurements.Keys())
	}
	o, err := FromEnv(dir, func(k string) string { return map[string]string{"LADDER": "false"}[k] })
	if err != nil || o.Ladder.Enabled {
		t.Errorf("LADDER=false: %+v %v", o.Ladder, err)
	}
	if _, err := ParseFlags([]string{"--run-dir", dir, "--log-tz", "Mars/Olympus"}, io.Discard); err == nil {
		t.Error("unknown --log-tz accepted")
	}
}

// A run re-harvested from the results store reads the store's logs.txt.
func TestExportLadderFromStore(t *testing.T) {
	dir, url, tr := ladderRun(t)
	root := t.TempDir()
	runDir := filepath.Join(root, "runs", tr.TestName, "run_date=2024-03-18", "run_ts="+itoa(tr.Start), "run_tag="+tr.Tag)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stats_history.csv", "stats.csv", "logs.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	e := newEnv(nil, nil)
	args := []string{"--store", "file://" + root, "--run", tr.TestName + "/" + itoa(tr.Start) + "/" + tr.Tag, "--out", out,
		"--prometheus-url", url, "--start", itoa(tr.Start), "--end", itoa(tr.End), "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts"}
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	rows := statstest.Rows(t, filepath.Join(out, "stats.jsonl"))
	if got := metrics(rows); !strings.HasSuffix(got, "ladder_step_001,ladder_step_002,ladder_step_004,ladder_summary") {
		t.Fatalf("rows %s", got)
	}
	knee, _ := rows[len(rows)-1].Measurements.Get("knee_step")
	if valText(knee) != "2" {
		t.Errorf("knee %v", knee)
	}
}

// A ladder run with phase logs: the ladder rows come after the phase rows
// (ladder-steps.md "Rows").
func TestExportLadderAfterPhases(t *testing.T) {
	dir, url, tr := ladderRun(t)
	logs, _ := phaseRun(t)
	jsonl := filepath.Join(dir, "stats.jsonl")
	e := newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr, "--phase-logs", filepath.Join(logs, simrun.PhaseLogDir)), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	got := metrics(statstest.Rows(t, jsonl))
	phaseAt, summaryAt, ladderAt := strings.Index(got, ",phase_"), strings.Index(got, "phase_breakdown_summary"), strings.Index(got, "ladder_step_001")
	if phaseAt < 0 || summaryAt < 0 || ladderAt < summaryAt || !strings.HasSuffix(got, "ladder_step_004,ladder_summary") {
		t.Errorf("rows %s: want server_summary, trial_summary, the phase rows, then the ladder rows", got)
	}
}
