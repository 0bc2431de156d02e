package command

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/statstest"
	"github.com/substrate/density/pkg/cli"
)

func testEnv() (Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}, &out, &errOut
}

func writeRun(t *testing.T, dir string, restore, checkpoint string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"Type": "GET", "Name": "/", "locust_row": 1}` + "\n" +
		statstest.Line("2026-12-01T10:00:00Z", "abc", "server_summary", "cluster_packing_p50", "0.72",
			"restore_p99_s", restore, "checkpoint_p99_s", checkpoint, "oom_events_pod", "0", "psi_cpu_stall_p50", "null") +
		statstest.Line("2026-12-01T10:00:00Z", "abc", "trial_summary", "machine_type", "n2", "node_count", "3", "run_start", "1764583200")
	if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

const gatesYAML = `gates:
  - key: cluster_packing_p50
    min: 0.8
  - key: restore_p99_s
    max: 5
  - key: checkpoint_p99_s
    max_regression_pct: 10
  - key: oom_events_pod
    max: 0
  - key: ladder_summary.max_sustained_rps
    min: 800
    allow_null: true
`

func TestCheck(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	runDir, baseDir := filepath.Join(tmp, "run"), filepath.Join(tmp, "base")
	writeRun(t, runDir, "4.1", "2.5")
	writeRun(t, baseDir, "4.0", "2.0")
	gates := filepath.Join(tmp, "gates.yaml")
	if err := os.WriteFile(gates, []byte(gatesYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	junitPath := filepath.Join(tmp, "gates.xml")
	env, out, errOut := testEnv()
	args := []string{"--gates", gates, "--run-dir", runDir, "--baseline", baseDir, "--junit", junitPath}
	if code := check(ctx, args, env); code != cli.ExitGateFailed {
		t.Fatalf("exit %d, want 3; stderr %s", code, errOut)
	}
	t.Logf("density check output:\n%s", out)
	data, _ := os.ReadFile(filepath.Join(runDir, "stats.jsonl"))
	if n := strings.Count(string(data), `"metric": "gate_`); n != 6 {
		t.Fatalf("%d gate rows, want 6:\n%s", n, data)
	}
	// Again: the gate family is replaced, not appended.
	env, _, _ = testEnv()
	check(ctx, args, env)
	again, _ := os.ReadFile(filepath.Join(runDir, "stats.jsonl"))
	if !bytes.Equal(data, again) {
		t.Errorf("second check changed stats.jsonl:\n%s", again)
	}
	xmlData, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("JUnit:\n%s", xmlData)
	if py := "/usr/bin/python3"; exec.Command(py, "-c", "import junitparser").Run() == nil {
		got, err := exec.Command(py, "-c", `
import sys
from junitparser import JUnitXml
x = JUnitXml.fromfile(sys.argv[1])
s = list(x)[0]
print(s.name, s.tests, s.failures, len(list(s)))
`, junitPath).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != "density gates 5 2 5" {
			t.Errorf("junitparser: %v %q", err, got)
		}
	}

	// Usage errors: exit 2 and nothing written.
	for name, c := range map[string]struct {
		gates string
		args  []string
	}{
		"malformed":       {"gates: [", nil},
		"unknown field":   {"gates:\n  - key: restore_p99_s\n    maxx: 1\n", nil},
		"no baseline":     {gatesYAML, []string{}},
		"missing run dir": {"gates:\n  - key: restore_p99_s\n    max: 1\n", []string{"--run-dir", filepath.Join(tmp, "nope")}},
	} {
		g := filepath.Join(tmp, "bad.yaml")
		os.WriteFile(g, []byte(c.gates), 0o644)
		j := filepath.Join(tmp, name+".xml")
		a := []string{"--gates", g, "--junit", j}
		if c.args == nil {
			a = append(a, "--run-dir", runDir, "--baseline", baseDir)
		} else if len(c.args) == 0 {
			a = append(a, "--run-dir", runDir)
		} else {
			a = append(a, c.args...)
		}
		env, _, errOut := testEnv()
		if code := check(ctx, a, env); code != cli.ExitUsage {
			t.Errorf("%s: exit %d, want 2 (%s)", name, code, errOut)
		}
		now, _ := os.ReadFile(filepath.Join(runDir, "stats.jsonl"))
		if !bytes.Equal(now, data) {
			t.Errorf("%s: stats.jsonl changed", name)
		}
		if _, err := os.Stat(j); err == nil {
			t.Errorf("%s: junit written", name)
		}
	}
}

