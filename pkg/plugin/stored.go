package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/ladder"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// A stored run's recorded artifacts are read separately and lazily, each
// once per finished run (they are immutable once written), so that a panel
// reads only what it shows: the Runs over time trend reads stats.jsonl
// alone, never the time series of server_summary.json or psi_series.json.

// storedFile is one stored artifact parsed: value is nil when the run has
// none, or one that does not parse (problem says why, and what is read
// instead).
type storedFile[T any] struct {
	value   *T
	problem string
}

// storedRows are the rows of a stored run's stats.jsonl this project
// reads, by the one row rule (artifact.SelectRunRows): what panels show
// and the run's values for the verdicts (summary, compare, gates,
// changePoints share one read per run, kept in the stored-run cache).
type storedRows struct {
	// server and trial are the run's server_summary and trial_summary rows.
	server, trial *artifact.Row
	// ladder and phases are the run's last sets of those families.
	ladder, phases []artifact.Row
	// run is the run's values (verdicts.RunFromRunRows) named by its entry.
	run     *verdicts.Run
	problem string
}

// verdictRun is a copy of the run's values (nil when the run has no
// stats.jsonl or it could not be read): the cached value is shared.
func (s storedRows) verdictRun() *verdicts.Run {
	if s.run == nil {
		return nil
	}
	r := *s.run
	return &r
}

// rowsBytes estimates what a storedRows holds in memory, for the
// storedRunCacheMiB budget.
func rowsBytes(s storedRows) int64 {
	const header = 64 // a struct or slice header, a pointer, an interface
	n := int64(header + len(s.problem))
	row := func(r *artifact.Row) {
		if r == nil {
			return
		}
		n += header + int64(len(r.Timestamp)+len(r.Tag)+len(r.TestName)+len(r.Metric))
		for _, f := range r.Measurements {
			n += header + int64(len(f.Key))
			if t, ok := f.Value.(string); ok {
				n += int64(len(t))
			}
		}
	}
	row(s.server)
	row(s.trial)
	for i := range s.ladder {
		row(&s.ladder[i])
	}
	for i := range s.phases {
		row(&s.phases[i])
	}
	if s.run != nil {
		n += header + int64(len(s.run.ID)+len(s.run.TestName)+len(s.run.Tag)+len(s.run.Timestamp))
		for _, v := range s.run.Values {
			n += 2*header + 2*int64(len(v.Key)) // the value and its index entry
			if v.Text != nil {
				n += int64(len(*v.Text))
			}
		}
	}
	return n
}

// storedOnce reads one artifact of a stored run through c: finished once
// the run is complete (the orchestrator uploads server_summary.json or
// status.json last), live while it may still upload, a failed read when
// the file could not be read.
func storedOnce[T interface{ readFailed() bool }](ctx context.Context, d *Datasource, c *cached[T], e runs.Entry, name string, read func(context.Context) T) T {
	s, _, _ := c.get(ctx, d.key(keyStoredFile, e, name), func(ctx context.Context) (T, outcome) {
		s := read(ctx)
		switch {
		case s.readFailed():
			return s, failedRead
		case e.Artifacts.ServerSummary || e.Artifacts.Status:
			return s, finishedOK
		}
		return s, liveRun
	})
	return s
}

func (s storedFile[T]) readFailed() bool { return s.problem != "" }
func (s storedRows) readFailed() bool    { return s.problem != "" }

// inStore reports whether e's artifacts can be read from the results store.
func (d *Datasource) inStore(e runs.Entry) bool {
	return e.Source == runs.SourceStore && d.catalogs.Store != nil
}

// storedSummary is a stored run's server_summary.json read into the
// engine's Result (the blocks are harvested when it cannot be read).
func (d *Datasource) storedSummary(ctx context.Context, e runs.Entry) storedFile[artifact.StoredSummary] {
	return readStoredFile(ctx, d, d.cache.summaries, e, e.Artifacts.ServerSummary, runs.PartSummary, runs.FileServerSummary,
		func(s *runs.Stored) *artifact.StoredSummary { return s.Summary }, "its numbers are harvested from Prometheus")
}

// storedPSIFile is a stored run's psi_series.json: the bands and top
// series of every PSI panel.
func (d *Datasource) storedPSIFile(ctx context.Context, e runs.Entry) storedFile[artifact.PSISeries] {
	return readStoredFile(ctx, d, d.cache.psiFiles, e, e.Artifacts.PSISeries, runs.PartPSI, runs.FilePSISeries,
		func(s *runs.Stored) *artifact.PSISeries { return s.PSI }, "PSI series are read from Prometheus")
}

// storedNoticesFile is a stored run's notices.json: why its null fields
// are null, as its export said.
func (d *Datasource) storedNoticesFile(ctx context.Context, e runs.Entry) storedFile[[]artifact.Notice] {
	return readStoredFile(ctx, d, d.cache.notices, e, e.Artifacts.Notices, runs.PartNotices, runs.FileNotices,
		func(s *runs.Stored) *[]artifact.Notice {
			if !s.NoticesRecorded {
				return nil
			}
			return &s.Notices
		}, "its null fields are shown without their reasons")
}

