package runs

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/substrate/density/pkg/artifact"
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
		var m artifact.RecordedMetadata
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
// row of stats.jsonl that has one. Lines that are not rows are skipped:
// other tools' rows and a corrupt line must not hide a good row.
func ReadTrialSummaryWindow(r io.Reader) (Recorded, error) {
	var rec Recorded
	err := artifact.ScanRows(r, func(l artifact.Line) error {
		if w, ok := trialWindow(l.Row); ok {
			rec = w
		}
		return nil
	})
	if err != nil {
		return Recorded{}, fmt.Errorf("reading %s: %w", FileStatsJSONL, err)
	}
	return rec, nil
}

// trialWindow is the window a trial_summary row records (ok false: row is
// nil, another metric, or lacks run_start/run_end).
func trialWindow(row *artifact.Row) (Recorded, bool) {
	if row == nil || row.Metric != artifact.MetricTrialSummary {
		return Recorded{}, false
	}
	start, okS := recordedInt(row.Measurements, "run_start")
	end, okE := recordedInt(row.Measurements, "run_end")
	if !okS || !okE {
		return Recorded{}, false
	}
	return Recorded{TestName: &row.TestName, Tag: &row.Tag, Start: &start, End: &end}, true
}

// RowKey is the identity the run's stats.jsonl rows repeat, when the
// record holds one (test name, tag and start).
func (r Recorded) RowKey() *artifact.RunKey {
	return artifact.RecordedMetadata{TestName: r.TestName, Tag: r.Tag, Start: r.Start}.RunKey()
}

// recordedInt is an integer measurement written as a string.
func recordedInt(m artifact.Object, key string) (int64, bool) {
	v, _ := m.Get(key)
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
