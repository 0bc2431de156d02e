// Package command is the `density check`, `compare` and `regressions`
// subcommands (and `mage check`): it reads stored runs, calls
// pkg/verdicts, and writes rows, JUnit and tables.
package command

import (
	"context"
	"fmt"
	"slices"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// LoadDir reads a run directory's stats.jsonl into a run (id: the
// directory).
func LoadDir(dir string) (*verdicts.Run, error) {
	st, err := runs.Dir(dir, runs.PartRows)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if !st.Entry.Artifacts.StatsJSONL {
		return nil, cli.Usagef("run directory %s: no %s", dir, runs.FileStatsJSONL)
	}
	if p := st.Problem(runs.FileStatsJSONL); p != nil {
		return nil, cli.Usagef("run directory %s: %v", dir, p)
	}
	r := verdicts.RunFromRunRows(st.Rows)
	r.ID = dir
	return &r, nil
}

// LoadEntry reads a stored run.
func LoadEntry(ctx context.Context, s *runs.Store, e runs.Entry) (*verdicts.Run, error) {
	st := s.Read(ctx, e, runs.PartRows)
	if p := st.Problem(runs.FileStatsJSONL); p != nil {
		return nil, fmt.Errorf("run %s: %w", e.ID, p)
	}
	if !e.Artifacts.StatsJSONL {
		return nil, fmt.Errorf("run %s: no %s in the results store", e.ID, runs.FileStatsJSONL)
	}
	r := verdicts.RunFromRunRows(st.Rows)
	r.ID, r.Tag, r.TestName = e.ID, e.Tag, e.TestName
	r.Start = e.Start
	return &r, nil
}

// LoadStoreRun reads the run with store id id.
func LoadStoreRun(ctx context.Context, s *runs.Store, id string) (*verdicts.Run, error) {
	rid, err := runs.ParseRunID(id)
	if err != nil {
		return nil, cli.Usagef("run id %q: %v", id, err)
	}
	e, err := s.Get(ctx, rid)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return LoadEntry(ctx, s, e)
}

// LoadTest reads every stored run of testName starting at or after from
// (0: all) that has a stats.jsonl.
func LoadTest(ctx context.Context, s *runs.Store, testName string, from int64) ([]*verdicts.Run, error) {
	es, err := s.List(ctx, runs.ListOptions{TestName: testName, From: from})
	if err != nil {
		return nil, err
	}
	var out []*verdicts.Run
	for _, e := range es {
		if !e.Artifacts.Has("stats.jsonl") {
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
func LatestBaseline(ctx context.Context, s *runs.Store, cand *verdicts.Run) (*verdicts.Run, error) {
	es, err := s.List(ctx, runs.ListOptions{TestName: cand.TestName})
	if err != nil {
		return nil, err
	}
	return LatestBaselineOf(es, cand, func(e runs.Entry) (*verdicts.Run, error) { return LoadEntry(ctx, s, e) })
}

// LatestBaselineOf is LatestBaseline over a listing of the candidate's
// test: the runs are read newest first through load, each at most once,
// until one of the candidate's cohort is found (the candidate itself is
// never read again).
func LatestBaselineOf(es []runs.Entry, cand *verdicts.Run, load func(runs.Entry) (*verdicts.Run, error)) (*verdicts.Run, error) {
	es = slices.Clone(es)
	runs.SortNewestFirst(es)
	label := verdicts.Cohorts([]*verdicts.Run{cand}, nil)[0].Label
	for _, e := range es {
		if e.ID == cand.ID || !e.Artifacts.StatsJSONL {
			continue
		}
		r, err := load(e)
		if err != nil {
			return nil, err
		}
		if verdicts.Cohorts([]*verdicts.Run{r}, nil)[0].Label == label {
			return r, nil
		}
	}
	return nil, cli.Usagef("no other run of %s in its cohort for --baseline-run latest", cand.TestName)
}

// BaselineFlags are the three baseline flags shared by check and export.
type BaselineFlags struct {
	Dir, Run, Store string
}

// Set reports whether a baseline was asked for.
func (b BaselineFlags) Set() bool { return b.Dir != "" || b.Run != "" }

// Load reads the baseline (nil when none was asked for). defaultStore is
// --store, used when --baseline-store is empty.
func (b BaselineFlags) Load(ctx context.Context, cand *verdicts.Run, defaultStore string) (*verdicts.Run, error) {
	switch {
	case b.Dir != "" && b.Run != "":
		return nil, cli.Usagef("--baseline and --baseline-run are exclusive")
	case b.Dir != "":
		return LoadDir(b.Dir)
	case b.Run == "":
		return nil, nil
	}
	url := b.Store
	if url == "" {
		url = defaultStore
	}
	if url == "" {
		return nil, cli.Usagef("--baseline-run needs --baseline-store or --store")
	}
	s, err := runs.OpenStore(ctx, url)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	defer s.Close()
	if b.Run == "latest" {
		return LatestBaseline(ctx, s, cand)
	}
	return LoadStoreRun(ctx, s, b.Run)
}
