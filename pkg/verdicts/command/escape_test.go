package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/cli"
)

// A recorded key and a run directory with terminal escapes print as \xNN
// text in compare's Markdown; --json keeps JSON's own encoding.
func TestCompareEscapesControls(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a\x1b]0;pwned\x07"), filepath.Join(tmp, "b")
	for _, dir := range []string{a, b} {
		writeRun(t, dir, "4.0", "2.0")
		f, err := os.OpenFile(filepath.Join(dir, "stats.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		// A phases row (not server_summary: that one is replaced) with a key
		// holding ESC (as JSON's \u001b) and a raw C1 CSI.
		row := `{"timestamp": "2026-12-01T10:00:00Z", "tag": "abc", "test_name": "t\u001b[31mx", "metric": "server_summary", "measurements": {"cluster_packing_p50": "0.72", "restore_p99_s": "4.0", "checkpoint_p99_s": "2.0", "k\u001b[31m` + "\u009b" + `": "1"}}` + "\n"
		if _, err := f.WriteString(row); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	env, out, errOut := testEnv()
	// --all: the rows are the same in both runs, and the key must show.
	if code := compare(context.Background(), []string{"--all", a, b}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	md := out.String()
	if strings.ContainsAny(md, "\x1b\x07\u009b") {
		t.Errorf("raw control characters in the Markdown:\n%q", md)
	}
	for _, want := range []string{`a\x1b]0;pwned\x07` + "`", "| `k\\x1b[31m\\x9b` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	env, out, _ = testEnv()
	if code := compare(context.Background(), []string{"--json", a, b}, env); code != 0 {
		t.Fatalf("json exit %d", code)
	}
	var doc struct {
		Baseline string `json:"baseline"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Baseline != a {
		t.Errorf("--json baseline %q (%v), want %q", doc.Baseline, err, a)
	}
	if !strings.Contains(out.String(), `k\u001b[31m`+"\u009b") || strings.Contains(out.String(), `\x1b`) {
		t.Errorf("--json changed by the escaping:\n%s", out)
	}
}

// An acknowledgement's reason and a --test-name with escapes print as text
// in regressions' lines; the errors on stderr too.
func TestRegressionsEscapesControls(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ids := writeStore(t, root, 20, 12)
	ack := `- {key: restore_p99_s, run: "` + ids[12] + `", reason: "slow\e[31m on purpose"}` + "\n"
	if err := os.WriteFile(filepath.Join(root, "runs", "nightly", "acks.yaml"), []byte(ack), 0o644); err != nil {
		t.Fatal(err)
	}
	env, out, errOut := testEnv()
	if code := regressions(ctx, []string{"--store", "file://" + root, "--test-name", "nightly"}, env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `acknowledged: slow\x1b[31m on purpose`) {
		t.Errorf("regressions:\n%q", out)
	}
	env, out, _ = testEnv()
	if code := regressions(ctx, []string{"--json", "--store", "file://" + root, "--test-name", "nightly"}, env); code != cli.ExitOK ||
		!strings.Contains(out.String(), `slow\u001b[31m on purpose`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
	env, out, errOut = testEnv()
	regressions(ctx, []string{"--store", "file://" + root, "--test-name", "t\x1b[31mx"}, env)
	all := out.String() + errOut.String()
	if strings.Contains(all, "\x1b") || !strings.Contains(all, `t\x1b[31mx`) {
		t.Errorf("--test-name with ESC: stdout %q stderr %q", out, errOut)
	}
}
