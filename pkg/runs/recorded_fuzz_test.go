package runs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/substrate/density/pkg/artifact"
)

// FuzzReadTrialSummaryWindow checks the stats.jsonl window reader against a
// naive reading of its rule (the last line that is a row, artifact.ParseRow,
// of metric trial_summary with integer run_start and run_end wins; anything
// else is skipped), whatever
// the read sizes; ReadServerSummaryMeta must not panic on the same bytes.
func FuzzReadTrialSummaryWindow(f *testing.F) {
	row := `{"timestamp": "2024-03-12T10:00:00Z", "tag": "t", "test_name": "n", "metric": "trial_summary", "measurements": {"run_start": "1710237600", "run_end": "1710240585"}}`
	for _, s := range []string{
		row + "\n",
		`{"metric": "locust"}` + "\n" + row + "\n" + `{"metric": "trial_summary", "measurements": {"run_start": "x"}}` + "\n",
		row + "\r\n" + row[:40],
		"\x00\xff\n" + row,
		`{"metric": "trial_summary", "measurements": {"run_start": "1", "run_end": null}}`,
		`{"metadata": {"start_ts": 1, "end_ts": 2, "test_name": "a"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadTrialSummaryWindow(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("reading from memory: %v", err)
		}
		again, err := ReadTrialSummaryWindow(iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("result depends on read sizes: %+v vs %+v (%v)", got, again, err)
		}
		var want Recorded
		for _, line := range bytes.Split(data, []byte("\n")) {
			r, err := artifact.ParseRow(line)
			if err != nil || r.Metric != "trial_summary" {
				continue
			}
			rs, _ := r.Measurements.Get("run_start")
			re, _ := r.Measurements.Get("run_end")
			ss, ok1 := rs.(string)
			es, ok2 := re.(string)
			if !ok1 || !ok2 {
				continue
			}
			s, err1 := strconv.ParseInt(ss, 10, 64)
			e, err2 := strconv.ParseInt(es, 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			want = Recorded{TestName: &r.TestName, Tag: &r.Tag, Start: &s, End: &e}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %s, want %s", show(got), show(want))
		}
		_, _ = ReadServerSummaryMeta(bytes.NewReader(data))
	})
}

func show(r Recorded) string {
	b, _ := json.Marshal(r)
	return string(b)
}
