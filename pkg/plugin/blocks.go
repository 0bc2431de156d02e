package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// blockResult is one block of one run with what it took: result holds the
// block (its other blocks are null), harvested or read from the store.
type blockResult struct {
	result  *harvest.Result
	notices []harvest.Notice
	queries []string
	// cached is true when this answer came from the cache (or another
	// panel's identical read in flight).
	cached bool
	// fromStore is true when the block was read from the run's stored
	// server_summary.json (which holds no per-node or per-pod PSI series).
	fromStore bool
}

// params are the harvest parameters of a run under this instance's
// settings.
func (d *Datasource) params(e runs.Entry, now int64) harvest.Params {
	return harvest.Params{
		Start: e.Start, End: e.End, SteadyStart: e.SteadyStart, SteadyEnd: e.SteadyEnd,
		LagS: d.settings.AteletLagSeconds, Sel: d.settings.selectors(), Now: now,
		SeriesPoints: -1, // panels read their series at panel resolution
	}
}

// finished reports whether a run's harvested blocks can no longer change:
// it is over and the atelet lag has passed since its end.
func (d *Datasource) finished(e runs.Entry, now int64) bool {
	return !e.Live && now >= e.End+d.settings.AteletLagSeconds
}

// block is one block of a run: stored, else harvested through the cache
// (kept by the one rule of cache.go's outcome).
func (d *Datasource) block(ctx context.Context, e runs.Entry, block string) blockResult {
	if r, ok := d.storedBlock(ctx, e, block); ok {
		return r
	}
	r := d.harvestedBlock(ctx, e, block)
	for _, p := range d.storeNotices(ctx, e) {
		r.notices = append(slices.Clip(r.notices), harvest.Notice{Block: block, Reason: p})
	}
	return r
}

// harvestedBlock is a block harvested from Prometheus, through the cache.
func (d *Datasource) harvestedBlock(ctx context.Context, e runs.Entry, block string) blockResult {
	var (
		r   blockResult
		hit bool
		err error
	)
	whileWaiting(ctx, func() {
		r, hit, err = d.cache.blocks.get(ctx, d.key(keyBlock, e, block), func(ctx context.Context) (blockResult, outcome) {
			now := d.now().Unix()
			r := d.harvestBlock(ctx, e, block, now)
			return r, noticesOutcome(r.notices, d.finished(e, now))
		})
	})
	if err != nil {
		// This caller's context ended while it waited for the read.
		return cancelledBlock(block)
	}
	r.cached = hit
	return r
}

// cancelledBlock is an empty block (every field null) with the reason.
func cancelledBlock(block string) blockResult {
	return blockResult{result: harvest.EmptyResult(), notices: []harvest.Notice{{Block: block, Reason: "null: the read was cancelled"}}}
}

// harvestBlock reads one block with the engine's block table.
func (d *Datasource) harvestBlock(ctx context.Context, e runs.Entry, block string, now int64) blockResult {
	b, ok := harvest.LookupBlock(block)
	if !ok {
		panic("unknown block " + block)
	}
	r, n, queries := b.Harvest(ctx, d.prom, d.params(e, now))
	return blockResult{result: r, notices: n, queries: distinctSorted(queries)}
}

// distinctSorted is the block's PromQL without repeats, sorted: a block
// issues its reads concurrently, so issue order varies between loads, and
// the query inspector is easier to read without duplicates.
func distinctSorted(qs []string) []string {
	out := slices.Clone(qs)
	slices.Sort(out)
	return slices.Compact(out)
}

// runNotices are the caveats of the run itself, shown with every frame of
// it: a window that fell back, a young or live run, unreadable files.
func (d *Datasource) runNotices(e runs.Entry, now int64) []runNote {
	var out []runNote
	if !e.SteadyFromSamples && e.SteadyWhy != "" {
		out = append(out, runNote{run: e.ID, text: fmt.Sprintf("steady window = run window (%s)", e.SteadyWhy)})
	}
	lag := d.settings.AteletLagSeconds
	switch {
	case e.Live:
		out = append(out, runNote{run: e.ID, text: "still in progress: its numbers will change"})
	case now < e.End+lag:
		out = append(out, runNote{run: e.ID, text: fmt.Sprintf("ended %d s ago, less than the atelet lag of %d s: atelet data (snapshots, active actors, actor working set) may be incomplete",
			max(now-e.End, 0), lag)})
	}
	return append(out, notesOf(e.ID, e.Problems)...)
}

// readFailure returns the first notice of a Prometheus read that failed.
func readFailure(ns []harvest.Notice) (harvest.Notice, bool) {
	for _, n := range ns {
		if n.Kind == harvest.ReadFailed {
			return n, true
		}
	}
	return harvest.Notice{}, false
}

// prometheusDown is the downstream error of a block whose every read
// failed: the panel shows it instead of an empty graph. It wraps the
// notice's error (a *promql.QueryError for a failed query), whose host it
// names; the settings' host stands in for an error without one.
func (d *Datasource) prometheusDown(n harvest.Notice) error {
	host := URLHost(d.settings.PrometheusURL)
	var qe *promql.QueryError
	if errors.As(n.Err, &qe) && qe.Host != "" {
		host = qe.Host
	}
	return withStatus(backend.StatusBadGateway, fmt.Errorf("Prometheus at %s: the read failed: %w", host, n.Err))
}
