// Package pytest runs the real python3 in tests, to cross-check the
// project's emulations of Python (csv, int(), float(), json.dumps, repr).
package pytest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

// Run feeds in to the Python script as JSON on stdin and decodes the JSON
// the script prints into out. python3 is required: a missing python3 fails
// the test with the reason, never skips.
func Run(t testing.TB, script string, in, out any) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is required to cross-check Python compatibility: %v", err)
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), py, "-c", script) // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("decoding python3 output: %v\n%s", err, res)
	}
}
