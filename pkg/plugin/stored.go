package plugin

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cluster"
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
// reads, by the one row rule (artifact.SelectRunRows), as the handlers of
// one run use them (phases, ladder): decoded from the run's storedRun.
type storedRows struct {
	// server and trial are the run's server_summary and trial_summary rows.
	server, trial *artifact.Row
	// ladder and phases are the run's last sets of those families.
	ladder, phases []artifact.Row
	problem        string
}

// storedRun is what the stored-run cache keeps of a run's stats.jsonl:
// one value per run, read once and shared by every query type (summary,
// frontier, compare, gates, changePoints, annotations, phases, ladder).
// What a query over many runs needs is kept typed; the phase and ladder
// sets, which one run's panels alone read whole and which are most of a
// rich run's rows, are kept as their JSON lines and decoded on demand.
// A thousand rich runs so fit the default storedRunCacheMiB many times
// over (docs/performance.md "A thousand stored runs").
type storedRun struct {
	key artifact.RunKey
	// server and trial are the run's server_summary and trial_summary rows.
	server, trial *artifact.Row
	// head is the run's values (verdicts.RunFromRunRows, named by its
	// entry) of the server_summary, trial_summary and *_summary rows: every
	// key verdicts.DefaultKeys can give, in the full run's order.
	head *verdicts.Run
	// phases and ladder are the run's last sets of those families as JSON
	// lines (artifact.Marshal of each row, one a line).
	phases, ladder []byte
	// more is true when the sets hold rows that head leaves out.
	more    bool
	problem string
}

func (s storedRun) readFailed() bool { return s.problem != "" }

// newStoredRun keeps the run's rows rr of entry e; decoding them back
// (rows, fullRun) gives the rows and values read.
func newStoredRun(e runs.Entry, rr artifact.RunRows) (storedRun, error) {
	// The rows are copied: rr's point into the array of every row read,
	// which the kept run must not hold.
	s := storedRun{key: rr.Key, server: copyRow(rr.Server), trial: copyRow(rr.Trial)}
	var err error
	if s.phases, err = encodeRows(rr.Phases); err != nil {
		return storedRun{}, err
	}
	if s.ladder, err = encodeRows(rr.Ladder); err != nil {
		return storedRun{}, err
	}
	h := artifact.RunRows{Key: rr.Key, Server: rr.Server, Trial: rr.Trial,
		Phases: summaryRows(rr.Phases), Ladder: summaryRows(rr.Ladder)}
	s.more = len(h.Phases) < len(rr.Phases) || len(h.Ladder) < len(rr.Ladder)
	s.head = named(verdicts.RunFromRunRows(h), e)
	return s, nil
}

