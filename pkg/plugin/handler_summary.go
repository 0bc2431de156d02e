package plugin

import (
	"context"
	"fmt"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"golang.org/x/sync/errgroup"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// summaryParallelRuns bounds how many runs a summary harvests at once (the
// promql client bounds the requests in flight underneath).
const summaryParallelRuns = 4

// fullResult is a run's whole harvest through the engine, its blocks
// assembled from the cached blocks exactly as harvest.Harvest assembles
// them, with the Kubernetes oom fields set: the numbers of `density
// export`'s server_summary for the run.
func (d *Datasource) fullResult(ctx context.Context, e runs.Entry) *harvest.Result {
	blocks := engine.BlocksFunc(func(ctx context.Context, _ harvest.Params) *harvest.Result { return d.cachedBlocks(ctx, e) })
	return engine.Run(ctx, engine.Input{Params: d.params(e, d.now().Unix()), Blocks: blocks, Kube: d.kubernetes(ctx, e)},
		engine.PartBlocks|engine.PartKubernetes).Harvest
}

// cachedBlocks assembles every block of a run from the cache (each block
// derives its own parameters under its cache key).
func (d *Datasource) cachedBlocks(ctx context.Context, e runs.Entry) *harvest.Result {
	blocks := harvest.Blocks()
	parts := make([]blockResult, len(blocks))
	var wg sync.WaitGroup
	for i, b := range blocks {
		wg.Go(func() { parts[i] = d.block(ctx, e, b.Name) })
	}
	wg.Wait()
	r := harvest.EmptyResult()
	for i, b := range blocks {
		b.CopyTo(r, parts[i].result)
	}
	stored := false
	for _, p := range parts {
		for _, n := range p.notices {
			if n.Kind == harvest.Stored {
				if stored {
					continue // one source line per run, not one per block
				}
				stored, n.Block = true, ""
			}
			r.Notices = append(r.Notices, n)
		}
		r.Queries = append(r.Queries, p.queries...)
	}
	return r
}

// storedServerRow is the server_summary row of a stored run's stats.jsonl
// as the summary's values, when the settings prefer the store and the row
// reads back whole: over many runs (Runs over time) each run's row is all
// that is read, never its time series.
func (d *Datasource) storedServerRow(ctx context.Context, e runs.Entry) ([]artifact.Measurement, runNote, bool) {
	if !d.settings.PreferStored {
		return nil, runNote{}, false
	}
	row := d.storedHead(ctx, e).server
	if row == nil {
		return nil, runNote{}, false
	}
	values, err := artifact.ReadServerSummaryRow(*row)
	if err != nil {
		return nil, runNote{}, false
	}
	return values, runNote{run: e.ID, text: fmt.Sprintf("source: results store (the %s row of its stored %s)", artifact.MetricServerSummary, runs.FileStatsJSONL)}, true
}

// handleSummary answers `summary`: one row per run with id, start, the 80
// flat server_summary keys and the trial_summary keys, numbers as numbers
// (text facts as strings), to compare runs side by side (summaryFrames
// says which frames carry them). With run range:
// every catalogued run starting in the dashboard range; over several runs a
// stored run's values are its stored server_summary row (the same numbers
// as its server_summary.json, which a single run's summary reads with the
// notices of each block). With format numeric: summaryNumeric.
func (d *Datasource) handleSummary(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	_, opts, err := parseNumericQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	return d.overRuns(ctx, q, func(entries []runs.Entry, problems []string) backend.DataResponse {
		if err := d.needPrometheus(); err != nil {
			return errorResponse(err)
		}
		out := d.runSummaries(ctx, entries)
		rows := make([]trialRow, len(out))
		for i, rs := range out {
			rows[i] = rs.trial
		}
		tf, tn := trialColumns(entries, rows, unionTrialKeys(nil, rows, nil), "")
		fields := append(append(runColumns(entries), serverSummaryFields(out)...), tf...)
		notes, notices, queries := summaryNotes(entries, out, problems)
		notices = append(notices, tn...)
		if opts.numeric {
			return summaryNumeric(data.NewFrame("summary", fields...), entries, func(i int) trialRow { return rows[i] }, opts, notes, notices, queries)
		}
		frames, caveat := summaryFrames(entries, fields)
		if caveat != "" {
			notes = append(notes, note(caveat))
		}
		setMeta(frames, queries, noticesMeta(notes, notices))
		return backend.DataResponse{Frames: frames}
	})
}

// runSummary is one run's part of a summary: its server_summary values,
// its trial row, and the harvest notices, queries and notes of reading them.
type runSummary struct {
	server  []artifact.Measurement
	trial   trialRow
	notices []harvest.Notice
	queries []string
	notes   []runNote
}

// runSummaries reads the summary of each entry, summaryParallelRuns at a
// time, in the entries' order.
func (d *Datasource) runSummaries(ctx context.Context, entries []runs.Entry) []runSummary {
	out := make([]runSummary, len(entries))
	// A run that fails has notices in its row, never an error that
	// would stop its siblings: every goroutine returns nil.
	var g errgroup.Group
	g.SetLimit(summaryParallelRuns)
	now := d.now().Unix()
	for i, e := range entries {
		g.Go(func() error {
			out[i] = d.runSummaryOf(ctx, e, now, len(entries) > 1)
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// runSummaryOf reads one run's summary. many says the summary spans
// several runs: its notes then name the run, and a stored run's values are
// its stored server_summary row when that reads back (storedServerRow).
func (d *Datasource) runSummaryOf(ctx context.Context, e runs.Entry, now int64, many bool) runSummary {
	rs := runSummary{trial: d.trialSummary(ctx, e), notes: d.runNotices(e, now)}
	// A stored run's recorded notices: why its null fields are null.
	run := ""
	if many {
		run = e.ID
	}
	rs.notes = append(rs.notes, d.storedNoticeNotes(ctx, e, run)...)
	if many {
		if values, note, ok := d.storedServerRow(ctx, e); ok {
			rs.server, rs.notes = values, append(rs.notes, note)
			return rs
		}
	}
	if !e.EndKnown {
		rs.server = artifact.ServerSummaryValues(harvest.EmptyResult())
		rs.notes = append(rs.notes, runNote{run: e.ID, text: fmt.Sprintf("no end time (%s): nothing harvested", e.WindowFrom)})
		return rs
	}
	r := d.fullResult(ctx, e)
	rs.server, rs.notices, rs.queries = artifact.ServerSummaryValues(r), r.Notices, r.Queries
	return rs
}

// serverSummaryFields are the server_summary columns of a summary: one
// number column per key, one row per run.
func serverSummaryFields(out []runSummary) []*data.Field {
	var fields []*data.Field
	for j, m := range artifact.ServerSummaryValues(harvest.EmptyResult()) {
		v := make([]*float64, len(out))
		for i := range out {
			v[i] = out[i].server[j].Number()
		}
		fields = append(fields, configured(data.NewField(m.Key, nil, v), m.Key, ""))
	}
	return fields
}

// summaryNotes gathers what a summary's frames say besides the values: the
// notes (frontierNotes, then per run its harvest notices, its notes and its
// trial row's notices), the harvest notices and the executed queries. Over
// several runs a harvest notice is a note naming its run, so that equal
// ones merge into one notice naming a few runs.
func summaryNotes(entries []runs.Entry, out []runSummary, problems []string) (notes []runNote, notices []harvest.Notice, queries []string) {
	notes = frontierNotes(problems)
	for i, rs := range out {
		queries = append(queries, rs.queries...)
		for _, n := range rs.notices {
			if len(entries) > 1 {
				notes = append(notes, runNote{run: entries[i].ID, text: n.String(), warn: true})
				continue
			}
			notices = append(notices, n)
		}
		notes = append(notes, rs.notes...)
		notes = append(notes, rs.trial.notices...)
	}
	return notes, notices, queries
}

// maxLabelledNumbers bounds the numbers of the run-labelled numeric-wide
// frame of a summary of several runs: each costs about 470 bytes of Arrow
// (a field of its own), so 10,000 are about 4.7 MB next to the table's
// rows (1,000 runs of 90 keys would be 43 MB, past gRPC's 16 MiB).
const maxLabelledNumbers = 10_000

// summaryFrames are the summary's frames of the per-run columns fields (one
// value per entry): for one run a numeric-wide frame of its one row; for
// several, first one numeric-wide frame of one row whose number fields
// carry a run label (one per run and key: what alert rules and
// expressions read), then the rows per run as a table (what panels read).
// Above maxLabelledNumbers numbers the labelled frame is left out, and
// caveat says so.
func summaryFrames(entries []runs.Entry, fields []*data.Field) (frames data.Frames, caveat string) {
	if len(entries) <= 1 {
		return data.Frames{numericWide(data.NewFrame("summary", fields...))}, ""
	}
	rows := table(data.NewFrame("summary runs", fields...))
	keys := 0
	for _, f := range fields {
		if f.Type().Numeric() {
			keys++
		}
	}
	if n := keys * len(entries); n > maxLabelledNumbers {
		return data.Frames{rows}, fmt.Sprintf("no run-labelled numeric frame for alert rules and expressions: %d runs × %d keys = %d numbers, above %d (a summary of fewer runs has it)",
			len(entries), keys, n, maxLabelledNumbers)
	}
	var wide []*data.Field
	for _, f := range fields {
		if !f.Type().Numeric() {
			continue
		}
		for i, e := range entries {
			v, err := f.NullableFloatAt(i)
			if err != nil {
				continue // a numeric field always converts
			}
			wide = append(wide, data.NewField(f.Name, data.Labels{labelRun: e.ID}, []*float64{v}))
		}
	}
	return data.Frames{numericWide(data.NewFrame("summary", wide...)), rows}, ""
}
