package export

import (
	"io"
	"strings"
	"testing"
)

// The documented --no-X of the switches that default to on, from the one
// flag table; --no-phase-breakdown counts as --phase-breakdown given.
func TestNegationFlags(t *testing.T) {
	dir := t.TempDir()
	o, err := ParseFlags([]string{"--run-dir", dir, "--no-report", "--no-ladder", "--no-phase-breakdown", "--no-cluster-facts"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Report || o.Ladder.Enabled || o.PhaseBreakdown || o.ClusterFacts || !o.PhaseBreakdownSet {
		t.Errorf("negations not applied: %+v", o)
	}
	o, err = ParseFlags([]string{"--run-dir", dir, "--no-report=false", "--no-wait"}, io.Discard)
	if err != nil || !o.Report || !o.NoWait || o.PhaseBreakdownSet {
		t.Errorf("--no-report=false --no-wait: %+v, %v", o, err)
	}
	for _, kv := range envNames() {
		if strings.HasPrefix(kv[0], "--no-") && kv[0] != "--no-wait" {
			t.Errorf("negation %s has an environment variable", kv[0])
		}
	}
	if _, err := ParseFlags([]string{"--run-dir", dir, "--no-verbose"}, io.Discard); err == nil {
		t.Error("--no-verbose: a switch that defaults to off has no negation")
	}
}
