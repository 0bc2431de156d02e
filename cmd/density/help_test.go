package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the help golden files under testdata/")

// TestHelpGolden pins each command's help: flags by section, switches
// without "[=true|false]", each default said once.
func TestHelpGolden(t *testing.T) {
	for _, cmd := range []string{"", "export", "check", "compare", "regressions", "report", "phases", "ladder"} {
		name := "help_" + cmd + ".golden"
		if cmd == "" {
			name = "help_root.golden"
		}
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"--help"}
			if cmd != "" {
				args = []string{cmd, "--help"}
			}
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			got := out.String()
			if strings.Contains(got, "[=true|false]") {
				t.Errorf("help has [=true|false]")
			}
			for _, line := range strings.Split(got, "\n") {
				if strings.Count(line, "(default") > 1 {
					t.Errorf("a default said twice: %q", line)
				}
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("help differs from %s (run with -update to accept):\n%s", path, got)
			}
		})
	}
}

// TestExportHelpSections: the export's flags are under their sections, in
// the order of the help.
func TestExportHelpSections(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"export", "--help"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got, at := out.String(), 0
	for _, want := range []string{"\nRun:\n", "--run-dir string", "\nPrometheus:\n", "--prometheus-url string",
		"\nKubernetes:\n", "--cluster-facts   ", "\nPhases:\n", "--phase-logs path", "\nLadder:\n", "--ladder-profile",
		"\nVerdicts:\n", "--gates string", "\nOutput:\n", "--report   ", "\nFlags:\n", "-h, --help"} {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", want, got)
		}
		at += i + len(want)
	}
}

// TestMistypedCommand: a mistyped command is one line naming the nearest.
func TestMistypedCommand(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"exprot", `density: unknown command "exprot" (did you mean export?)`},
		{"comprae", `(did you mean compare?)`},
		{"regresions", `(did you mean regressions?)`},
		{"frobnicate", `density: unknown command "frobnicate"; 'density --help' lists the commands`},
	} {
		t.Run(tc.typed, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{tc.typed, "x"}, &out, &errOut); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			got := errOut.String()
			if !strings.Contains(got, tc.want) || strings.Count(strings.TrimSpace(got), "\n") != 0 || out.Len() > 0 {
				t.Errorf("stderr %q (stdout %q), want one line with %q", got, out.String(), tc.want)
			}
		})
	}
}
