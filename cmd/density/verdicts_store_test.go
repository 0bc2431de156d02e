package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/verdicts"
)

// The verdict commands over a store of 20 nightly runs that `density
// export` wrote from simulated runs in a real Prometheus, whose restores
// are slower from run 12 on: `density regressions` finds restore_p99_s at
// run 12 as a regression (exit 0 once it is older than --since, as these
// 2024 runs are; exit 4 while --since holds it, unless --fail-recent
// narrows to runs after it; 0 again once acked) and `density compare` of
// runs 11 and 12 flags restore_p99_s worse.
func TestVerdictsOverExportedStore(t *testing.T) {
	st := storetest.Build(t, storetest.Options{})
	before, at := st.Runs[11], st.Runs[12]
	density := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	base := []string{"regressions", "--store", st.URL, "--test-name", st.TestName}

	code, out, errOut := density(base...)
	t.Logf("density regressions --store file://… --test-name %s (exit %d):\n%s%s", st.TestName, code, out, errOut)
	if code != 0 {
		t.Errorf("exit %d, want 0: the change is more than 30 days old", code)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "restore_p99_s ") {
			line = l
		}
	}
	if !strings.HasPrefix(line, "restore_p99_s +") || !strings.Contains(line, "(regression) at run "+at.ID+" ("+before.Tag+".."+at.Tag+")") {
		t.Errorf("restore_p99_s change point line %q, want a regression at %s", line, at.ID)
	}

	code, out, _ = density(append(base, "--keys", "restore_p99_s", "--json")...)
	var got struct {
		Runs         int                    `json:"runs"`
		ChangePoints []verdicts.ChangePoint `json:"change_points"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v: %s", code, err, out)
	}
	if got.Runs != 20 || len(got.ChangePoints) != 1 {
		t.Fatalf("%d runs, change points %+v", got.Runs, got.ChangePoints)
	}
	cp := got.ChangePoints[0]
	if cp.Run != at.ID || cp.Position != 12 || cp.Kind != verdicts.Regression || cp.PreviousTag != before.Tag || cp.Tag != at.Tag ||
		cp.DeltaPct == nil || *cp.DeltaPct < 20 || cp.MeanAfter <= cp.MeanBefore || !(cp.PValue < 0.001) {
		t.Errorf("change point %+v", cp)
	}

	// Within --since it fails, 8 runs after the change; --fail-recent 7
	// narrows to the runs after it, 8 reaches position 12.
	recent := append(base, "--keys", "restore_p99_s", "--since", "100y")
	if code, out, errOut = density(recent...); code != 4 || !strings.Contains(errOut, "1 unacknowledged regression") {
		t.Errorf("--since 100y: exit %d, want 4: %s%s", code, out, errOut)
	}
	if code, out, errOut = density(append(recent, "--fail-recent", "7")...); code != 0 {
		t.Errorf("--fail-recent 7: exit %d, want 0: %s%s", code, out, errOut)
	}
	if code, out, errOut = density(append(recent, "--fail-recent", "8")...); code != 4 {
		t.Errorf("--fail-recent 8: exit %d, want 4: %s%s", code, out, errOut)
	}
	// An acks.yaml in the test's prefix naming a run of the new segment
	// suppresses the exit code; the point stays listed as acknowledged.
	ack := "- {key: restore_p99_s, run: " + st.Runs[15].ID + ", reason: slower restore path}\n"
	if err := os.WriteFile(filepath.Join(st.Root, "runs", st.TestName, "acks.yaml"), []byte(ack), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut = density(recent...); code != 0 || !strings.Contains(out, "acknowledged: slower restore path") {
		t.Errorf("acked: exit %d, want 0 with the point listed: %s%s", code, out, errOut)
	}

	code, out, errOut = density("compare", "--store", st.URL, before.ID, at.ID)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| `restore_p99_s` |") {
			row = l
		}
	}
	t.Logf("density compare --store file://… %s %s (restore rows):\n%s", before.ID, at.ID, markdownRows(out, "restore_"))
	if !strings.HasSuffix(row, "| lower | **worse** |") {
		t.Errorf("compare row %q, want restore_p99_s worse", row)
	}
}

// markdownRows are the header lines of a Markdown table and its rows whose
// key starts with prefix.
func markdownRows(md, prefix string) string {
	var b strings.Builder
	n := 0
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		if n < 2 || strings.HasPrefix(l, "| `"+prefix) {
			b.WriteString(l + "\n")
		}
		n++
	}
	return b.String()
}
