package runs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
)

// storedRunFiles writes a run's artifacts into dir as an export leaves
// them: server_summary.json of (test, tag, start), and a stats.jsonl
// holding two exports of that run with another run's rows and Locust's
// between them; psi is psi_series.json's content ("" for none).
func storedRunFiles(t *testing.T, dir, test, tag string, start int64, psi string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := artifact.ServerMetadata{TestName: test, Tag: tag, Start: start, End: start + 600, SteadyStart: start + 60, SteadyEnd: start + 540}
	summary, err := artifact.ServerSummaryJSON(md, harvest.EmptyResult())
	if err != nil {
		t.Fatal(err)
	}
	row := func(ts, tag, metric, v string) string {
		r := artifact.Row{Timestamp: ts, Tag: tag, TestName: test, Metric: metric, Measurements: artifact.Object{{Key: "v", Value: v}}}
		b, err := r.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ts, other := artifact.DataTimestamp(start), artifact.DataTimestamp(start+86400)
	lines := []string{
		row(ts, tag, "server_summary", "1"), row(ts, tag, "trial_summary", "1"),
		row(ts, tag, "phase_a", "1"), row(ts, tag, "phase_b", "1"), row(ts, tag, "phase_breakdown_summary", "1"),
		row(other, tag, "server_summary", "X"), row(other, tag, "gate_x", "X"), row(other, tag, "gate_summary", "X"),
		row(ts, tag, "locust_requests", "L"),
		row(ts, tag, "server_summary", "2"), row(ts, tag, "trial_summary", "2"),
		row(ts, tag, "phase_b", "2"), row(ts, tag, "phase_breakdown_summary", "2"),
		row(ts, tag, "ladder_step_001", "2"), row(ts, tag, "ladder_summary", "2"),
	}
	files := map[string]string{FileServerSummary: string(summary), FileStatsJSONL: strings.Join(lines, "\n") + "\n"}
	if psi != "" {
		files[FilePSISeries] = psi
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// metrics names rows as metric:v.
func metrics(rows ...artifact.Row) string {
	var out []string
	for _, r := range rows {
		v, _ := r.Measurements.Get("v")
		out = append(out, r.Metric+":"+v.(string))
	}
	return strings.Join(out, ",")
}

const wantRows = "server_summary:2,trial_summary:2,phase_b:2,phase_breakdown_summary:2,ladder_step_001:2,ladder_summary:2"

func TestStoredRunReader(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	prefix := filepath.Join(root, "runs", "resume", "run_date=2024-03-12", "run_ts=1710237600", "run_tag=abc")
	// The export's start (from stats_history.csv) is 7 s after run_ts: the
	// rows carry the recorded start, not the layout's.
	storedRunFiles(t, prefix, "resume", "abc", tsA+7, `{"step_s": "x"}`)
	st, err := OpenStore(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	run, err := st.Run(ctx, IDLatest, PartAll)
	if err != nil {
		t.Fatal(err)
	}
	if run.Entry.ID != "resume/1710237600/abc" || run.Entry.RowKey == nil || run.Entry.RowKey.Timestamp != artifact.DataTimestamp(tsA+7) {
		t.Errorf("entry %s, row key %+v", run.Entry.ID, run.Entry.RowKey)
	}
	if run.Summary == nil || run.Summary.Meta.Start != tsA+7 {
		t.Errorf("summary %+v", run.Summary)
	}
	if got := metrics(run.Rows.All()...); got != wantRows {
		t.Errorf("rows %s, want %s", got, wantRows)
	}
	p := run.Problem(FilePSISeries)
	if run.PSI != nil || p == nil || p.Kind != Malformed || !errors.Is(p.Err, artifact.ErrPSISeries) {
		t.Errorf("malformed psi_series.json: %v %+v", run.PSI, p)
	}
	if len(run.Problems) != 1 {
		t.Errorf("problems %v", run.Problems)
	}

	// Only the rows: nothing else is read.
	rowsOnly, err := st.Run(ctx, "resume/1710237600/abc", PartRows)
	if err != nil {
		t.Fatal(err)
	}
	if rowsOnly.Summary != nil || rowsOnly.PSI != nil || len(rowsOnly.Problems) != 0 || metrics(rowsOnly.Rows.All()...) != wantRows {
		t.Errorf("rows only: %+v", rowsOnly)
	}

	// The same directory synced from the store: the layout names it.
	dir, err := Dir(prefix, PartAll)
	if err != nil {
		t.Fatal(err)
	}
	if dir.Entry.TestName != "resume" || dir.Entry.Tag != "abc" || dir.Entry.Start != tsA || dir.Entry.Source != SourceDir {
		t.Errorf("dir entry %+v", dir.Entry.Run)
	}
	if got := metrics(dir.Rows.All()...); got != wantRows {
		t.Errorf("dir rows %s, want %s", got, wantRows)
	}
	if p := dir.Problem(FilePSISeries); p == nil || p.Kind != Malformed {
		t.Errorf("dir problems %v", dir.Problems)
	}

	// A plain directory: the metadata names it; a stats.jsonl that cannot
	// be read is an Unreadable problem, not an error.
	plain := filepath.Join(t.TempDir(), "run")
	storedRunFiles(t, plain, "resume", "abc", tsA, "")
	d2, err := Dir(plain, PartAll)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Entry.Start != tsA || d2.Entry.TestName != "resume" || d2.PSI != nil || len(d2.Problems) != 0 {
		t.Errorf("plain dir: %+v %v", d2.Entry.Run, d2.Problems)
	}
	if err := os.Remove(filepath.Join(plain, FileStatsJSONL)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(plain, FileStatsJSONL), 0o755); err != nil {
		t.Fatal(err)
	}
	d3, err := Dir(plain, PartRows)
	if err != nil {
		t.Fatal(err)
	}
	if d3.Entry.Artifacts.StatsJSONL {
		t.Error("a directory named stats.jsonl is not the file")
	}
	if _, err := Dir(filepath.Join(plain, "missing"), PartAll); err == nil {
		t.Error("a missing run directory must be an error")
	}

	// Lookup errors are typed.
	if _, err := st.Run(ctx, "no/such", PartAll); !errors.Is(err, ErrInvalidRunID) {
		t.Errorf("malformed id: %v", err)
	}
	if _, err := st.Run(ctx, "resume/1710237601/abc", PartAll); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestStoredRunUnreadableRows(t *testing.T) {
	dir := t.TempDir()
	storedRunFiles(t, dir, "resume", "abc", tsA, "")
	if err := os.Chmod(filepath.Join(dir, FileStatsJSONL), 0o000); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(filepath.Join(dir, FileStatsJSONL)); err == nil {
		_ = f.Close()
		t.Skip("running as a user who reads any file")
	}
	s, err := Dir(dir, PartAll)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Problem(FileStatsJSONL)
	if p == nil || p.Kind != Unreadable || !errors.Is(p, os.ErrPermission) || s.Summary == nil {
		t.Errorf("unreadable stats.jsonl: %+v %v", p, s.Summary)
	}
}

func TestParseStorePath(t *testing.T) {
	for path, want := range map[string]string{
		"runs/t/run_date=2024-03-12/run_ts=1710237600/run_tag=abc":          "t 1710237600 abc",
		"/data/runs/t/run_date=2024-03-12/run_ts=1710237600/run_tag=abc/":   "t 1710237600 abc",
		"x/runs/t/run_date=d/run_ts=1/run_tag=v1":                           "t 1 v1",
		"runs/t/run_date=2024-03-12/run_ts=17x/run_tag=abc":                 "",
		"runs/t/run_date=2024-03-12/run_ts=1710237600/run_tag=":             "",
		"runs/t/run_date=2024-03-12/run_ts=1710237600/abc":                  "",
		"myruns/t/run_date=2024-03-12/run_ts=1710237600/run_tag=abc":        "",
		"runs/t/run_date=2024-03-12/run_ts=1710237600/run_tag=abc/leftover": "",
		"/tmp/run": "",
	} {
		got := ""
		if l, ok := ParseStorePath(path); ok {
			got = l.TestName + " " + itoa(l.RunTS) + " " + l.Tag
		}
		if got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	p := StorePath{TestName: "t", Tag: "abc", RunTS: 1710237600}
	if got, want := p.Prefix(), "runs/t/run_date=2024-03-12/run_ts=1710237600/run_tag=abc/"; got != want {
		t.Errorf("Prefix: %q, want %q", got, want)
	}
	if back, ok := ParseStorePath(p.Prefix()); !ok || back != p {
		t.Errorf("ParseStorePath(Prefix) = %+v %v, want %+v", back, ok, p)
	}
}

// notices.json is read back as its entries; a run without one records
// none (an older run: nothing says why), and one that does not parse is a
// Malformed problem, never a failed read of the run.
func TestStoredRunNotices(t *testing.T) {
	ns := []artifact.Notice{{Block: harvest.BlockNodePSI, Field: "cpu_stall_pct", Severity: artifact.SeverityWarning, Text: "null: the read failed"}}
	good, err := artifact.NoticesJSON(ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, doc string
		recorded  bool
		problem   ProblemKind
	}{
		{"recorded", string(good), true, 0},
		{"older run", "", false, 0},
		{"malformed", `[{"block": 1}]`, false, Malformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			storedRunFiles(t, dir, "resume", "abc", tsA, "")
			if c.doc != "" {
				if err := os.WriteFile(filepath.Join(dir, FileNotices), []byte(c.doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Dir(dir, PartAll)
			if err != nil {
				t.Fatal(err)
			}
			if s.NoticesRecorded != c.recorded || s.Summary == nil {
				t.Errorf("NoticesRecorded %v (want %v), summary read %v", s.NoticesRecorded, c.recorded, s.Summary != nil)
			}
			if c.recorded && (len(s.Notices) != 1 || s.Notices[0] != ns[0]) {
				t.Errorf("notices %+v, want %+v", s.Notices, ns)
			}
			p := s.Problem(FileNotices)
			switch {
			case c.problem == 0 && p != nil:
				t.Errorf("problem %v", p)
			case c.problem != 0 && (p == nil || p.Kind != c.problem || !errors.Is(p, artifact.ErrNotices)):
				t.Errorf("problem %+v, want kind %d wrapping ErrNotices", p, c.problem)
			}
			if s2, _ := Dir(dir, PartSummary); s2.NoticesRecorded || s2.Problem(FileNotices) != nil {
				t.Error("notices.json read though not asked for")
			}
		})
	}
}
