package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
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
		// Never through a symbolic link (export.md).
		return artifact.OpenNoFollow(filepath.Join(dir, name))
	}
}

// resolve reads the run's files and decides its window and steady window
// (runs.ResolveWindow, RuleExport: the flags, else server_summary.json
// metadata, else the last trial_summary row of stats.jsonl, else the first
// and last stats_history.csv timestamps) and its names (the flags, else
// the store layout, else what the run's own artifacts recorded).
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

	var summary *runs.Recorded
	if ok, err := readOptional(runs.FileServerSummary, func(rd io.Reader) error {
		m, err := runs.ReadServerSummaryMeta(rd)
		summary = &m
		return err
	}); err != nil {
		summary = nil
		in.Notices = append(in.Notices, fmt.Sprintf("previous %s unreadable: %v", runs.FileServerSummary, err))
	} else {
		r.Artifacts.ServerSummary = ok
	}
	trial := func() *runs.Recorded {
		var rec *runs.Recorded
		if _, err := readOptional(runs.FileStatsJSONL, func(rd io.Reader) error {
			m, err := runs.ReadTrialSummaryWindow(rd)
			if m.Start != nil {
				rec = &m
			}
			return err
		}); err != nil {
			in.Notices = append(in.Notices, fmt.Sprintf("%s unreadable: %v", runs.FileStatsJSONL, err))
		}
		return rec
	}

	// A run directory synced from the store keeps its test name and tag.
	if l, ok := runs.ParseStorePath(o.RunDir); ok {
		if r.TestName == "" {
			r.TestName = l.TestName
		}
		if r.Tag == "" {
			r.Tag = l.Tag
		}
		if r.Start == 0 {
			r.Start = l.RunTS
		}
	}
	var hist *runs.History
	if in.HistErr == nil {
		hist = &in.History
	}
	w, err := runs.ResolveWindow(runs.WindowInputs{Rule: runs.RuleExport, Start: o.Start, End: o.End, RunTS: r.Start,
		Summary: summary, Trial: trial, History: hist})
	recorded := w.Recorded
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
	if err != nil {
		return in, cli.Usage(err)
	}
	r.Start, r.End = w.Start, w.End
	in.Steady = w.Steady
	r.SteadyStart, r.SteadyEnd, r.SteadyFromSamples = in.Steady.Start, in.Steady.End, in.Steady.FromSamples
	r.PeakUsers = w.PeakUsers
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
