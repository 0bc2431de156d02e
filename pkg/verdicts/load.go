package verdicts

import (
	"context"
	"fmt"
	"slices"

	"github.com/substrate/density/pkg/runs"
)

// InputError is a run its caller named that cannot be used: a run
// directory without a readable stats.jsonl, a malformed run id, a run the
// store does not hold, no baseline in the candidate's cohort. It carries
// no exit code: the commands map it to theirs (pkg/cli, exit 2) and the
// plugin to an HTTP status.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, a ...any) error { return &InputError{Err: fmt.Errorf(format, a...)} }

// LoadDir reads a run directory's stats.jsonl into a run (id: the
// directory). Every failure is an InputError.
func LoadDir(dir string) (*Run, error) {
	st, err := runs.Dir(dir, runs.PartRows)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if !st.Entry.Artifacts.StatsJSONL {
		return nil, inputErrorf("run directory %s: no %s", dir, runs.FileStatsJSONL)
	}
	if p := st.Problem(runs.FileStatsJSONL); p != nil {
		return nil, inputErrorf("run directory %s: %v", dir, p)
	}
	r := RunFromRunRows(st.Rows)
	r.ID = dir
	return &r, nil
}

// LoadEntry reads a stored run: its stats.jsonl through the stored-run
// reader, named by its entry.
func LoadEntry(ctx context.Context, s *runs.Store, e runs.Entry) (*Run, error) {
	st := s.Read(ctx, e, runs.PartRows)
	if p := st.Problem(runs.FileStatsJSONL); p != nil {
		return nil, fmt.Errorf("run %s: %w", e.ID, p)
	}
	if !e.Artifacts.StatsJSONL {
		return nil, fmt.Errorf("run %s: no %s in the results store", e.ID, runs.FileStatsJSONL)
	}
	r := RunFromRunRows(st.Rows)
	r.ID, r.Tag, r.TestName = e.ID, e.Tag, e.TestName
	r.Start = e.Start
	return &r, nil
}

// LoadStoreRun reads the run with store id id; a malformed id or a run
// the store does not hold is an InputError.
func LoadStoreRun(ctx context.Context, s *runs.Store, id string) (*Run, error) {
	rid, err := runs.ParseRunID(id)
	if err != nil {
		return nil, inputErrorf("run id %q: %v", id, err)
	}
	e, err := s.Get(ctx, rid)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return LoadEntry(ctx, s, e)
}

// LoadTest reads every stored run of testName starting at or after from
// (0: all) that has a stats.jsonl, newest first.
func LoadTest(ctx context.Context, s *runs.Store, testName string, from int64) ([]*Run, error) {
	es, err := s.List(ctx, runs.ListOptions{TestName: testName, From: from})
	if err != nil {
		return nil, err
	}
	var out []*Run
	for _, e := range es {
		if !e.Artifacts.Has(runs.FileStatsJSONL) {
			continue
		}
		r, err := LoadEntry(ctx, s, e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// LatestBaseline is the newest stored run of the candidate's test name and
// cohort other than the candidate itself.
func LatestBaseline(ctx context.Context, s *runs.Store, cand *Run) (*Run, error) {
	es, err := s.List(ctx, runs.ListOptions{TestName: cand.TestName})
	if err != nil {
		return nil, err
	}
	return LatestBaselineOf(es, cand, func(e runs.Entry) (*Run, error) { return LoadEntry(ctx, s, e) })
}

// LatestBaselineOf is LatestBaseline over a listing of the candidate's
// test: the runs are read newest first through load, each at most once,
// until one of the candidate's cohort is found (the candidate itself is
// never read again). None found is an InputError.
func LatestBaselineOf(es []runs.Entry, cand *Run, load func(runs.Entry) (*Run, error)) (*Run, error) {
	es = slices.Clone(es)
	runs.SortNewestFirst(es)
	label := Cohorts([]*Run{cand}, nil)[0].Label
	for _, e := range es {
		if e.ID == cand.ID || !e.Artifacts.StatsJSONL {
			continue
		}
		r, err := load(e)
		if err != nil {
			return nil, err
		}
		if Cohorts([]*Run{r}, nil)[0].Label == label {
			return r, nil
		}
	}
	return nil, inputErrorf("no other run of %s in its cohort for --baseline-run latest", cand.TestName)
}
