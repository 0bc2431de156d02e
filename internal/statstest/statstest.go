// Package statstest writes stats.jsonl rows for tests of the readers of
// stored runs.
package statstest

import (
	"fmt"
	"strings"
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