func TestCompareMarkdown(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	writeRun(t, a, "4.0", "2.0")
	writeRun(t, b, "5.2", "1.96")
	env, out, errOut := testEnv()
	if code := compare(context.Background(), []string{a, b}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Logf("density compare:\n%s", out)
	if want := "**1 worse · 0 better · 4 same · 1 not compared**"; !strings.HasPrefix(out.String(), want) || strings.Contains(out.String(), "| same |") {
		t.Errorf("markdown does not start with %q or lists same keys without --all", want)
	}
	env, out, errOut = testEnv()
	if code := compare(context.Background(), []string{"--all", a, b}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"| `restore_p99_s` | 4.0 | 5.2 | 1.2", "| **worse** |", "| `checkpoint_p99_s` | 2.0 | 1.96 |", "| same |", "| `node_count` | 3 | 3 | 0 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	env, out, _ = testEnv()
	if code := compare(context.Background(), []string{"--format", "json", a, b}, env); code != 0 || !strings.Contains(out.String(), `"verdict": "worse"`) {
		t.Errorf("json compare: %d %s", code, out)
	}
}

// storeStart is the start of the first run writeStore lays out; the runs
// follow a day apart.
const storeStart = 1764000000

// dayAfter is a clock one day after the newest of n runs of writeStore.
func dayAfter(n int) func() time.Time {
	return func() time.Time { return time.Unix(storeStart+int64(n)*86400, 0) }
}

// writeStore lays out n stored runs of test "nightly" in a file:// store;
// restore_p99_s rises by 30 % from run index `at` on (0-based).
func writeStore(t *testing.T, root string, n, at int) []string {
	t.Helper()
	return writeStoreStep(t, root, n, at, 1.3)
}

// writeStoreStep is writeStore with restore_p99_s multiplied by factor
// from run `at` on.
func writeStoreStep(t *testing.T, root string, n, at int, factor float64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 3))
	var ids []string
	for i := range n {
		ts := int64(storeStart + i*86400)
		day := time.Unix(ts, 0).UTC().Format("2006-01-02")
		tag := fmt.Sprintf("c%02d", i)
		dir := filepath.Join(root, "runs", "nightly", "run_date="+day, "run_ts="+strconv.FormatInt(ts, 10), "run_tag="+tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		restore := 4.0 * (1 + 0.03*rng.NormFloat64())
		if i >= at {
			restore *= factor
		}
		stamp := time.Unix(ts, 0).UTC().Format("2006-01-02T15:04:05Z")
		data := statstest.Line(stamp, tag, "server_summary",
			"restore_p99_s", strconv.FormatFloat(restore, 'f', 4, 64),
			"cluster_packing_p50", strconv.FormatFloat(0.9*(1+0.01*rng.NormFloat64()), 'f', 4, 64)) +
			statstest.Line(stamp, tag, "trial_summary", "machine_type", "n2", "run_start", strconv.FormatInt(ts, 10))
		if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, "nightly/"+strconv.FormatInt(ts, 10)+"/"+tag)
	}
	return ids
}

func TestRegressionsStore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeStore(t, root, 20, 12)
	url := "file://" + root
	env, out, errOut := testEnv()
	env.Now = dayAfter(20)
	if code := regressions(ctx, []string{"--store", url, "--test-name", "nightly"}, env); code != cli.ExitRegression {
		t.Fatalf("a regression 8 runs old within 30d: exit %d, want 4: %s %s", code, out, errOut)
	}
	t.Logf("density regressions:\n%s%s", out, errOut)
	if !strings.Contains(out.String(), "restore_p99_s +") || !strings.Contains(out.String(), "(regression) at run") || !strings.Contains(out.String(), "(c11..c12)") {
		t.Errorf("regression at run 12 not reported:\n%s", out)
	}
	// Narrowed to the newest 3 runs, or to the last 7 days (it started 8
	// days ago), it no longer fails; a month later it has aged out.
	for _, c := range []struct {
		args []string
		now  func() time.Time
	}{{[]string{"--fail-recent", "3"}, dayAfter(20)}, {[]string{"--since", "7d"}, dayAfter(20)}, {nil, dayAfter(20 + 30)}} {
		env, out, errOut := testEnv()
		env.Now = c.now
		if code := regressions(ctx, append([]string{"--store", url, "--test-name", "nightly"}, c.args...), env); code != cli.ExitOK {
			t.Errorf("%v, %s: exit %d, want 0: %s", c.args, c.now().UTC().Format(time.DateOnly), code, errOut)
		}
		if !strings.Contains(out.String(), "(c11..c12)") {
			t.Errorf("%v: the change point is no longer printed:\n%s", c.args, out)
		}
	}
	// A change 3 runs from the end exits 4, an ack in the store suppresses it.
	root2 := t.TempDir()
	ids := writeStore(t, root2, 20, 17)
	env, out, _ = testEnv()
	env.Now = dayAfter(20)
	if code := regressions(ctx, []string{"--store", "file://" + root2, "--test-name", "nightly"}, env); code != cli.ExitRegression {
		t.Fatalf("recent regression: exit %d\n%s", code, out)
	}
	ack := fmt.Sprintf("- {key: restore_p99_s, run: %q, reason: slower restores expected}\n", ids[18])
	if err := os.WriteFile(filepath.Join(root2, "runs", "nightly", "acks.yaml"), []byte(ack), 0o644); err != nil {
		t.Fatal(err)
	}
	env, out, _ = testEnv()
	env.Now = dayAfter(20)
	if code := regressions(ctx, []string{"--store", "file://" + root2, "--test-name", "nightly"}, env); code != cli.ExitOK || !strings.Contains(out.String(), "acknowledged: slower restores expected") {
		t.Errorf("acked: exit %d\n%s", code, out)
	}
	// compare of runs 11 and 12 by store id flags restore_p99_s worse.
	root3 := t.TempDir()
	ids = writeStore(t, root3, 20, 12)
	env, out, errOut = testEnv()
	if code := compare(ctx, []string{"--store", "file://" + root3, ids[11], ids[12]}, env); code != 0 || !strings.Contains(out.String(), "| `restore_p99_s` |") || !strings.Contains(out.String(), "**worse**") {
		t.Errorf("compare 11 vs 12: %d %s %s", code, out, errOut)
	}
	t.Logf("density compare --store of runs 11 and 12:\n%s", out)
}

