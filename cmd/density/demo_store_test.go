package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/demo"
)

// TestDemoStore runs what `mage demoStore` does into temp directories (the
// demo run exported from a real Prometheus, then the store written from its
// artifacts) and drives the commands its closing lines suggest:
// `density regressions` exits 4 on the planted gVisor restore regression and
// marks the microVM snapshot one acknowledged; `density compare` and
// `density report --baseline-run` work on its runs; the example gates file
// fails only the OOM gate on the demo run (exit 3).
func TestDemoStore(t *testing.T) {
	tmp := t.TempDir()
	runDir, storeDir := filepath.Join(tmp, "demo-run"), filepath.Join(tmp, "demo-store")
	var msg, errOut bytes.Buffer
	if code := demo.DemoStore(context.Background(), runDir, storeDir, &msg, &errOut); code != 0 {
		t.Fatalf("DemoStore: exit %d\n%s\n%s", code, msg.String(), errOut.String())
	}
	t.Logf("mage demoStore:\n%s", msg.String())
	st, err := demo.WriteStore(runDir, "", storeDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if want := 3*demo.StoreNights + 1; len(st.Runs) != want { // and the demo run
		t.Fatalf("%d runs, want %d", len(st.Runs), want)
	}
	density := func(args ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		return code, out.String() + errOut.String()
	}

	t.Run("regressions", func(t *testing.T) {
		code, out := density("regressions", "--store", st.URL, "--test-name", demo.StoreTest, "--json")
		if code != 4 {
			t.Fatalf("exit %d, want 4 (an unacknowledged recent regression):\n%s", code, out)
		}
		var doc struct {
			ChangePoints []struct {
				Key, Run, Kind, Cohort string
				Acknowledged           bool
			} `json:"change_points"`
		}
		if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &doc); err != nil {
			t.Fatalf("decoding the JSON: %v\n%s", err, out)
		}
		found := map[string]bool{}
		for _, cp := range doc.ChangePoints {
			if cp.Kind != "regression" {
				t.Errorf("unexpected %s of %s at %s", cp.Kind, cp.Key, cp.Run)
				continue
			}
			switch {
			case cp.Key == demo.RegressionKey && strings.Contains(cp.Cohort, "sandbox_class=gvisor"):
				found["unacked"] = !cp.Acknowledged
			case cp.Key == demo.AckedKey && strings.Contains(cp.Cohort, "sandbox_class=microvm"):
				found["acked"] = cp.Acknowledged
			case strings.HasPrefix(cp.Key, "restore_") && !cp.Acknowledged:
			default:
				t.Errorf("unplanted change point: %+v", cp)
			}
		}
		if !found["unacked"] || !found["acked"] {
			t.Errorf("planted regressions found %v, want the unacknowledged %s and the acknowledged %s:\n%s", found, demo.RegressionKey, demo.AckedKey, out)
		}
		code, out = density("regressions", "--store", st.URL, "--test-name", demo.StoreChurnTest)
		if code != 0 || !strings.Contains(out, "(improvement)") {
			t.Errorf("%s: exit %d, want 0 with the planted improvement:\n%s", demo.StoreChurnTest, code, out)
		}
	})

	first := st.Runs[0]
	newest, _ := st.Newest(demo.StoreTest, "gvisor")
	t.Run("compare", func(t *testing.T) {
		code, out := density("compare", "--store", st.URL, first.ID, newest.ID)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "| `"+demo.RegressionKey+"`") && !strings.Contains(l, "worse") {
				t.Errorf("%s not worse: %s", demo.RegressionKey, l)
			}
		}
		// The summary first, the changed keys only: actors_per_node is the
		// same in both runs, listed with --all.
		if !strings.HasPrefix(out, "**") || !strings.Contains(out, "| `"+demo.RegressionKey+"`") || strings.Contains(out, "| `actors_per_node`") {
			t.Errorf("compare lacks its summary or the regression, or lists a same key:\n%s", out)
		}
		if code, all := density("compare", "--all", "--store", st.URL, first.ID, newest.ID); code != 0 || !strings.Contains(all, "| `actors_per_node`") {
			t.Errorf("compare --all: exit %d, lacks actors_per_node:\n%s", code, all)
		}
	})

	t.Run("report --baseline-run", func(t *testing.T) {
		out := filepath.Join(tmp, "report")
		code, msg := density("report", "--store", st.URL, "--run", newest.ID, "--baseline-run", first.ID, "--out", out)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, msg)
		}
		b, err := os.ReadFile(filepath.Join(out, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "worse") || !strings.Contains(string(b), newest.Tag) {
			t.Errorf("report.html (%d bytes) lacks the baseline column or the run's tag", len(b))
		}
	})

	t.Run("check with the example gates", func(t *testing.T) {
		code, out := density("check", "--run-dir", runDir, "--gates", filepath.Join("..", "..", demo.GatesExample))
		if code != 3 {
			t.Fatalf("exit %d, want 3 (the demo run's pod OOM kills):\n%s", code, out)
		}
		if fails := strings.Count(out, ": fail ("); fails != 1 || !strings.Contains(out, "gate oom_events_pod = 2.0: fail") {
			t.Errorf("want only the OOM gate failing:\n%s", out)
		}
	})
}
