package artifact

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// Helper-process modes: the test binary re-runs itself to get a second
// process writing the same stats.jsonl.
const (
	envHelperMode = "ARTIFACT_TEST_HELPER"
	envHelperPath = "ARTIFACT_TEST_PATH"
	envHelperArg  = "ARTIFACT_TEST_ARG"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelperMode); mode != "" {
		os.Exit(runHelper(mode, os.Getenv(envHelperPath), os.Getenv(envHelperArg)))
	}
	os.Exit(m.Run())
}

func runHelper(mode, path, arg string) int {
	switch mode {
	case "append":
		for j := range 100 {
			r := Row{Timestamp: "P" + strconv.Itoa(j), Tag: arg, TestName: "n", Metric: MetricServerSummary,
				Measurements: Object{{"j", strconv.Itoa(j)}}}
			if err := AppendRows(context.Background(), path, r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return 0
	case "fsize":
		return helperFileSizeLimit(path, arg)
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

func helperCmd(t *testing.T, mode, path, arg string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelperMode+"="+mode, envHelperPath+"="+path, envHelperArg+"="+arg)
	return cmd
}

// TestAppendRowsConcurrent runs goroutine appenders, a goroutine doing
// --replace of another run, and two other processes appending, all on one
// file; afterwards every line is a whole row and every row is there once.
func TestAppendRowsConcurrent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stats.jsonl")
	const foreign = "{\"not\": \"ours\"}\n"
	if err := os.WriteFile(path, []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	const goroutines, perGoroutine, replaces = 8, 40, 25
	var wg sync.WaitGroup
	errs := make(chan error, goroutines+10)
	procs := []*exec.Cmd{helperCmd(t, "append", path, "proc0"), helperCmd(t, "append", path, "proc1")}
	for _, c := range procs {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perGoroutine {
				ts, tag := "T"+strconv.Itoa(j), "g"+strconv.Itoa(i)
				s := Row{Timestamp: ts, Tag: tag, TestName: "n", Metric: MetricServerSummary, Measurements: Object{{"i", tag}}}
				tr := Row{Timestamp: ts, Tag: tag, TestName: "n", Metric: MetricTrialSummary, Measurements: Object{{"i", tag}}}
				if err := AppendRows(ctx, path, s, tr); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := range replaces {
			r := Row{Timestamp: "R", Tag: "r", TestName: "n", Metric: MetricServerSummary, Measurements: Object{{"k", strconv.Itoa(k)}}}
			if _, err := ReplaceRows(ctx, path, matchRun("R", "r", "n"), r); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	for _, c := range procs {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := ReadRows(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, l := range lines {
		if !l.Terminated {
			t.Errorf("line %d not terminated", l.Num)
		}
		if i == 0 {
			if string(l.Raw)+"\n" != foreign {
				t.Errorf("first line changed: %q", l.Raw)
			}
			continue
		}
		if l.Row == nil {
			t.Fatalf("line %d is not a whole row: %q (%v)", l.Num, l.Raw, l.Err)
		}
		seen[l.Row.Tag+"/"+l.Row.Timestamp+"/"+l.Row.Metric]++
	}
	want := goroutines*perGoroutine*2 + 2*100 + 1
	if len(lines)-1 != want {
		t.Errorf("%d rows, want %d", len(lines)-1, want)
	}
	for key, n := range seen {
		if n != 1 {
			t.Errorf("%s appears %d times", key, n)
		}
	}
	if seen["r/R/"+MetricServerSummary] != 1 {
		t.Error("replaced row missing")
	}
	for _, tag := range []string{"proc0", "proc1"} {
		for j := range 100 {
			if seen[tag+"/P"+strconv.Itoa(j)+"/"+MetricServerSummary] != 1 {
				t.Fatalf("row %d of %s missing", j, tag)
			}
		}
	}
}