// A regression is kept until acknowledged: 5 runs old it still exits 4,
// and 0 once acks.yaml in the store names a run of its segment.
func TestRegressionsKeptUntilAcknowledged(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ids := writeStore(t, root, 30, 25)
	run := func(extra ...string) (int, string) {
		env, out, errOut := testEnv()
		env.Now = dayAfter(30)
		code := regressions(ctx, append([]string{"--store", "file://" + root, "--test-name", "nightly"}, extra...), env)
		return code, out.String() + errOut.String()
	}
	code, out := run()
	t.Logf("a regression 5 runs old: exit %d\n%s", code, out)
	if code != cli.ExitRegression || !strings.Contains(out, "(c24..c25)") || !strings.Contains(out, "1 unacknowledged regression(s) within 30d") {
		t.Fatalf("a regression 5 runs old: exit %d, want 4\n%s", code, out)
	}
	ack := fmt.Sprintf("- {key: restore_p99_s, run: %q, reason: new snapshot format}\n", ids[27])
	if err := os.WriteFile(filepath.Join(root, "runs", "nightly", "acks.yaml"), []byte(ack), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = run()
	t.Logf("after acknowledging it: exit %d\n%s", code, out)
	if code != cli.ExitOK || !strings.Contains(out, "acknowledged: new snapshot format") {
		t.Errorf("acknowledged: exit %d, want 0\n%s", code, out)
	}
	// An acks file that names another key leaves it failing.
	other := filepath.Join(t.TempDir(), "acks.yaml")
	if err := os.WriteFile(other, []byte("- {key: cluster_packing_p50, run: "+strconv.Quote(ids[27])+", reason: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := run("--acks", other); code != cli.ExitRegression {
		t.Errorf("--acks naming another key: exit %d, want 4\n%s", code, out)
	}
}

// A +50 % step after 8 runs exits 4 with 11 runs (3 after it) and still
// with 12, 20 and 30; --min-runs 1 sees a step at the newest run, which
// the default 3 does not yet.
func TestRegressionsExitCodes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		n, at int
		args  []string
		want  int
	}{
		{11, 8, nil, cli.ExitRegression},
		{12, 8, nil, cli.ExitRegression},
		{20, 8, nil, cli.ExitRegression},
		{30, 8, nil, cli.ExitRegression},
		{34, 22, nil, cli.ExitRegression}, // in both windows' edge margins were they to move by 15
		{12, 8, []string{"--fail-recent", "3"}, cli.ExitOK},
		{20, 19, nil, cli.ExitOK},
		{20, 19, []string{"--min-runs", "1"}, cli.ExitRegression},
		{20, 19, []string{"--min-runs", "0"}, cli.ExitUsage},
		{20, 8, []string{"--fail-recent", "-1"}, cli.ExitUsage},
		{20, 8, []string{"--since", "a month"}, cli.ExitUsage},
		// --since decides what fails, not what is searched: the 5 runs
		// before the change lie outside 7d and are still its baseline.
		{40, 35, []string{"--since", "7d"}, cli.ExitRegression},
	} {
		root := t.TempDir()
		writeStoreStep(t, root, c.n, c.at, 1.5)
		env, out, errOut := testEnv()
		env.Now = dayAfter(c.n)
		code := regressions(ctx, append([]string{"--store", "file://" + root, "--test-name", "nightly"}, c.args...), env)
		t.Logf("+50 %% at run %d of %d %v: exit %d", c.at, c.n, c.args, code)
		if code != c.want {
			t.Errorf("+50 %% at run %d of %d %v: exit %d, want %d\n%s%s", c.at, c.n, c.args, code, c.want, out, errOut)
		}
	}
}