// storedNoticeNotes are the notices a stored run's export recorded in its
// notices.json, as frame notices of run (a warning for a null's reason);
// a notices.json that cannot be read is one notice saying so.
func (d *Datasource) storedNoticeNotes(ctx context.Context, e runs.Entry, run string) []runNote {
	if !d.settings.PreferStored {
		return nil
	}
	f := d.storedNoticesFile(ctx, e)
	if f.problem != "" {
		return []runNote{{run: run, text: f.problem, warn: true}}
	}
	if f.value == nil {
		return nil
	}
	out := make([]runNote, 0, len(*f.value))
	for _, n := range *f.value {
		out = append(out, runNote{run: run, text: n.String(), warn: n.Severity == artifact.SeverityWarning})
	}
	return out
}

// readStoredFile reads one part of e through the stored-run reader, once,
// when the run has it; instead says what is read when it cannot be.
func readStoredFile[T any](ctx context.Context, d *Datasource, c *cached[storedFile[T]], e runs.Entry, has bool, part runs.Part, name string, pick func(*runs.Stored) *T, instead string) storedFile[T] {
	if !d.inStore(e) || !has {
		return storedFile[T]{}
	}
	return storedOnce(ctx, d, c, e, name, func(ctx context.Context) storedFile[T] {
		st := d.catalogs.Store.Read(ctx, e, part)
		s := storedFile[T]{value: pick(st)}
		if p := st.Problem(name); p != nil {
			s.value, s.problem = nil, fmt.Sprintf("the run's stored %s could not be read (%v): %s", name, p.Err, instead)
		}
		return s
	})
}

func (d *Datasource) storedRows(ctx context.Context, e runs.Entry) storedRows {
	if !d.inStore(e) || !e.Artifacts.StatsJSONL {
		return storedRows{}
	}
	return storedOnce(ctx, d, d.cache.rows, e, runs.FileStatsJSONL, func(ctx context.Context) storedRows {
		st := d.catalogs.Store.Read(ctx, e, runs.PartRows)
		rr := st.Rows
		s := storedRows{server: rr.Server, trial: rr.Trial, ladder: rr.Ladder, phases: rr.Phases}
		if p := st.Problem(runs.FileStatsJSONL); p != nil {
			s.problem = p.Err.Error()
			return s
		}
		r := verdicts.RunFromRunRows(rr)
		r.ID, r.Tag, r.TestName, r.Start = e.ID, e.Tag, e.TestName, e.Start
		s.run = &r
		return s
	})
}

