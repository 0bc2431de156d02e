package repocheck

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

const module = "github.com/substrate/density/"

// The Grafana plugin binary (package ./pkg) links the engine packages but
// none of the command-line ones: pkg/cli (flags, exit codes) and
// pkg/verdicts/command (the check, compare and regressions commands). The
// plugin reads runs through pkg/verdicts and pkg/runs instead.
func TestPluginLinksNoCommandPackages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Each package of the closure with its imports, to name who pulls a
	// forbidden package in.
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./pkg")
	cmd.Dir = repoRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./pkg: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	// The closure is the plugin's: it has the plugin and the engine.
	for _, p := range []string{"pkg/plugin", "pkg/verdicts", "pkg/runs", "pkg/engine"} {
		if _, ok := imports[module+p]; !ok {
			t.Fatalf("go list -deps ./pkg has no %s (%d packages): not the plugin's closure", p, len(imports))
		}
	}
	for _, p := range []string{"pkg/cli", "pkg/verdicts/command"} {
		if _, ok := imports[module+p]; !ok {
			continue
		}
		var by []string
		for q, is := range imports {
			if slices.Contains(is, module+p) {
				by = append(by, strings.TrimPrefix(q, module))
			}
		}
		slices.Sort(by)
		t.Errorf("the plugin binary links %s (imported by %s): command-line code belongs in cmd/density and the command packages", p, strings.Join(by, ", "))
	}
}