func copyRow(r *artifact.Row) *artifact.Row {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// named gives r the identity of its entry.
func named(r verdicts.Run, e runs.Entry) *verdicts.Run {
	r.ID, r.Tag, r.TestName, r.Start = e.ID, e.Tag, e.TestName, e.Start
	return &r
}

// summaryRows are the rows of a set whose metric ends in _summary: the
// rows whose keys verdicts.DefaultKeys searches.
func summaryRows(set []artifact.Row) []artifact.Row {
	var out []artifact.Row
	for _, r := range set {
		if strings.HasSuffix(r.Metric, "_summary") {
			out = append(out, r)
		}
	}
	return out
}

// headCovers reports whether every key of keys (none: the default keys)
// is one a run's head holds: an undotted key (server_summary and
// trial_summary) or one of a *_summary row.
func headCovers(keys []string) bool {
	for _, k := range keys {
		if i := strings.IndexByte(k, '.'); i >= 0 && !strings.HasSuffix(k[:i], "_summary") {
			return false
		}
	}
	return true
}

func encodeRows(rows []artifact.Row) ([]byte, error) {
	var b bytes.Buffer
	for _, r := range rows {
		line, err := artifact.Marshal(r.Object())
		if err != nil {
			return nil, fmt.Errorf("keeping a %s row: %w", r.Metric, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return bytes.Clone(b.Bytes()), nil
}

func decodeRows(b []byte) []artifact.Row {
	var out []artifact.Row
	for line := range bytes.Lines(b) {
		// The lines were written by encodeRows from parsed rows: they parse.
		if r, err := artifact.ParseRow(line); err == nil {
			out = append(out, *r)
		}
	}
	return out
}

// rows decodes the run's rows.
func (s storedRun) rows() storedRows {
	return storedRows{server: s.server, trial: s.trial, phases: decodeRows(s.phases), ladder: decodeRows(s.ladder), problem: s.problem}
}

// fullRun is the run's values of every row (RunFromRunRows), a value of
// its own; nil when stats.jsonl could not be read.
func (s storedRun) fullRun(e runs.Entry) *verdicts.Run {
	if s.head == nil {
		return nil
	}
	if !s.more {
		return s.headRun()
	}
	return named(verdicts.RunFromRunRows(artifact.RunRows{Key: s.key, Server: s.server, Trial: s.trial,
		Phases: decodeRows(s.phases), Ladder: decodeRows(s.ladder)}), e)
}

// headRun is a copy of the run's head values (nil when stats.jsonl could
// not be read): the cached value is shared.
func (s storedRun) headRun() *verdicts.Run {
	if s.head == nil {
		return nil
	}
	r := *s.head
	return &r
}

// Sizes of the values the stored-run cache accounts for (64-bit).
const (
	sizeString    = 16 // a string header
	sizeSlice     = 24 // a slice header
	sizeIface     = 16 // an interface value
	sizePtr       = 8
	sizeAllocSlop = 8                                                       // a heap allocation's rounding, on average
	sizeMapEntry  = 48                                                      // a map[string]int entry with its share of buckets
	sizeField     = sizeString + sizeIface                                  // artifact.Field
	sizeRow       = 4*sizeString + sizeSlice                                // artifact.Row
	sizeValue     = sizeString + sizePtr                                    // verdicts.Value
	sizeRun       = 4*sizeString + 8 + sizeSlice + sizePtr                  // verdicts.Run
	sizeStoredRun = 3*sizeString + 3*sizePtr + 2*sizeSlice + 8 + sizeString // storedRun
)

// storedRunBytes is what a storedRun holds in memory, for the
// storedRunCacheMiB budget: the struct, its rows' headers, strings and
// measurement values, the head's values and their index, the kept lines.
// Strings the head shares with the rows are counted twice (an upper
// bound by their length, tens of bytes a key).
func storedRunBytes(s storedRun) int64 {
	n := sizeStoredRun + int64(len(s.problem)+len(s.key.Timestamp)+len(s.key.Tag)+len(s.key.TestName))
	str := func(t string) int64 {
		if t == "" {
			return 0
		}
		return int64(len(t)) + sizeAllocSlop
	}
	row := func(r *artifact.Row) {
		if r == nil {
			return
		}
		n += sizeRow + sizeAllocSlop + str(r.Timestamp) + str(r.Tag) + str(r.TestName) + str(r.Metric)
		n += int64(cap(r.Measurements)) * sizeField
		for _, f := range r.Measurements {
			n += str(f.Key)
			switch v := f.Value.(type) {
			case string:
				n += sizeString + sizeAllocSlop + str(v) // the interface's boxed string
			case artifact.Number:
				n += sizeString + sizeAllocSlop + str(string(v))
			case nil:
			default:
				n += 64 // another JSON value: not in this project's rows
			}
		}
	}
	row(s.server)
	row(s.trial)
	if r := s.head; r != nil {
		n += sizeRun + str(r.ID) + str(r.TestName) + str(r.Tag) + str(r.Timestamp)
		n += int64(cap(r.Values)) * sizeValue
		for _, v := range r.Values {
			n += str(v.Key) + sizeMapEntry
			if v.Text != nil {
				n += sizeString + sizeAllocSlop + str(*v.Text)
			}
		}
	}
	return n + int64(cap(s.phases)+cap(s.ladder))
}

// storedOnce reads one artifact of a stored run through c: finished once
// the run is complete (the orchestrator uploads server_summary.json or
// status.json last), live while it may still upload, a failed read when
// the file could not be read.
func storedOnce[T interface{ readFailed() bool }](ctx context.Context, d *Datasource, c *cached[T], e runs.Entry, name string, read func(context.Context) T) T {
	s, _, _ := c.get(ctx, d.key(keyStoredFile, e, name), func(ctx context.Context) (T, outcome) {
		s := read(ctx)
		return s, storedOutcome(e, s.readFailed())
	})
	return s
}

// storedOutcome is how long a stored artifact of e read is kept.
func storedOutcome(e runs.Entry, failed bool) outcome {
	switch {
	case failed:
		return failedRead
	case e.Artifacts.ServerSummary || e.Artifacts.Status:
		return finishedOK
	}
	return liveRun
}

// keepListedRows keeps the rows of a run's stats.jsonl that the store's
// listing read (runs.Store.OnRowsRead) in the stored-run cache, as
// storedHead would have read them: the one cache of stored rows.
func (d *Datasource) keepListedRows(e runs.Entry, rr artifact.RunRows) {
	if !d.inStore(e) || !e.Artifacts.StatsJSONL {
		return
	}
	s, err := newStoredRun(e, rr)
	if err != nil {
		return // storedHead reads the file and says why
	}
	d.cache.rows.put(d.key(keyStoredFile, e, runs.FileStatsJSONL), s, storedOutcome(e, false))
}

func (s storedFile[T]) readFailed() bool { return s.problem != "" }

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

// storedHead is a stored run's kept stats.jsonl through the stored-run
// cache, read once per instance (zero for a run outside the store or
// without the file): what queries over many runs read, nothing decoded.
func (d *Datasource) storedHead(ctx context.Context, e runs.Entry) storedRun {
	if !d.inStore(e) || !e.Artifacts.StatsJSONL {
		return storedRun{}
	}
	return storedOnce(ctx, d, d.cache.rows, e, runs.FileStatsJSONL, func(ctx context.Context) storedRun {
		st := d.catalogs.Store.Read(ctx, e, runs.PartRows)
		if p := st.Problem(runs.FileStatsJSONL); p != nil {
			return storedRun{server: copyRow(st.Rows.Server), trial: copyRow(st.Rows.Trial), problem: p.Err.Error()}
		}
		s, err := newStoredRun(e, st.Rows)
		if err != nil {
			return storedRun{problem: err.Error()}
		}
		return s
	})
}

// storedRows are a stored run's rows, its phase and ladder sets decoded:
// what one run's panels read.
func (d *Datasource) storedRows(ctx context.Context, e runs.Entry) storedRows {
	return d.storedHead(ctx, e).rows()
}

// loadRun is a stored run's values of every row through the stored-run
// cache: the run's stats.jsonl is read once per instance and shared by
// every query type. It fails like verdicts.LoadEntry: a run without
// stats.jsonl, or one whose stats.jsonl could not be read.
func (d *Datasource) loadRun(ctx context.Context, e runs.Entry) (*verdicts.Run, error) {
	return d.loadRunKeys(ctx, e, nil, true)
}

// loadRunKeys is loadRun holding at least keys (none: the default keys of
// verdicts.DefaultKeys), or every key when all is set: the run's head
// when it covers them (headCovers), nothing decoded.
func (d *Datasource) loadRunKeys(ctx context.Context, e runs.Entry, keys []string, all bool) (*verdicts.Run, error) {
	if !d.inStore(e) {
		return nil, fmt.Errorf("run %s is not in the results store", e.ID)
	}
	if !e.Artifacts.StatsJSONL {
		return nil, fmt.Errorf("run %s: no %s in the results store", e.ID, runs.FileStatsJSONL)
	}
	s := d.storedHead(ctx, e)
	if s.problem != "" {
		return nil, fmt.Errorf("run %s: %s %s", e.ID, runs.FileStatsJSONL, s.problem)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := s.headRun()
	if all || !headCovers(keys) {
		r = s.fullRun(e)
	}
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
	return problems(d.storedSummary(ctx, e).problem, d.storedPSIFile(ctx, e).problem, d.storedHead(ctx, e).problem)
}

// kubernetes is where the Kubernetes part of oom_events comes from for a
// run: a stored run's recorded values (never today's cluster); other runs
// have no "before" snapshot, without which the four counts are unknown, so
// nothing is read for them either.
func (d *Datasource) kubernetes(ctx context.Context, e runs.Entry) engine.Kubernetes {
	if e.Source == runs.SourceStore {
		return engine.Kubernetes{Recorded: d.recordedOOM(ctx, e)}
	}
	if d.settings.Kube.Access == cluster.ModeOff {
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
