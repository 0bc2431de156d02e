package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPhasesCommand(t *testing.T) {
	dir := t.TempDir()
	log := `[pod/atelet-1/atelet] {"time":"2026-09-23T10:00:05.5Z","msg":"Restore timing breakdown","ate.actor.uid":"u1","ate.actor.name":"sb-1","ate.snapshot.scope":"full","ate.snapshot.kind":"latest","ate.sandbox.class":"microvm","ate.actor.restore.duration.download":2.4,"ate.actor.restore.duration.ateom_restore":1.1,"ate.actor.restore.duration.total":3.9}
{"time":"2026-09-23T10:00:05.4Z","msg":"Restore timing breakdown","ate.actor.uid":"u1","ateom.actor.restore.duration.vm_restore":0.7,"ateom.actor.restore.duration.total":1.0}
{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":"x","ate.actor.restore.duration.download":1}
not json {
`
	if err := os.WriteFile(filepath.Join(dir, "a.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ignored.txt"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		out  []string
		err  string
	}{
		{"table and waterfall", []string{"phases", dir, "--slowest", "1"}, 0, []string{
			"1 file(s): 4 JSON line(s), 1 undecodable, 3 record(s) (0 failed), 1 bad value(s)",
			"starts with '[' but is not one JSON array; read line by line",
			"atelet  restore     none    none   none       download      1  1000.0  1000.0  1000.0  1000.0",
			"atelet  restore  microvm  latest   full       download      1  2400.0  2400.0  2400.0  2400.0",
			"ateom  restore  microvm  latest   none     vm_restore      1   700.0   700.0   700.0   700.0",
			"1. restore sb-1 (uid u1) microvm/latest/full: 3900.0 ms at 2026-09-23T10:00:05.500000Z",
			"     ateom vm_restore          700.0 ms  |#######      ",
			"     gap                       100.0 ms  (ateom_restore − ateom total)",
		}, ""},
		{"no records", []string{"phases", empty}, 0, []string{"no timing breakdown records"}, ""},
		{"help", []string{"phases", "--help"}, 0, []string{"Usage: density phases FILE..."}, ""},
		{"no file", []string{"phases"}, 2, nil, "no log file given"},
		{"missing file", []string{"phases", filepath.Join(dir, "missing.log")}, 2, nil, "no such file"},
		{"bad count", []string{"phases", dir, "--slowest=x"}, 2, nil, "not a count"},
		{"unknown flag", []string{"phases", dir, "--fast"}, 2, nil, "unknown flag --fast"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), tc.args, &out, &errOut); code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut.String())
			}
			for _, w := range tc.out {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), tc.err) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tc.err)
			}
		})
	}
}
