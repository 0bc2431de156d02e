package phases

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"testing/iotest"
)

// FuzzReadLog: any input is counted or skipped, never a crash; every record
// has finite phases; reading byte by byte gives the same records; the rows
// always encode.
func FuzzReadLog(f *testing.F) {
	f.Add([]byte(lineAteletRestore + "\n" + lineAteomRestore + "\n"))
	f.Add([]byte(`[pod/x/y] {"msg":"Checkpoint timing breakdown","error.type":"E","ateom.actor.checkpoint.duration.total":NaN}`))
	f.Add([]byte(`{"jsonPayload":{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1},"timestamp":"2026-09-23T10:00:05Z"}`))
	f.Add([]byte("[\n{\"a\":\"\\ud83d\\ude00\"}, 1]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewCollector()
		if err := c.ReadLog(bytes.NewReader(data), "f"); err != nil {
			t.Fatal(err)
		}
		if c.Stats.Records != len(c.Records) || c.Stats.Records > c.Lines || c.Undecodable > c.Lines {
			t.Fatalf("stats %+v with %d records", c.Stats, len(c.Records))
		}
		for _, r := range c.Records {
			if len(r.Phases) == 0 {
				t.Fatalf("record without phases %+v", r)
			}
			for _, p := range r.Phases {
				if math.IsNaN(p.Seconds) || math.IsInf(p.Seconds, 0) || p.Name == "" {
					t.Fatalf("bad phase %+v", p)
				}
			}
		}
		if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
			c2 := NewCollector()
			if err := c2.ReadLog(iotest.OneByteReader(bytes.NewReader(data)), "f"); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Records, c2.Records) || c.Stats != c2.Stats {
				t.Fatalf("one-byte reads differ")
			}
		}
		Analyze(c.Records)
		rows, _ := Rows(RunKey{Timestamp: "1", Tag: "t", TestName: "n"}, Groups(c.Records))
		for _, r := range append(rows, SummaryRow(RunKey{Timestamp: "1", Tag: "t", TestName: "n"}, Summarize(c.Records))) {
			if _, err := r.MarshalLine(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
