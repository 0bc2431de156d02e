package export

import (
	"context"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/cli"
)

// A --test-name with a terminal escape prints as \x1b text in the status
// lines, with no ESC byte on stdout or stderr; the artifacts keep the name.
func TestExportStatusLinesEscapeControls(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tr := run.Truth
	dir := copyRun(t, run)
	name := "t\x1b[31mx"
	args := []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", name, "--tag", "g\u009b2J", "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts", "--report=false"}
	e := newEnv(nil, nil)
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	out := e.out.String() + e.errOut.String()
	if strings.ContainsAny(out, "\x1b\u009b") {
		t.Errorf("raw control characters in the output:\n%q", out)
	}
	if !strings.Contains(e.out.String(), `run t\x1b[31mx g\x9b2J: window`) {
		t.Errorf("status line lacks the escaped name:\n%s", e.out.String())
	}
}