// mage check reads the check's flag table from the environment: every
// flag's variable, the run directory from its argument.
func TestCheckFromEnv(t *testing.T) {
	env := map[string]string{"GATES": "g.yaml", "STORE": "file:///s", "JUNIT": "j.xml", "OUT": "o",
		"BASELINE": "b", "BASELINE_RUN": "latest", "BASELINE_STORE": "file:///b", "RUN_DIR": "ignored"}
	o, err := CheckFromEnv("run", func(k string) string { return env[k] })
	want := CheckOptions{Gates: "g.yaml", RunDir: "run", Store: "file:///s", Out: "o", JUnit: "j.xml",
		Baseline: BaselineFlags{Dir: "b", Run: "latest", Store: "file:///b"}}
	if err != nil || o != want {
		t.Errorf("CheckFromEnv: %+v, %v; want %+v", o, err, want)
	}
}

// A run directory whose stats.jsonl is a symbolic link (here to another
// run's file, which reads fine) is refused before anything is read or
// written: exit 1 where the command writes (check --run-dir), exit 2 where
// it only reads (compare, check's --baseline). The run directory itself
// may be a link.
func TestSymlinkedStatsRefused(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	other := filepath.Join(tmp, "other")
	writeRun(t, other, "4.1", "2.5")
	target, _ := os.ReadFile(filepath.Join(other, "stats.jsonl"))
	linked := filepath.Join(tmp, "b")
	if err := os.Mkdir(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(linked, "stats.jsonl")
	if err := os.Symlink("../other/stats.jsonl", link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(tmp, "plain")
	writeRun(t, plain, "4.0", "2.0")
	gates := filepath.Join(tmp, "gates.yaml")
	if err := os.WriteFile(gates, []byte(gatesYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func(Env) int
		want int
	}{
		{"check --run-dir", func(e Env) int {
			return check(ctx, []string{"--gates", gates, "--run-dir", linked, "--baseline", plain}, e)
		}, cli.ExitWrite},
		{"check --baseline", func(e Env) int {
			return check(ctx, []string{"--gates", gates, "--run-dir", plain, "--baseline", linked}, e)
		}, cli.ExitUsage},
		{"compare", func(e Env) int { return compare(ctx, []string{linked, plain}, e) }, cli.ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plainBefore, _ := os.ReadFile(filepath.Join(plain, "stats.jsonl"))
			env, _, errOut := testEnv()
			if code := tc.run(env); code != tc.want || !strings.Contains(errOut.String(), link+" is a symbolic link") {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.want, errOut)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("stats.jsonl is no longer the link: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(other, "stats.jsonl")); !bytes.Equal(got, target) {
				t.Errorf("the link's target changed:\n%s", got)
			}
			if entries, _ := os.ReadDir(linked); len(entries) != 1 {
				t.Errorf("files written beside the link: %v", entries)
			}
			if now, _ := os.ReadFile(filepath.Join(plain, "stats.jsonl")); tc.want == cli.ExitUsage && !bytes.Equal(now, plainBefore) {
				t.Errorf("the other run's stats.jsonl changed")
			}
		})
	}
	t.Run("linked run directory", func(t *testing.T) {
		dirLink := filepath.Join(tmp, "run-link")
		if err := os.Symlink("other", dirLink); err != nil {
			t.Fatal(err)
		}
		env, _, errOut := testEnv()
		if code := check(ctx, []string{"--gates", gates, "--run-dir", dirLink, "--baseline", plain}, env); code != cli.ExitGateFailed {
			t.Fatalf("exit %d, want 3 (a gate fails); stderr %s", code, errOut)
		}
		data, _ := os.ReadFile(filepath.Join(other, "stats.jsonl"))
		if n := strings.Count(string(data), `"metric": "gate_`); n != 6 {
			t.Errorf("%d gate rows through the linked directory, want 6", n)
		}
	})
}

// check, compare and regressions run a command on plain arguments.
func check(ctx context.Context, args []string, env Env) int {
	return CheckCommand(env).Main(ctx, args, env.Stdout, env.Stderr)
}

func compare(ctx context.Context, args []string, env Env) int {
	return CompareCommand(env).Main(ctx, args, env.Stdout, env.Stderr)
}

func regressions(ctx context.Context, args []string, env Env) int {
	return RegressionsCommand(env).Main(ctx, args, env.Stdout, env.Stderr)
}
