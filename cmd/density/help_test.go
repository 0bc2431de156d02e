package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// badDefault is a default no reader can use: a negative sentinel, zero,
// empty.
var badDefault = regexp.MustCompile(`\(default (-[0-9]|0\)|""|\[\]|<nil>)`)

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
				// A sentinel or empty default is no default to a reader.
				if badDefault.MatchString(line) {
					t.Errorf("a default that does not read: %q", line)
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

// TestHelpSections: every command with more than a couple of flags has
// them under their sections, in the order of the help, and none left under
// "Flags" but --help.
func TestHelpSections(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"export", []string{"\nRun:\n", "--run-dir string", "\nPrometheus:\n", "--prometheus-url string",
			"\nKubernetes:\n", "--cluster-facts   ", "\nPhases:\n", "--phase-logs path", "\nLadder:\n", "--ladder-profile",
			"\nVerdicts:\n", "--gates string", "\nOutput:\n", "--report   "}},
		{"check", []string{"\nRun:\n", "--run-dir string", "--store string", "\nVerdicts:\n", "--baseline-run string",
			"--gates string", "\nOutput:\n", "--junit string", "--out string"}},
		{"compare", []string{"\nRun:\n", "--store string", "\nVerdicts:\n", "--noise-pct float",
			"\nOutput:\n", "--all   ", "--format string", "--json   "}},
		{"regressions", []string{"\nRun:\n", "--store string", "--test-name string", "\nVerdicts:\n", "--acks file",
			"--fail-recent N", "--since duration", "(default 30d)", "--window int", "\nOutput:\n", "--json   "}},
		{"report", []string{"\nRun:\n", "--baseline string", "--run-dir string", "\nPrometheus:\n", "--prometheus-url string",
			"\nOutput:\n", "--out string"}},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{tc.cmd, "--help"}, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			got, at := out.String(), 0
			for _, want := range append(tc.want, "\nFlags:\n  -h, --help ") {
				i := strings.Index(got[at:], want)
				if i < 0 {
					t.Fatalf("%q missing or out of order in:\n%s", want, got)
				}
				at += i + len(want)
			}
			if rest := strings.TrimSpace(got[at:]); strings.Contains(rest, "\n") {
				t.Errorf("flags left out of the sections:\n%s", rest)
			}
		})
	}
}

// TestMistypedCommand: a mistyped command is one line naming the nearest.
func TestMistypedCommand(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"exprot", `density: unknown command "exprot" (did you mean export?)`},
		{"comprae", `(did you mean compare?)`},
		{"regresions", `(did you mean regressions?)`},
		{"frobnicate", `density: unknown command "frobnicate"; 'density --help' lists the commands`},
		// A flag of the meant command after the mistyped one.
		{"chek --gates g.yaml", `density: unknown command "chek" (did you mean check?)`},
		{"help exprot", `density help: unknown command "exprot" (did you mean export?)`},
	} {
		t.Run(tc.typed, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), append(strings.Fields(tc.typed), "x"), &out, &errOut); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			got := errOut.String()
			if !strings.Contains(got, tc.want) || strings.Count(strings.TrimSpace(got), "\n") != 0 || out.Len() > 0 {
				t.Errorf("stderr %q (stdout %q), want one line with %q", got, out.String(), tc.want)
			}
		})
	}
}
