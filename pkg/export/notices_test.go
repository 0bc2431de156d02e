package export

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

var updateNotices = flag.Bool("update-notices", false, "rewrite testdata/notices.golden.json")

// The export writes notices.json beside server_summary.json: on the
// simulator's steady run with the cluster unread (--no-cluster-facts) it
// holds why each cluster fact and Kubernetes count is null, as the status
// lines say, byte for byte the golden file; the report shows the same.
func TestExportWritesNotices(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tr := run.Truth
	dir := copyRun(t, run)
	args := []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts"}
	e := newEnv(nil, nil)
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, runs.FileNotices))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := artifact.ReadNotices(b)
	if err != nil {
		t.Fatalf("notices.json does not read back: %v", err)
	}
	golden := filepath.Join("testdata", "notices.golden.json")
	if *updateNotices {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-notices)", err)
	}
	if string(b) != string(want) {
		t.Errorf("notices.json differs from %s (-update-notices rewrites it):\n%s", golden, b)
	}
	// Every null block or field of the run has its reason: the cluster
	// facts and the oom_events Kubernetes counts.
	has := func(block, field string) bool {
		for _, n := range ns {
			if n.Block == block && n.Field == field && n.Severity == artifact.SeverityWarning && strings.Contains(n.Text, "--no-cluster-facts") {
				return true
			}
		}
		return false
	}
	for _, bf := range [][2]string{{"cluster_facts", "node_count"}, {harvest.BlockOOM, "evicted"}} {
		if !has(bf[0], bf[1]) {
			t.Errorf("no warning for %s.%s naming --no-cluster-facts in %+v", bf[0], bf[1], ns)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "no notice recorded") {
		t.Error("the export's report has a null without its reason")
	}
}

// With Prometheus unreachable every block's reason is recorded, and the
// URL's user info, query string and the bearer token never are.
func TestNoticesUnreachableHoldNoSecrets(t *testing.T) {
	closed := promfake.ClosedURL(t)
	u := strings.Replace(closed, "://", "://alice:pa55word@", 1) + "/?api_key=k3y"
	run := cache.Generated(t, "steady")
	dir := copyRun(t, run)
	e := newEnv(nil, map[string]string{"PROMETHEUS_BEARER_TOKEN": "t0ken-secret"})
	code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", u, "--no-cluster-facts", "--timeout", "2s", "--header", "X-Scope-OrgID: tenant-s3cret"}, e.Env)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, runs.FileNotices))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"alice", "pa55word", "k3y", "t0ken-secret", "tenant-s3cret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("notices.json holds %q:\n%s", secret, b)
		}
	}
	ns, err := artifact.ReadNotices(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range harvest.BlockNames() {
		found := false
		for _, n := range ns {
			found = found || (n.Block == block && n.Severity == artifact.SeverityWarning)
		}
		if !found && block != harvest.BlockOOM {
			t.Errorf("no warning recorded for the unread block %s", block)
		}
	}
}

// A notices.json that cannot be written fails the export (exit 1, the
// error naming the file); the artifacts written before it are kept. A
// directory stands where the file goes, so the rename cannot replace it
// even for root, whom file modes do not stop.
func TestExportNoticesUnwritable(t *testing.T) {
	run := cache.Generated(t, "steady")
	dir, out := copyRun(t, run), filepath.Join(t.TempDir(), "artifacts")
	notices := filepath.Join(out, runs.FileNotices)
	if err := os.MkdirAll(filepath.Join(notices, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--out", out, "--prometheus-url", promfake.ClosedURL(t),
		"--no-cluster-facts", "--timeout", "1s"}, e.Env)
	if code != cli.ExitWrite {
		t.Fatalf("exit %d, want %d\n%s%s", code, cli.ExitWrite, e.out.String(), e.errOut.String())
	}
	if want := "density export: writing " + notices + ": "; !strings.Contains(e.errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, e.errOut.String())
	}
	for name, check := range map[string]func([]byte) error{
		runs.FileServerSummary: func(b []byte) error { _, err := artifact.ReadServerSummary(b); return err },
		runs.FilePSISeries:     func(b []byte) error { _, err := artifact.ReadPSISeries(b); return err },
		runs.FileStatsJSONL: func([]byte) error {
			if rows := readRows(t, filepath.Join(out, runs.FileStatsJSONL)); len(rows) == 0 {
				return errors.New("no rows")
			}
			return nil
		},
	} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err == nil {
			err = check(b)
		}
		if err != nil {
			t.Errorf("%s not kept: %v", name, err)
		}
	}
	if fi, err := os.Stat(notices); err != nil || !fi.IsDir() {
		t.Errorf("notices.json is no longer the directory: %v", err)
	}
	des, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), "."+runs.FileNotices) {
			t.Errorf("temporary file %s left behind", de.Name())
		}
	}
}