// loadRun is a stored run's values through the stored-run cache: the
// run's stats.jsonl is read once per instance and shared by every query
// type. It fails like command.LoadEntry: a run without stats.jsonl, or
// one whose stats.jsonl could not be read.
func (d *Datasource) loadRun(ctx context.Context, e runs.Entry) (*verdicts.Run, error) {
	if !d.inStore(e) {
		return nil, fmt.Errorf("run %s is not in the results store", e.ID)
	}
	if !e.Artifacts.StatsJSONL {
		return nil, fmt.Errorf("run %s: no %s in the results store", e.ID, runs.FileStatsJSONL)
	}
	s := d.storedRows(ctx, e)
	if s.problem != "" {
		return nil, fmt.Errorf("run %s: %s %s", e.ID, runs.FileStatsJSONL, s.problem)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := s.verdictRun()
	if r == nil {
		return nil, fmt.Errorf("run %s: %s was not read", e.ID, runs.FileStatsJSONL)
	}
	return r, nil
}

// problems are the stored artifacts of e that could not be read, for the
// notices of what was read instead.
func problems(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// storedBlock is a block of a stored run read from its server_summary.json,
// when the settings prefer the store and the file holds the block.
func (d *Datasource) storedBlock(ctx context.Context, e runs.Entry, block string) (blockResult, bool) {
	if !d.settings.PreferStored {
		return blockResult{}, false
	}
	s := d.storedSummary(ctx, e).value
	if s == nil || !s.Blocks[block] {
		return blockResult{}, false
	}
	ns := []harvest.Notice{{Block: block, Kind: harvest.Stored,
		Reason: fmt.Sprintf("source: results store (the %s of run %s)", runs.FileServerSummary, e.ID)}}
	return blockResult{result: s.Result, notices: ns, cached: true, fromStore: true}, true
}

// storedPSI is a stored run's psi_series.json band set of one PSI panel.
func (d *Datasource) storedPSI(ctx context.Context, e runs.Entry, scope, resource string) *harvest.PSIBandSet {
	s := d.storedPSIFile(ctx, e).value
	if s == nil {
		return nil
	}
	sc := &s.Node
	if scope == "pod" {
		sc = &s.Pod
	}
	switch resource {
	case "cpu":
		return &sc.CPU
	case "memory":
		return &sc.Mem
	case "io":
		return &sc.IO
	}
	return nil
}

// ladderWindow is one step region of a stored run's ladder: the trimmed
// window, and the untrimmed span when the log gave it (StartMs 0: rows).
type ladderWindow struct {
	step runs.LadderStep
	win  runs.StepWindow
}

// storedLadderWindows are the step windows of a stored run's ladder: its
// ladder rows, else its logs.txt (no Prometheus read either way; none for
// a run outside the store or without a ladder). Skipped steps have none.
func (d *Datasource) storedLadderWindows(ctx context.Context, e runs.Entry) []ladderWindow {
	var out []ladderWindow
	if steps, _, found := ladder.FromRows(d.storedRows(ctx, e).ladder); found && d.settings.PreferStored {
		for _, r := range steps {
			out = append(out, ladderWindow{step: r.Step, win: r.Window})
		}
		return out
	}
	lad, err := d.storedLadderLog(ctx, e)
	if err != nil {
		return nil
	}
	for _, st := range lad.Steps {
		if w := st.Window(runs.DefaultLadderTrimStartS, runs.DefaultLadderTrimEndS); w.Skipped == "" {
			out = append(out, ladderWindow{step: st, win: w})
		}
	}
	return out
}

// storedLadderLog reads the ladder lines of a stored run's logs.txt (UTC
// timestamps, as the benchmark runner writes them), once per finished
// run. A run without the file has an empty ladder.
func (d *Datasource) storedLadderLog(ctx context.Context, e runs.Entry) (runs.Ladder, error) {
	if e.Source != runs.SourceStore || d.catalogs.Store == nil || !e.Artifacts.Logs {
		return runs.Ladder{}, nil
	}
	r, _, err := d.cache.ladderLogs.get(ctx, d.key(keyLadderLog, e, ""), func(ctx context.Context) (ladderLog, outcome) {
		var r ladderLog
		rc, err := d.catalogs.Store.OpenFile(ctx, e, runs.FileLogs)
		if err != nil {
			r.err = fmt.Errorf("run %s: reading its stored %s: %w", e.ID, runs.FileLogs, err)
			return r, failedRead
		}
		defer rc.Close()
		if r.lad, err = runs.ReadLadder(rc, time.UTC); err != nil {
			r.err = fmt.Errorf("run %s: reading its stored %s: %w", e.ID, runs.FileLogs, err)
			return r, failedRead
		}
		if !e.EndKnown {
			return r, liveRun
		}
		return r, finishedOK
	})
	if err != nil {
		return runs.Ladder{}, err
	}
	return r.lad, r.err
}

// ladderLog is a stored logs.txt's ladder, or why it could not be read.
type ladderLog struct {
	lad runs.Ladder
	err error
}

// storeNotices are the caveats of reading a stored run: an artifact that
// could not be read (so its numbers were harvested instead).
func (d *Datasource) storeNotices(ctx context.Context, e runs.Entry) []string {
	if !d.settings.PreferStored {
		return nil
	}
	return problems(d.storedSummary(ctx, e).problem, d.storedPSIFile(ctx, e).problem, d.storedRows(ctx, e).problem)
}

// kubernetes is where the Kubernetes part of oom_events comes from for a
// run: a stored run's recorded values (never today's cluster); other runs
// have no "before" snapshot, without which the four counts are unknown, so
// nothing is read for them either.
func (d *Datasource) kubernetes(ctx context.Context, e runs.Entry) engine.Kubernetes {
	if e.Source == runs.SourceStore {
		return engine.Kubernetes{Recorded: d.recordedOOM(ctx, e)}
	}
	if d.settings.Kube.Access == KubeOff {
		return engine.Kubernetes{Why: "Kubernetes access is off in the datasource settings"}
	}
	return engine.Kubernetes{Why: "a run outside the results store has no \"before\" snapshot of the worker pods, without which restarts, OOM-killed pods, evictions and lost pods cannot be counted"}
}

// recordedOOM is the four counts a stored run's server_summary.json
// recorded, or none with the reason.
func (d *Datasource) recordedOOM(ctx context.Context, e runs.Entry) *harvest.KubernetesOOM {
	s := d.storedSummary(ctx, e).value
	if s != nil && s.Blocks[harvest.BlockOOM] {
		o := s.Result.OOM
		return &harvest.KubernetesOOM{WorkerRestarts: o.WorkerRestarts, WorkerOOMKilledPods: o.WorkerOOMKilledPods,
			Evicted: o.Evicted, WorkerPodsLost: o.WorkerPodsLost,
			Reason: "not recorded in the run's stored " + runs.FileServerSummary}
	}
	if !e.Artifacts.ServerSummary {
		return &harvest.KubernetesOOM{Reason: "the run's " + runs.FileServerSummary + " is not in the results store (`density export` records these counts)"}
	}
	return &harvest.KubernetesOOM{Reason: "the run's stored " + runs.FileServerSummary + " does not record these counts"}
}
