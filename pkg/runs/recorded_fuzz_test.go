package runs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"testing/iotest"
)

// FuzzReadTrialSummaryWindow checks the stats.jsonl window reader against a
// naive reading of its rule (the last line that is a trial_summary row with
// integer run_start and run_end wins; anything else is skipped), whatever
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
			return // a line over the scanner limit; nothing to compare
		}
		again, err := ReadTrialSummaryWindow(iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("result depends on read sizes: %+v vs %+v (%v)", got, again, err)
		}
		var want Recorded
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSuffix(line, []byte("\r"))
			var r struct {
				Metric       string             `json:"metric"`
				Tag          *string            `json:"tag"`
				TestName     *string            `json:"test_name"`
				Measurements map[string]*string `json:"measurements"`
			}
			if json.Unmarshal(line, &r) != nil || r.Metric != "trial_summary" || r.Measurements["run_start"] == nil || r.Measurements["run_end"] == nil {
				continue
			}
			s, err1 := strconv.ParseInt(*r.Measurements["run_start"], 10, 64)
			e, err2 := strconv.ParseInt(*r.Measurements["run_end"], 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			want = Recorded{TestName: r.TestName, Tag: r.Tag, Start: &s, End: &e}
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
