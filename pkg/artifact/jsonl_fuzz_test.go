package artifact

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Seeds live in testdata/fuzz/<FuzzName>/ (committed).

func FuzzReadRows(f *testing.F) {
	f.Add([]byte(`{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "server_summary", "measurements": {"a": "0.8", "b": null}}` + "\n"))
	f.Add([]byte("garbage\n\n{\"half"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ReadRows(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var rebuilt bytes.Buffer
		for i, l := range lines {
			if l.Num != i+1 {
				t.Fatalf("line numbers not consecutive")
			}
			if !l.Terminated && i != len(lines)-1 {
				t.Fatalf("unterminated line %d before the end", l.Num)
			}
			if bytes.IndexByte(l.Raw, '\n') >= 0 {
				t.Fatalf("line %d holds a newline", l.Num)
			}
			rebuilt.Write(l.Raw)
			if l.Terminated {
				rebuilt.WriteByte('\n')
			}
			if (l.Row == nil) == (l.Err == nil) {
				t.Fatalf("line %d: Row %v and Err %v", l.Num, l.Row, l.Err)
			}
			if l.Row == nil {
				continue
			}
			// A parsed row of strings and nulls re-encodes and reads back equal.
			out, err := l.Row.MarshalLine()
			if err != nil {
				continue // foreign value types: MarshalLine refuses them by design
			}
			back, err := ParseRow(out)
			if err != nil {
				t.Fatalf("re-encoded row does not parse: %v\n%s", err, out)
			}
			again, _ := back.MarshalLine()
			if !bytes.Equal(out, again) {
				t.Fatalf("row not stable:\n%s\n%s", out, again)
			}
		}
		if !bytes.Equal(rebuilt.Bytes(), data) {
			t.Fatalf("lines do not reassemble the input")
		}
	})
}

// nonMatching returns the lines (with their terminators) match rejects, and
// the count of rejected lines before the first accepted one (-1: none).
func nonMatching(data []byte, match func([]byte) bool) (kept [][]byte, before int) {
	before = -1
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		if match(bytes.TrimSuffix(line, []byte{'\n'})) {
			if before < 0 {
				before = len(kept)
			}
			continue
		}
		kept = append(kept, line)
	}
	return kept, before
}

func FuzzAppendReplace(f *testing.F) {
	f.Add([]byte("{\"x\": 1}\n"), "2024-01-01T00:00:00Z", "abc", "density", "0.8")
	f.Add([]byte("{\"half"), "T", "g\xff", "n", "")
	f.Fuzz(func(t *testing.T, existing []byte, ts, tag, test, value string) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		if err := os.WriteFile(path, existing, 0o644); err != nil {
			t.Fatal(err)
		}
		row := Row{Timestamp: ts, Tag: tag, TestName: test, Metric: MetricServerSummary, Measurements: Object{{"v", value}}}
		line, err := row.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		if err := AppendRows(ctx, path, row); err != nil {
			t.Fatal(err)
		}
		appended, _ := os.ReadFile(path)
		want := append([]byte{}, existing...)
		if len(want) > 0 && want[len(want)-1] != '\n' {
			want = append(want, '\n')
		}
		want = append(append(want, line...), '\n')
		if !bytes.Equal(appended, want) {
			t.Fatalf("append:\n%q\nwant\n%q", appended, want)
		}

		match := matchRun(ts, tag, test)
		if !match(line) {
			t.Fatalf("matchRun does not match its own row %s", line)
		}
		repl := Row{Timestamp: ts, Tag: tag, TestName: test, Metric: MetricTrialSummary, Measurements: Object{{"v", "new"}}}
		replLine, _ := repl.MarshalLine()
		keptBefore, firstAt := nonMatching(appended, match)
		n, err := ReplaceRows(ctx, path, match, repl)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(path)
		keptAfter, newAt := nonMatching(after, match)
		if n < 1 {
			t.Fatalf("matched %d lines, the appended row at least", n)
		}
		if len(keptBefore) != len(keptAfter) {
			t.Fatalf("kept %d lines, had %d", len(keptAfter), len(keptBefore))
		}
		for i := range keptBefore {
			// The last kept line may gain a '\n' only if rows follow it.
			if !bytes.Equal(bytes.TrimSuffix(keptBefore[i], []byte{'\n'}), bytes.TrimSuffix(keptAfter[i], []byte{'\n'})) ||
				(i < len(keptBefore)-1 && !bytes.Equal(keptBefore[i], keptAfter[i])) {
				t.Fatalf("kept line %d changed: %q -> %q", i, keptBefore[i], keptAfter[i])
			}
		}
		if newAt != firstAt {
			t.Fatalf("new row at position %d, first match was at %d", newAt, firstAt)
		}
		if c := bytes.Count(after, append(replLine, '\n')); c != 1 {
			t.Fatalf("new row present %d times", c)
		}
		if _, again := nonMatching(after, match); again < 0 {
			t.Fatalf("replaced row not found")
		}
	})
}

func FuzzFormatFloat(f *testing.F) {
	for _, x := range []float64{2, 0.8, 1e-05, 1e16, 123456789012345.6, 0.0001, math.Copysign(0, -1), 5e-324} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		s := FormatFloat(x)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if _, err := Marshal(x); err == nil {
				t.Fatal("non-finite float encoded")
			}
			return
		}
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != bits {
			t.Fatalf("FormatFloat(%v) = %s does not round-trip", x, s)
		}
		if a := math.Abs(x); (a == 0 || a >= 1e-4 && a < 1e16) != !bytes.ContainsAny([]byte(s), "e") {
			t.Fatalf("FormatFloat(%v) = %s: wrong notation", x, s)
		}
		if !bytes.ContainsAny([]byte(s), ".e") {
			t.Fatalf("FormatFloat(%v) = %s reads as an integer", x, s)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"a": [1, 2.5, "x", null, true], "a": {}}`))
	f.Add([]byte(`12345678901234567890123`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		out, err := Marshal(v)
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		v2, err := Decode(out)
		if err != nil {
			t.Fatalf("encoded output does not decode: %v\n%s", err, out)
		}
		out2, _ := Marshal(v2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
