package runs

import (
	"strings"
	"testing"
)

func TestReadServerSummaryMeta(t *testing.T) {
	in := `{"metadata": {"test_name": "resume", "tag": "abc", "data_timestamp": "2026-01-01T00:00:00Z",
	  "start_ts": 1700000000, "end_ts": 1700003600, "steady_start_ts": 1700000600, "steady_end_ts": 1700003000, "atelet_lag_s": 70},
	  "cluster_packing": {}}`
	got, err := ReadServerSummaryMeta(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if *got.TestName != "resume" || *got.Tag != "abc" || *got.Start != 1700000000 || *got.End != 1700003600 ||
		*got.SteadyStart != 1700000600 || *got.SteadyEnd != 1700003000 {
		t.Errorf("got %+v", got)
	}
	if _, err := ReadServerSummaryMeta(strings.NewReader(`{"metadata": `)); err == nil {
		t.Error("truncated JSON must be an error")
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"cluster_packing": {`, ``} {
		if _, err := ReadServerSummaryMeta(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	// The metadata block after another block is found; a file broken after
	// its metadata still tells its window to Peek (the listing stops there).
	late, err := ReadServerSummaryMeta(strings.NewReader(`{"cluster_packing": {"summary": {}}, "metadata": {"start_ts": 5, "end_ts": 9}}`))
	if err != nil || *late.Start != 5 || *late.End != 9 {
		t.Errorf("metadata after a block: %+v %v", late, err)
	}
	const cutDoc = `{"metadata": {"start_ts": 5, "end_ts": 9}, "cluster_packing": {"summ`
	if _, err := ReadServerSummaryMeta(strings.NewReader(cutDoc)); err == nil {
		t.Error("a file cut after its metadata must be an error for ReadServerSummaryMeta")
	}
	cut, err := PeekServerSummaryMeta(strings.NewReader(cutDoc))
	if err != nil || *cut.End != 9 {
		t.Errorf("Peek of a file cut after its metadata: %+v %v", cut, err)
	}
	empty, err := ReadServerSummaryMeta(strings.NewReader(`{}`))
	if err != nil || empty.Start != nil || empty.TestName != nil {
		t.Errorf("missing metadata must leave fields nil: %+v %v", empty, err)
	}
}

func TestReadTrialSummaryWindow(t *testing.T) {
	lines := strings.Join([]string{
		`{"timestamp": "x", "tag": "t1", "test_name": "n", "metric": "trial_summary", "measurements": {"run_start": "100", "run_end": "200"}}`,
		`not json at all`,
		`{"timestamp": "x", "tag": "other", "test_name": "n", "metric": "locust_summary", "measurements": {"run_start": "1", "run_end": "2"}}`,
		`{"timestamp": "x", "tag": "t2", "test_name": "n", "metric": "trial_summary", "measurements": {"run_start": "300", "run_end": "400"}}`,
		`{"timestamp": "x", "tag": "t3", "test_name": "n", "metric": "trial_summary", "measurements": {"run_start": null, "run_end": "500"}}`,
	}, "\n")
	got, err := ReadTrialSummaryWindow(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if got.Start == nil || *got.Start != 300 || *got.End != 400 || *got.Tag != "t2" {
		t.Errorf("want the last complete trial_summary row (300, 400, t2), got %+v", got)
	}
	none, err := ReadTrialSummaryWindow(strings.NewReader("garbage\n"))
	if err != nil || none.Start != nil {
		t.Errorf("no trial_summary row: want nil window, got %+v %v", none, err)
	}
}
