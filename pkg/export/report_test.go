package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/report"
)

// runReportExport runs an export of the coverage run into a fresh --out
// directory with the extra flags and environment.
func runReportExport(t *testing.T, prepare func(out string), vars map[string]string, extra ...string) (string, *testEnv) {
	t.Helper()
	srv := promfake.New(t, promfake.Empty(0))
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "artifacts")
	writeFiles(t, dir, map[string]string{"stats.csv": covStats, "stats_history.csv": covHistory(covStart)})
	if prepare != nil {
		prepare(out)
	}
	e := newEnv(nil, vars)
	args := append([]string{"--run-dir", dir, "--out", out, "--prometheus-url", srv.URL,
		"--start", itoa(covStart), "--end", itoa(covEnd), "--no-cluster-facts"}, extra...)
	var code int
	if vars != nil { // mage export: every flag from the environment
		env := map[string]string{"RUN_DIR": dir, "OUT": out, "PROMETHEUS_URL": srv.URL,
			"START": itoa(covStart), "END": itoa(covEnd), "CLUSTER_FACTS": "false"}
		for k, v := range vars {
			env[k] = v
		}
		o, err := FromEnv("", func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		code = Run(context.Background(), o, e.Env)
	} else {
		code = Main(context.Background(), args, e.Env)
	}
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	return out, e
}

// The export writes report.html beside server_summary.json by default,
// with the run's figures and notices in it.
func TestReportWrittenByDefault(t *testing.T) {
	out, e := runReportExport(t, nil, nil)
	page, err := os.ReadFile(filepath.Join(out, report.FileName))
	if err != nil {
		t.Fatalf("%v\n%s", err, e.out.String())
	}
	for _, want := range []string{"<!DOCTYPE html>", "default-src 'none'", `data-key="cluster_packing_p50"`, "Null fields and why"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if !strings.Contains(e.out.String(), "wrote "+filepath.Join(out, report.FileName)) {
		t.Errorf("no line for report.html in:\n%s", e.out.String())
	}
}

// --no-report and REPORT=false write no report.html.
func TestNoReport(t *testing.T) {
	for name, run := range map[string]func() string{
		"--no-report":  func() string { out, _ := runReportExport(t, nil, nil, "--no-report"); return out },
		"REPORT=false": func() string { out, _ := runReportExport(t, nil, map[string]string{"REPORT": "false"}); return out },
	} {
		t.Run(name, func(t *testing.T) {
			out := run()
			if _, err := os.Stat(filepath.Join(out, report.FileName)); !os.IsNotExist(err) {
				t.Errorf("report.html written (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(out, "server_summary.json")); err != nil {
				t.Error(err)
			}
		})
	}
}

// A report.html that cannot be written is a notice, not a failed export.
func TestReportUnwritableIsANotice(t *testing.T) {
	out, e := runReportExport(t, func(out string) {
		// A directory where the file goes: the rename cannot replace it.
		if err := os.MkdirAll(filepath.Join(out, report.FileName, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}, nil)
	if !strings.Contains(e.out.String(), "notice: report.html not written") {
		t.Errorf("no notice in:\n%s", e.out.String())
	}
	if _, err := os.Stat(filepath.Join(out, "stats.jsonl")); err != nil {
		t.Error(err)
	}
}

// With Prometheus down, the user info and query string of its URL reach no
// file the export writes (report.html lists every notice) and no line it
// prints: every read fails naming the URL, and only its host is shown.
func TestReportHasNoURLSecret(t *testing.T) {
	host := strings.TrimPrefix(promfake.ClosedURL(t), "http://")
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "artifacts")
	writeFiles(t, dir, map[string]string{"stats.csv": covStats, "stats_history.csv": covHistory(covStart)})
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--out", out,
		"--prometheus-url", "http://bob:hunter2@" + host + "/prom?access_token=TOPSECRET",
		"--start", itoa(covStart), "--end", itoa(covEnd), "--no-cluster-facts", "--timeout", "2s"}, e.Env)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	page, err := os.ReadFile(filepath.Join(out, report.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(host)) {
		t.Fatalf("report.html does not name the Prometheus host %s: the reads did not fail as meant", host)
	}
	files := map[string][]byte{"stdout": e.out.Bytes(), "stderr": e.errOut.Bytes()}
	for _, d := range []string{dir, out} {
		err := filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			files[p] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		for _, s := range []string{"TOPSECRET", "hunter2"} {
			if n := bytes.Count(b, []byte(s)); n > 0 {
				t.Errorf("%s holds %q %d times", name, s, n)
			}
		}
	}
}
