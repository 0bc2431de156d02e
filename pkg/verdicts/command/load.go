// Package command is the `density check`, `compare` and `regressions`
// subcommands (and `mage check`): it reads stored runs, calls
// pkg/verdicts, and writes rows, JUnit and tables.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// Exit codes (export.md): precedence 2 > 1 > 3 > 4 > 0.
const (
	ExitOK         = 0
	ExitWrite      = 1
	ExitUsage      = 2
	ExitGateFailed = 3
	ExitRegression = 4
)

// maxStatsBytes bounds a stored stats.jsonl read.
const maxStatsBytes = 256 << 20

// usageError is a problem with the inputs (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// LoadDir reads a run directory's stats.jsonl into a run (id: the
// directory).
func LoadDir(dir string) (*verdicts.Run, error) {
	data, err := os.ReadFile(filepath.Join(dir, "stats.jsonl")) // #nosec G304 -- stats.jsonl of the run directory the operator named
	if err != nil {
		return nil, usagef("run directory %s: %v", dir, err)
	}
	r, err := runFromJSONL(data)
	if err != nil {
		return nil, usagef("run directory %s: %v", dir, err)
	}
	r.ID = dir
	return r, nil
}

func runFromJSONL(data []byte) (*verdicts.Run, error) {
	lines, err := artifact.ReadRows(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	r := verdicts.RunFromLines(lines)
	return &r, nil
}

// LoadEntry reads a stored run.
func LoadEntry(ctx context.Context, s *runs.Store, e runs.Entry) (*verdicts.Run, error) {
	data, err := s.ReadFile(ctx, e, "stats.jsonl", maxStatsBytes)
	if err != nil {
		return nil, err
	}
	r, err := runFromJSONL(data)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", e.ID, err)
	}
	r.ID, r.Tag, r.TestName = e.ID, e.Tag, e.TestName
	r.Start = e.Start
	return r, nil
}

// LoadStoreRun reads the run with store id id.
func LoadStoreRun(ctx context.Context, s *runs.Store, id string) (*verdicts.Run, error) {
	rid, err := runs.ParseRunID(id)
	if err != nil {
		return nil, usagef("run id %q: %v", id, err)
	}
	e, err := s.Get(ctx, rid)
	if err != nil {
		return nil, usagef("%v", err)
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
	all, err := LoadTest(ctx, s, cand.TestName, 0)
	if err != nil {
		return nil, err
	}
	label := verdicts.Cohorts([]*verdicts.Run{cand}, nil)[0].Label
	var best *verdicts.Run
	for _, r := range all {
		if r.ID == cand.ID || verdicts.Cohorts([]*verdicts.Run{r}, nil)[0].Label != label {
			continue
		}
		if best == nil || r.Start > best.Start {
			best = r
		}
	}
	if best == nil {
		return nil, usagef("no other run of %s in its cohort for --baseline-run latest", cand.TestName)
	}
	return best, nil
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
		return nil, usagef("--baseline and --baseline-run are exclusive")
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
		return nil, usagef("--baseline-run needs --baseline-store or --store")
	}
	s, err := runs.OpenStore(ctx, url)
	if err != nil {
		return nil, usagef("%v", err)
	}
	defer s.Close()
	if b.Run == "latest" {
		return LatestBaseline(ctx, s, cand)
	}
	return LoadStoreRun(ctx, s, b.Run)
}
