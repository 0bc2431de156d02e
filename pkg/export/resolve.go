package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/substrate/density/pkg/runs"
)

// runInputs is the resolved run and the Locust files read for it.
type runInputs struct {
	Run      runs.Run
	History  runs.History
	HistErr  error // stats_history.csv present but unreadable (treated as no samples)
	Steady   runs.Steady
	Stats    []runs.OperationStats
	StatsErr error
	// HasStatsRows says stats.csv exists with at least one data row.
	HasStatsRows bool
	Status       *runs.Status
	Before       []byte // cluster_before.json, nil when absent
	// Ladder is logs.txt's ladder (nil: no logs.txt or --no-ladder);
	// LadderErr says logs.txt could not be read.
	Ladder    *runs.Ladder
	LadderErr error
	Notices   []string
}

// opener opens one of a run's files; fs.ErrNotExist when it is absent.
type opener func(ctx context.Context, name string) (io.ReadCloser, error)

func dirOpener(dir string) opener {
	return func(_ context.Context, name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(dir, name))
	}
}

// storeLayout matches the orchestrator's upload layout in a path, so a run
// directory synced from the store keeps its test name and tag.
var storeLayout = regexp.MustCompile(`(?:^|/)runs/([^/]+)/run_date=[^/]+/run_ts=([0-9]+)/run_tag=([^/]+)/?$`)

// resolve reads the run's files and decides its window, names and steady
// window. Start/End come from the flags, else server_summary.json metadata,
// else the last trial_summary row of stats.jsonl, else the first and last
// stats_history.csv timestamps.
func resolve(ctx context.Context, o Options, open opener, base runs.Run) (runInputs, error) {
	in := runInputs{Run: base}
	r := &in.Run

	readOptional := func(name string, fn func(io.Reader) error) (bool, error) {
		rc, err := open(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		defer rc.Close()
		return true, fn(rc)
	}

	if ok, err := readOptional(runs.FileStatsHistory, func(rd io.Reader) error {
		h, err := runs.ReadHistory(rd)
		in.History = h
		return err
	}); err != nil {
		in.HistErr = err
		in.Notices = append(in.Notices, fmt.Sprintf("%s unreadable, treated as having no samples: %v", runs.FileStatsHistory, err))
	} else {
		r.Artifacts.StatsHistory = ok
	}

	var recorded runs.Recorded
	if ok, err := readOptional(runs.FileServerSummary, func(rd io.Reader) error {
		m, err := runs.ReadServerSummaryMeta(rd)
		recorded = m
		return err
	}); err != nil {
		in.Notices = append(in.Notices, fmt.Sprintf("previous %s unreadable: %v", runs.FileServerSummary, err))
	} else {
		r.Artifacts.ServerSummary = ok
	}
	if recorded.Start == nil || recorded.End == nil {
		if _, err := readOptional(runs.FileStatsJSONL, func(rd io.Reader) error {
			m, err := runs.ReadTrialSummaryWindow(rd)
			if m.Start != nil {
				recorded = m
			}
			return err
		}); err != nil {
			in.Notices = append(in.Notices, fmt.Sprintf("%s unreadable: %v", runs.FileStatsJSONL, err))
		}
	}

	if m := storeLayout.FindStringSubmatch(filepath.ToSlash(o.RunDir)); m != nil {
		if r.TestName == "" {
			r.TestName = m[1]
		}
		if r.Tag == "" {
			r.Tag = m[3]
		}
		if r.Start == 0 {
			r.Start, _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	if r.TestName == "" && recorded.TestName != nil {
		r.TestName = *recorded.TestName
	}
	if r.Tag == "" && recorded.Tag != nil {
		r.Tag = *recorded.Tag
	}
	if o.TestName != "" {
		r.TestName = o.TestName
	}
	if o.Tag != "" {
		r.Tag = o.Tag
	}

	start, end := o.Start, o.End
	switch {
	case start != 0 && end != 0:
	case recorded.Start != nil && recorded.End != nil:
		start, end = pick(start, *recorded.Start), pick(end, *recorded.End)
	case in.History.HasBounds:
		start, end = pick(start, in.History.First), pick(end, in.History.Last)
	case r.Start != 0 && end != 0:
		start = r.Start
	}
	if start == 0 || end == 0 {
		return in, usageErrorf("cannot tell the run window: pass --start and --end (no server_summary.json, trial_summary row or stats_history.csv timestamps)")
	}
	if end < start {
		return in, usageErrorf("run window [%d, %d] ends before it starts", start, end)
	}
	r.Start, r.End = start, end
	in.Steady = runs.ComputeSteady(in.History.Samples, start, end)
	r.SteadyStart, r.SteadyEnd, r.SteadyFromSamples = in.Steady.Start, in.Steady.End, in.Steady.FromSamples
	r.PeakUsers = in.Steady.Peak
	if !in.Steady.FromSamples {
		in.Notices = append(in.Notices, "steady window = run window: "+in.Steady.Why)
	}

	if ok, err := readOptional(runs.FileStats, func(rd io.Reader) error {
		data, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		in.HasStatsRows, _ = runs.HasDataRows(bytes.NewReader(data))
		in.Stats, err = runs.ReadStatsCSV(bytes.NewReader(data))
		return err
	}); err != nil {
		in.StatsErr = err
		in.Notices = append(in.Notices, fmt.Sprintf("%s unreadable: %v", runs.FileStats, err))
	} else {
		r.Artifacts.Stats = ok
	}
	if ok, err := readOptional(runs.FileStatus, func(rd io.Reader) error {
		st, err := runs.ReadStatus(rd)
		if err == nil {
			in.Status = &st
		}
		return err
	}); err != nil {
		in.Notices = append(in.Notices, fmt.Sprintf("%s unreadable: %v", runs.FileStatus, err))
	} else {
		r.Artifacts.Status = ok
	}
	if _, err := readOptional(runs.FileClusterBefore, func(rd io.Reader) error {
		b, err := io.ReadAll(rd)
		in.Before = b
		return err
	}); err != nil {
		in.Before = nil
		in.Notices = append(in.Notices, fmt.Sprintf("%s unreadable: %v", runs.FileClusterBefore, err))
	}
	in.Ladder, in.LadderErr = readLadderLog(ctx, o.Ladder, open)
	return in, nil
}

func pick(flag, fallback int64) int64 {
	if flag != 0 {
		return flag
	}
	return fallback
}
