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
	rd := &runReader{ctx: ctx, open: open, in: runInputs{Run: base}}
	rd.history()
	summary := rd.summaryMeta()
	storeNames(&rd.in.Run, o.RunDir)
	if err := rd.window(o, summary); err != nil {
		return rd.in, err
	}
	rd.stats()
	rd.status()
	rd.before()
	in := rd.in
	in.Ladder, in.LadderErr = readLadderLog(ctx, o.Ladder, open)
	return in, nil
}

// runReader reads a run's files into runInputs, a notice for each file
// that is there but unreadable.
type runReader struct {
	ctx  context.Context
	open opener
	in   runInputs
}

// optional reads the file with fn: false when it is absent.
func (rd *runReader) optional(name string, fn func(io.Reader) error) (bool, error) {
	rc, err := rd.open(rd.ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer rc.Close()
	return true, fn(rc)
}

func (rd *runReader) notef(format string, a ...any) {
	rd.in.Notices = append(rd.in.Notices, fmt.Sprintf(format, a...))
}

// history reads stats_history.csv.
func (rd *runReader) history() {
	in := &rd.in
	ok, err := rd.optional(runs.FileStatsHistory, func(r io.Reader) error {
		h, err := runs.ReadHistory(r)
		in.History = h
		return err
	})
	if err != nil {
		in.HistErr = err
		rd.notef("%s unreadable, treated as having no samples: %v", runs.FileStatsHistory, err)
		return
	}
	in.Run.Artifacts.StatsHistory = ok
}

// summaryMeta is a previous server_summary.json's metadata; nil when absent
// or unreadable.
func (rd *runReader) summaryMeta() *runs.Recorded {
	var summary *runs.Recorded
	ok, err := rd.optional(runs.FileServerSummary, func(r io.Reader) error {
		m, err := runs.ReadServerSummaryMeta(r)
		summary = &m
		return err
	})
	if err != nil {
		rd.notef("previous %s unreadable: %v", runs.FileServerSummary, err)
		return nil
	}
	rd.in.Run.Artifacts.ServerSummary = ok
	return summary
}

// trial is the window of the last trial_summary row of stats.jsonl; nil
// when there is none.
func (rd *runReader) trial() *runs.Recorded {
	var rec *runs.Recorded
	if _, err := rd.optional(runs.FileStatsJSONL, func(r io.Reader) error {
		m, err := runs.ReadTrialSummaryWindow(r)
		if m.Start != nil {
			rec = &m
		}
		return err
	}); err != nil {
		rd.notef("%s unreadable: %v", runs.FileStatsJSONL, err)
	}
	return rec
}

// storeNames gives a run directory synced from the store its test name,
// tag and start, where the run has none.
func storeNames(r *runs.Run, dir string) {
	l, ok := runs.ParseStorePath(dir)
	if !ok {
		return
	}
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

// window decides the run's window, steady window and names.
func (rd *runReader) window(o Options, summary *runs.Recorded) error {
	in := &rd.in
	r := &in.Run
	var hist *runs.History
	if in.HistErr == nil {
		hist = &in.History
	}
	w, err := runs.ResolveWindow(runs.WindowInputs{Rule: runs.RuleExport, Start: o.Start, End: o.End, RunTS: r.Start,
		Summary: summary, Trial: rd.trial, History: hist})
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
		return cli.Usage(err)
	}
	r.Start, r.End = w.Start, w.End
	in.Steady = w.Steady
	r.SteadyStart, r.SteadyEnd, r.SteadyFromSamples = in.Steady.Start, in.Steady.End, in.Steady.FromSamples
	r.PeakUsers = w.PeakUsers
	if !in.Steady.FromSamples {
		rd.notef("steady window = run window: %s", in.Steady.Why)
	}
	return nil
}

// stats reads stats.csv.
func (rd *runReader) stats() {
	in := &rd.in
	ok, err := rd.optional(runs.FileStats, func(r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		in.HasStatsRows, _ = runs.HasDataRows(bytes.NewReader(data))
		in.Stats, err = runs.ReadStatsCSV(bytes.NewReader(data))
		return err
	})
	if err != nil {
		in.StatsErr = err
		rd.notef("%s unreadable: %v", runs.FileStats, err)
		return
	}
	in.Run.Artifacts.Stats = ok
}

// status reads status.json.
func (rd *runReader) status() {
	in := &rd.in
	ok, err := rd.optional(runs.FileStatus, func(r io.Reader) error {
		st, err := runs.ReadStatus(r)
		if err == nil {
			in.Status = &st
		}
		return err
	})
	if err != nil {
		rd.notef("%s unreadable: %v", runs.FileStatus, err)
		return
	}
	in.Run.Artifacts.Status = ok
}

// before reads cluster_before.json.
func (rd *runReader) before() {
	in := &rd.in
	if _, err := rd.optional(runs.FileClusterBefore, func(r io.Reader) error {
		b, err := io.ReadAll(r)
		in.Before = b
		return err
	}); err != nil {
		in.Before = nil
		rd.notef("%s unreadable: %v", runs.FileClusterBefore, err)
	}
}
