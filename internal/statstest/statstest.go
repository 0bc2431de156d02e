// Package statstest writes and reads stats.jsonl rows for tests of the
// writers and readers of stored runs.
package statstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// Line is one stats.jsonl row of test name nightly: kv are measurement
// names and values, all strings as the exporter writes them; a value
// "null" is written as null.
func Line(ts, tag, metric string, kv ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"timestamp": %q, "tag": %q, "test_name": "nightly", "metric": %q, "measurements": {`, ts, tag, metric)
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		if kv[i+1] == "null" {
			fmt.Fprintf(&b, "%q: null", kv[i])
		} else {
			fmt.Fprintf(&b, "%q: %q", kv[i], kv[i+1])
		}
	}
	b.WriteString("}}\n")
	return b.String()
}

// ServerSummary is the first server_summary row of a run directory's
// stats.jsonl as numbers (null stays nil; a value that is not a number is
// left out): what `density export` wrote for the run.
func ServerSummary(t testing.TB, dir string) map[string]*float64 {
	t.Helper()
	for _, r := range Rows(t, filepath.Join(dir, runs.FileStatsJSONL)) {
		if r.Metric != artifact.MetricServerSummary {
			continue
		}
		out := map[string]*float64{}
		for _, f := range r.Measurements {
			switch v := f.Value.(type) {
			case nil:
				out[f.Key] = nil
			case string:
				if n, err := runs.ParsePyFloat(v); err == nil {
					out[f.Key] = &n
				}
			}
		}
		return out
	}
	t.Fatalf("%s has no server_summary row", dir)
	return nil
}

// Rows are the rows of a stats.jsonl file; a line that is not a row fails
// the test.
func Rows(t testing.TB, path string) []artifact.Row {
	t.Helper()
	f, err := os.Open(path) // #nosec G304 -- a file the test wrote
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := artifact.ReadRows(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []artifact.Row
	for _, l := range lines {
		if l.Row == nil {
			t.Fatalf("%s line %d: %v", path, l.Num, l.Err)
		}
		out = append(out, *l.Row)
	}
	return out
}
