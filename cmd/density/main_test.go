package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"help lists subcommands", []string{"--help"}, 0, "export", ""},
		{"help lists phases", []string{"--help"}, 0, "phases", ""},
		{"help lists version", []string{"help"}, 0, "version", ""},
		{"version", []string{"version"}, 0, "density ", ""},
		{"no args is a usage error", nil, 2, "", "Commands:"},
		{"no args prints the usage on stderr only", []string{}, 2, "", "Run 'density <command> --help'"},
		{"help lists check", []string{"help"}, 0, "regressions", ""},
		{"check without gates", []string{"check"}, 2, "", "--gates"},
		{"compare needs two runs", []string{"compare", "a"}, 2, "", "two runs"},
		{"regressions needs a store", []string{"regressions"}, 2, "", "--store"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"help lists ladder", []string{"help"}, 0, "ladder", ""},
		{"ladder prints the built-in profile", []string{"ladder", "--print-profile"}, 0, "key: resume_p99_ms", ""},
		{"ladder without a flag is a usage error", []string{"ladder"}, 2, "", "--print-profile"},
		{"ladder help", []string{"ladder", "--help"}, 0, "print-profile", ""},
		{"version flag", []string{"--version"}, 0, "density ", ""},
		{"help of export lists its flags", []string{"export", "--help"}, 0, "--prometheus-url string", ""},
		{"help command of a subcommand", []string{"help", "check"}, 0, "--gates", ""},
		{"completion bash prints a script", []string{"completion", "bash"}, 0, "complete -o default -F __start_density density", ""},
		{"unknown flag of export", []string{"export", "--bogus"}, 2, "", "density export: unknown flag --bogus"},
		{"unknown flag of check", []string{"check", "--bogus"}, 2, "", "density check: unknown flag --bogus"},
		{"unknown root flag", []string{"--bogus"}, 2, "", "density: unknown flag --bogus"},
		{"bad value names the flag", []string{"export", "--timeout", "soon"}, 2, "", `"--timeout"`},
		{"export takes no arguments", []string{"export", "--run-dir", ".", "extra"}, 2, "", `unexpected argument "extra"`},
		{"check takes no arguments", []string{"check", "extra"}, 2, "", `unexpected argument "extra"`},
		{"ladder takes no arguments", []string{"ladder", "--print-profile", "extra"}, 2, "", "--print-profile"},
		{"version takes no arguments", []string{"version", "extra"}, 2, "", "density version:"},
		// The negations are flags of the mounted command, not unknown ones:
		// the export gets as far as its own checks.
		{"negations", []string{"export", "--no-report", "--no-ladder", "--no-phase-breakdown", "--no-cluster-facts"}, 2, "",
			"density export: one of --run-dir or --store is required"},
		{"no-wait is a flag of its own", []string{"export", "--no-wait=true"}, 2, "", "one of --run-dir or --store"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			if !strings.Contains(out.String(), tc.inStdout) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.inStdout)
			}
			if !strings.Contains(errOut.String(), tc.inStderr) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.inStderr)
			}
			// A usage error is one line on stderr, except a missing command
			// (the usage) and ladder's usage line.
			if tc.code == 2 && len(tc.args) > 0 {
				if n := strings.Count(strings.TrimSpace(errOut.String()), "\n"); n > 0 {
					t.Errorf("want one line on stderr, got %d: %q", n+1, errOut.String())
				}
			}
			if len(tc.args) == 0 && out.Len() > 0 {
				t.Errorf("stdout %q without a command", out.String())
			}
			if tc.code == 0 && errOut.Len() > 0 {
				t.Errorf("stderr %q on success", errOut.String())
			}
		})
	}
}

// An input that cannot be read (a missing run directory, a missing or
// unreadable artifact named on the command line, a run id the store does
// not hold) is a usage error, exit 2, in every subcommand.
func TestUnreadableInputIsExit2(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	empty, good, store := t.TempDir(), t.TempDir(), t.TempDir()
	writeStoredRun(t, good, 0.75, true)
	gates := filepath.Join(t.TempDir(), "gates.yaml")
	if err := os.WriteFile(gates, []byte("gates:\n  - key: cluster_packing_p50\n    min: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(store, "runs", "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"export", "--run-dir", missing, "--no-cluster-facts", "--start", "1", "--end", "2"},
		{"export", "--run-dir", empty, "--bearer-token-file", missing, "--no-cluster-facts", "--start", "1", "--end", "2"},
		{"check", "--run-dir", missing, "--gates", gates},
		{"check", "--run-dir", good, "--gates", missing},
		{"check", "--run-dir", good, "--gates", gates, "--baseline", missing},
		{"compare", missing, good},
		{"compare", good, missing},
		{"regressions", "--store", "file://" + missing, "--test-name", "t"},
		{"report", "--run-dir", missing},
		{"report", "--run-dir", empty},
		{"report", "--run-dir", good, "--baseline", missing},
		{"report", "--store", "file://" + missing, "--run", "t/1710237600/x"},
		{"report", "--store", "file://" + store, "--run", "t/1710237600/x"},
		{"phases", missing},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut.String())
		}
	}
}
