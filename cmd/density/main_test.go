package main

import (
	"bytes"
	"context"
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
		{"help lists check", []string{"help"}, 0, "regressions", ""},
		{"check without gates", []string{"check"}, 2, "", "--gates"},
		{"compare needs two runs", []string{"compare", "a"}, 2, "", "two runs"},
		{"regressions needs a store", []string{"regressions"}, 2, "", "--store"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"help lists ladder", []string{"help"}, 0, "ladder", ""},
		{"ladder prints the built-in profile", []string{"ladder", "--print-profile"}, 0, "key: resume_p99_ms", ""},
		{"ladder without a flag is a usage error", []string{"ladder"}, 2, "", "--print-profile"},
		{"ladder help", []string{"ladder", "--help"}, 0, "print-profile", ""},
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
		})
	}
}
