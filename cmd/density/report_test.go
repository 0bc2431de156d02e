package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/report"
	"github.com/substrate/density/pkg/runs"
)

const testStart = int64(1710237600) // 2024-03-12T10:00:00Z

// writeStoredRun writes the artifacts an export leaves in dir for a run
// whose packing p50 is p50; psi adds psi_series.json.
func writeStoredRun(t *testing.T, dir string, p50 float64, psi bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := artifact.ServerMetadata{TestName: "resume-storm", Tag: "abc123", PromURL: "http://127.0.0.1:9090",
		Start: testStart, End: testStart + 600, SteadyStart: testStart + 120, SteadyEnd: testStart + 540, LagS: 70}
	r := harvest.EmptyResult()
	r.Packing.Summary.P50 = &p50
	for i := int64(0); i <= 60; i++ {
		ratio := float64(i) / 60
		r.Packing.Timeseries = append(r.Packing.Timeseries, harvest.PackingPoint{Timestamp: testStart + 10*i, Busy: float64(i), Total: 60, Ratio: &ratio})
	}
	doc, err := artifact.ServerSummaryJSON(md, r)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"server_summary.json": doc}
	if psi {
		b, err := artifact.PSISeriesJSON(artifact.NewPSISeries(r, md.Start, md.End))
		if err != nil {
			t.Fatal(err)
		}
		files[runs.FilePSISeries] = b
	}
	v := "42.5"
	phase := func(metric string) artifact.Row {
		return artifact.Row{Timestamp: artifact.DataTimestamp(md.Start), Tag: md.Tag, TestName: md.TestName, Metric: metric,
			Measurements: artifact.Object{{Key: "p95_ms", Value: "12.5"}}}
	}
	// An older export's phase set, then this one's: the last set wins.
	rows := []artifact.Row{phase("phase_old"), artifact.ServerSummaryRow(md, r), phase("phase_new"),
		{Timestamp: artifact.DataTimestamp(md.Start), Tag: md.Tag, TestName: md.TestName, Metric: "gate_summary",
			Measurements: artifact.Object{{Key: "verdict", Value: "pass"}}},
		{Timestamp: artifact.DataTimestamp(md.Start), Tag: "other", TestName: md.TestName, Metric: "gate_summary",
			Measurements: artifact.Object{{Key: "verdict", Value: "of another run"}}},
		frontier.Row(frontier.Measurements{{Key: "actors_per_node", Value: &v}, {Key: "actors_per_vcpu", Value: nil}}, md.Start, md.Tag, md.TestName)}
	var jsonl []byte
	for _, row := range rows {
		line, err := row.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		jsonl = append(append(jsonl, line...), '\n')
	}
	files["stats.jsonl"] = jsonl
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"report"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func readReport(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, report.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReportFromRunDir(t *testing.T) {
	dir := t.TempDir()
	writeStoredRun(t, dir, 0.75, true)
	code, out, errOut := runCmd(t, "--run-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page := readReport(t, dir)
	if strings.Contains(page, "of another run") {
		t.Error("a row of another run shown")
	}
	if !strings.Contains(page, `data-key="phase_new.p95_ms"`) || strings.Contains(page, "phase_old") || strings.Contains(page, "of another run") {
		t.Error("the report must show the run's last phase set, and no rows that are not the run's (an older phase set, another run's gate row)")
	}
	for _, want := range []string{`data-key="gate_summary.verdict">pass<`, `data-key="actors_per_node">42.5<`, `data-key="cluster_packing_p50"`, ">0.75<", "no series in psi_series.json node_psi.cpu"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "psi_series.json is not available") {
		t.Error("PSI notice with psi_series.json present")
	}
	if !strings.Contains(out, "wrote "+filepath.Join(dir, report.FileName)) {
		t.Errorf("stdout %q", out)
	}
}

func TestReportWithoutPSISeriesAndWithBaseline(t *testing.T) {
	dir, base, out := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "r")
	writeStoredRun(t, dir, 0.75, false)
	writeStoredRun(t, base, 0.5, true)
	code, stdout, errOut := runCmd(t, "--run-dir", dir, "--baseline", base, "--out", out, "--prometheus-url", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page := readReport(t, out)
	for _, want := range []string{"psi_series.json is not available", `data-baseline-key="cluster_packing_p50">0.5<`, `class="better">better<`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(stdout, "notice: psi_series.json unreadable") {
		t.Errorf("stdout %q", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, report.FileName)); !os.IsNotExist(err) {
		t.Error("--out elsewhere wrote into the run directory")
	}
}

func TestReportFromStore(t *testing.T) {
	root := t.TempDir()
	prefix := filepath.Join(root, "runs", "resume-storm", "run_date=2024-03-12")
	writeStoredRun(t, filepath.Join(prefix, "run_ts=1710237600", "run_tag=abc123"), 0.75, true)
	writeStoredRun(t, filepath.Join(prefix, "run_ts=1710237600", "run_tag=base"), 0.5, true)
	t.Chdir(t.TempDir())
	code, _, errOut := runCmd(t, "--store", "file://"+root, "--run", "resume-storm/1710237600/abc123", "--baseline-run", "resume-storm/1710237600/base")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page := readReport(t, "resume-storm-1710237600")
	if !strings.Contains(page, "results store") || !strings.Contains(page, `data-baseline-key="cluster_packing_p50">0.5<`) {
		t.Error("report from the store lacks its source or baseline")
	}
	// A run directory against a baseline in a store.
	dir := t.TempDir()
	writeStoredRun(t, dir, 0.75, true)
	code, _, errOut = runCmd(t, "--run-dir", dir, "--baseline-store", "file://"+root, "--baseline-run", "resume-storm/1710237600/base")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(readReport(t, dir), `data-baseline-key="cluster_packing_p50">0.5<`) {
		t.Error("--baseline-store baseline not shown")
	}
}

func TestReportExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "give one of --run-dir or --store"},
		{[]string{"--run-dir", dir, "--store", "file:///x"}, 2, "give one of"},
		{[]string{"--store", "file://" + dir}, 2, "--store needs --run"},
		{[]string{"--run-dir", dir, "--baseline-run", "x"}, 2, "--baseline-run needs --baseline-store or --store"},
		{[]string{"--run-dir", dir, "--baseline-store", "file://" + dir}, 2, "--baseline-store needs --baseline-run"},
		{[]string{"--store", "file://" + dir, "--run", "no/such"}, 2, "run"},
		{[]string{"--store", "file://" + dir, "--run", "t/1710237600/x"}, 2, "not found"},
		{[]string{"--run-dir", dir, "extra"}, 2, "unexpected argument"},
		{[]string{"--bogus"}, 2, "bogus"},
		{[]string{"--run-dir", dir, "--max-concurrency", "0"}, 2, "--max-concurrency must be at least 1"},
		{[]string{"--run-dir", dir}, 2, "server_summary.json"},
		{[]string{"--run-dir", filepath.Join(dir, "missing")}, 2, "run directory"},
	} {
		code, _, errOut := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	if code, out, _ := runCmd(t, "--help"); code != 0 || !strings.Contains(out, "--baseline") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}

// psiSections is the node and pod PSI sections of a report.
func psiSections(t *testing.T, page string) string {
	t.Helper()
	a, b := strings.Index(page, `<section id="psi">`), strings.Index(page, `<section id="working_set">`)
	if a < 0 || b < a {
		t.Fatal("report without PSI sections")
	}
	return page[a:b]
}

// A stored run without psi_series.json gets its PSI bands from the
// Prometheus that still holds it (here the export's own real Prometheus):
// the same PSI sections as the export's report drew from psi_series.json.
func TestReportPSIFromPrometheus(t *testing.T) {
	cache := promtest.NewCache()
	t.Cleanup(func() { _ = cache.Close() })
	r, prom := cache.Prometheus(t, "steady")
	tr := r.Truth
	dir := t.TempDir()
	for _, name := range []string{"stats_history.csv", "stats.csv"} {
		b, err := os.ReadFile(filepath.Join(r.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"export", "--run-dir", dir, "--prometheus-url", prom.URL,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10), "--test-name", tr.TestName,
		"--tag", tr.Tag, "--atelet-lag-s", strconv.FormatInt(tr.LagS, 10), "--no-cluster-facts"}, &out, &errOut); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	exported := psiSections(t, readReport(t, dir))
	if !strings.Contains(exported, "<svg") {
		t.Fatal("the export's report draws no PSI chart")
	}
	if err := os.Remove(filepath.Join(dir, runs.FilePSISeries)); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "--run-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "PSI bands read from Prometheus at "+prom.URL) {
		t.Errorf("stdout %q", stdout)
	}
	if got := psiSections(t, readReport(t, dir)); got != exported {
		t.Error("PSI sections from Prometheus differ from the export's (from psi_series.json)")
	}
	// The Prometheus flag group: every request carries --header and the
	// bearer token.
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	target, _ := url.Parse(prom.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Scope-OrgID")+" "+r.Header.Get("Authorization")]++
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	if code, _, stderr := runCmd(t, "--run-dir", dir, "--prometheus-url", proxy.URL, "--header", "X-Scope-OrgID: tenant-1",
		"--bearer-token-file", tok, "--max-concurrency", "2"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(seen) != 1 || seen["tenant-1 Bearer s3cret"] == 0 {
		t.Errorf("requests by header and token: %v", seen)
	}
	// Prometheus gone: the summaries with a notice.
	code, stdout, _ = runCmd(t, "--run-dir", dir, "--prometheus-url", "http://127.0.0.1:1")
	if code != 0 || !strings.Contains(stdout, "PSI bands not read from Prometheus") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	if !strings.Contains(readReport(t, dir), "psi_series.json is not available") {
		t.Error("no PSI notice without psi_series.json and Prometheus")
	}
}

// A file of the run directory (or --baseline's) that is a symbolic link is
// refused before anything is read: exit 2 (report only reads there), no
// report.html written. The link targets here are another run's valid
// artifacts, which the report would otherwise read as this run's. The run
// directory itself may be a link.
func TestReportRefusesSymlinkedFiles(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "other")
	writeStoredRun(t, other, 0.99, true)
	for _, name := range []string{runs.FileServerSummary, runs.FileStatsJSONL, runs.FilePSISeries} {
		for _, role := range []string{"run", "baseline"} {
			t.Run(role+" "+name, func(t *testing.T) {
				run, base := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "base")
				writeStoredRun(t, run, 0.75, true)
				writeStoredRun(t, base, 0.5, true)
				dir := map[string]string{"run": run, "baseline": base}[role]
				link := filepath.Join(dir, name)
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(other, name), link); err != nil {
					t.Fatal(err)
				}
				code, _, errOut := runCmd(t, "--run-dir", run, "--baseline", base, "--prometheus-url", "none")
				if code != 2 || !strings.Contains(errOut, link+" is a symbolic link") {
					t.Errorf("exit %d, stderr %q; want 2 naming the link", code, errOut)
				}
				if _, err := os.Lstat(filepath.Join(run, report.FileName)); !os.IsNotExist(err) {
					t.Errorf("report.html written: %v", err)
				}
			})
		}
	}
	t.Run("linked run directory", func(t *testing.T) {
		real := filepath.Join(t.TempDir(), "real")
		writeStoredRun(t, real, 0.75, true)
		link := filepath.Join(t.TempDir(), "run")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runCmd(t, "--run-dir", link); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(readReport(t, real), ">0.75<") {
			t.Error("report through the linked run directory lacks the run's packing")
		}
	})
}

