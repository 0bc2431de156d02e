package artifact

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// helperFileSizeLimit appends a row under RLIMIT_FSIZE = limit, so the
// kernel cuts the write short (or refuses it): the way a full disk or a
// quota behaves, injected for real.
func helperFileSizeLimit(path, arg string) int {
	limit, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Println(err)
		return 2
	}
	row := Row{Timestamp: "T", Tag: "g", TestName: "n", Metric: MetricServerSummary,
		Measurements: Object{{"pad", strings.Repeat("x", 300)}}}
	err = AppendRows(context.Background(), path, row)
	fmt.Println(err)
	if err == nil {
		return 3
	}
	return 0
}

func TestAppendRowsPartialWriteRollsBack(t *testing.T) {
	const keep = "{\"keep\": 1}\n{\"half" // also exercises the "\n" prefix
	tests := []struct {
		name    string
		limit   int
		wantErr string
	}{
		{"write cut short part-way", len(keep) + 40, "short write"},
		{"write refused at the limit", len(keep), "file too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stats.jsonl")
			if err := os.WriteFile(path, []byte(keep), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := helperCmd(t, "fsize", path, strconv.Itoa(tc.limit)).Output()
			if err != nil {
				t.Fatalf("helper: %v: %s", err, out)
			}
			if !strings.Contains(string(out), tc.wantErr) {
				t.Errorf("helper reported %q, want it to mention %q", out, tc.wantErr)
			}
			got, _ := os.ReadFile(path)
			if string(got) != keep {
				t.Errorf("file after a failed append = %q, want it unchanged", got)
			}
		})
	}
}
