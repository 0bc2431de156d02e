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
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
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