// The credentials of the Prometheus flag group go only to a URL the
// operator named: without --prometheus-url, the prom_url recorded in
// server_summary.json (which whoever writes a run into the store chooses) is
// read without --header, --bearer-token-file or $PROMETHEUS_BEARER_TOKEN,
// and a notice says so.
func TestReportSendsNoCredentialToTheRecordedURL(t *testing.T) {
	capture := promfake.New(t, promfake.Empty(0))
	dir := t.TempDir()
	writeStoredRun(t, dir, 0.75, false)
	path := filepath.Join(dir, runs.FileServerSummary)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"prom_url": "http://127.0.0.1:9090"`), []byte(`"prom_url": "`+capture.URL+`/"`), 1)
	if !bytes.Contains(b, []byte(capture.URL)) {
		t.Fatalf("prom_url not replaced in %s", b)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("FILE-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"environment token": nil,
		"flags":             {"--header", "X-Scope-OrgID: tenant-ci", "--bearer-token-file", tok},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PROMETHEUS_BEARER_TOKEN", "CI-SECRET")
			before := capture.Count()
			code, stdout, stderr := runCmd(t, append([]string{"--run-dir", dir}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			reqs := capture.Requests()[before:]
			if len(reqs) == 0 {
				t.Fatal("the recorded prom_url was not read at all; the test expects a read without credentials")
			}
			t.Logf("%d requests to the recorded prom_url", len(reqs))
			withCreds := 0
			for _, r := range reqs {
				if r.Header.Get("Authorization") != "" || r.Header.Get("X-Scope-OrgID") != "" {
					withCreds++
				}
			}
			if withCreds != 0 {
				t.Errorf("%d of %d requests to the recorded prom_url carry credentials (first: %v)", withCreds, len(reqs), reqs[0].Header)
			}
			if !strings.Contains(stdout, "without credentials") {
				t.Errorf("no notice says the recorded URL was read without credentials:\n%s", stdout)
			}
		})
	}
}

// `density report` shows each null with the reason notices.json recorded;
// a run without one (older runs) says no notice was recorded, and one that
// does not parse says so and still makes the report.
func TestReportShowsRecordedNotices(t *testing.T) {
	recorded, err := artifact.NoticesJSON([]artifact.Notice{
		{Block: harvest.BlockNodePSI, Field: "cpu_stall_pct", Severity: artifact.SeverityWarning, Text: "null: the read failed: connection refused"},
		{Block: "trial_summary", Field: "actors_per_vcpu", Severity: artifact.SeverityWarning, Text: "allocatable_cores is null"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		notices []byte
		want    []string
	}{
		{"recorded", recorded, []string{"node_psi.cpu_stall_pct: null: the read failed: connection refused", "trial_summary.actors_per_vcpu: allocatable_cores is null"}},
		{"older run", nil, []string{"no notice recorded (the run has no notices.json)"}},
		{"malformed", []byte(`[{"block": 1}]`), []string{"no notice recorded (notices.json does not parse"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeStoredRun(t, dir, 0.75, true)
			if c.notices != nil {
				if err := os.WriteFile(filepath.Join(dir, runs.FileNotices), c.notices, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, _, errOut := runCmd(t, "--run-dir", dir)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			page := readReport(t, dir)
			for _, want := range c.want {
				if !strings.Contains(page, want) {
					t.Errorf("report lacks %q", want)
				}
			}
		})
	}
}
