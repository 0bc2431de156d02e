package runs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Recorded is what this project's own earlier artifacts of a run say about
// it: the metadata block of server_summary.json and the run_start/run_end of
// a trial_summary row. Nil fields were not recorded.
type Recorded struct {
	TestName, Tag          *string
	Start, End             *int64
	SteadyStart, SteadyEnd *int64
}

// ReadServerSummaryMeta reads the metadata block of server_summary.json and
// checks that the whole document is JSON (a half-written upload is an
// error).
func ReadServerSummaryMeta(r io.Reader) (Recorded, error) { return readSummaryMeta(r, true) }

// PeekServerSummaryMeta reads the metadata block of server_summary.json and
// stops there: this project writes it first, so a run listing does not scan
// the megabytes of time series after it. A file broken after its metadata
// still tells its window; its blocks are checked where they are read.
func PeekServerSummaryMeta(r io.Reader) (Recorded, error) { return readSummaryMeta(r, false) }

func readSummaryMeta(r io.Reader, whole bool) (Recorded, error) {
	fail := func(err error) (Recorded, error) {
		return Recorded{}, fmt.Errorf("reading %s metadata: %w", FileServerSummary, err)
	}
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil {
		return fail(err)
	} else if t != json.Delim('{') {
		return fail(fmt.Errorf("not a JSON object"))
	}
	var rec Recorded
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if key, _ := t.(string); key != "metadata" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			continue
		}
		var m struct {
			TestName    *string `json:"test_name"`
			Tag         *string `json:"tag"`
			Start       *int64  `json:"start_ts"`
			End         *int64  `json:"end_ts"`
			SteadyStart *int64  `json:"steady_start_ts"`
			SteadyEnd   *int64  `json:"steady_end_ts"`
		}
		if err := dec.Decode(&m); err != nil {
			return fail(err)
		}
		rec = Recorded{TestName: m.TestName, Tag: m.Tag, Start: m.Start, End: m.End, SteadyStart: m.SteadyStart, SteadyEnd: m.SteadyEnd}
		if !whole {
			return rec, nil
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	return rec, nil
}

// ReadTrialSummaryWindow returns the run window of the last trial_summary
// row of stats.jsonl that has one. Lines that are not JSON objects are
// skipped: other tools' rows and a corrupt line must not hide a good row.
func ReadTrialSummaryWindow(r io.Reader) (Recorded, error) {
	var rec Recorded
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var row struct {
			Metric       string             `json:"metric"`
			Tag          *string            `json:"tag"`
			TestName     *string            `json:"test_name"`
			Measurements map[string]*string `json:"measurements"`
		}
		if json.Unmarshal(sc.Bytes(), &row) != nil || row.Metric != "trial_summary" {
			continue
		}
		start, okS := parseRecordedInt(row.Measurements["run_start"])
		end, okE := parseRecordedInt(row.Measurements["run_end"])
		if !okS || !okE {
			continue
		}
		rec = Recorded{TestName: row.TestName, Tag: row.Tag, Start: &start, End: &end}
	}
	if err := sc.Err(); err != nil {
		return Recorded{}, fmt.Errorf("reading %s: %w", FileStatsJSONL, err)
	}
	return rec, nil
}

func parseRecordedInt(s *string) (int64, bool) {
	if s == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(*s, 10, 64)
	return v, err == nil
}
