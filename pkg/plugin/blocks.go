package plugin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// blockResult is one harvested block of one run with what it took.
type blockResult struct {
	value   any // harvest.Packing, harvest.PSI, harvest.Snapshots, ...
	notices []harvest.Notice
	queries []string
	// cached is true when this answer came from the cache (or another
	// panel's identical read in flight).
	cached bool
}

// params are the harvest parameters of a run under this instance's
// settings.
func (d *Datasource) params(e runs.Entry, now int64) harvest.Params {
	return harvest.Params{
		Start: e.Start, End: e.End, SteadyStart: e.SteadyStart, SteadyEnd: e.SteadyEnd,
		LagS: d.settings.AteletLagSeconds, Sel: d.settings.selectors(), Now: now,
		SeriesPoints: harvest.DefaultSeriesPoints,
	}
}

// finished reports whether a run's harvested blocks can no longer change:
// it is over and the atelet lag has passed since its end.
func (d *Datasource) finished(e runs.Entry, now int64) bool {
	return !e.Live && now >= e.End+d.settings.AteletLagSeconds
}

// blockKey identifies a block of a run under the settings that change the
// result: the window (an id alone is not enough for ad hoc ranges and live
// runs), the lag and the selectors.
func (d *Datasource) blockKey(e runs.Entry, block string) string {
	s := d.settings
	return strings.Join([]string{
		block, e.ID,
		strconv.FormatInt(e.Start, 10), strconv.FormatInt(e.End, 10),
		strconv.FormatInt(e.SteadyStart, 10), strconv.FormatInt(e.SteadyEnd, 10),
		strconv.FormatInt(s.AteletLagSeconds, 10),
		s.WorkerPool, s.WorkerNamespace, s.WorkerContainer, s.WorkerPodRegex, s.AteletNamespace, s.AteletContainer,
	}, "\x00")
}

// block harvests one block of a run through the cache. A finished run's
// block is kept until evicted; any other for liveTTL.
func (d *Datasource) block(ctx context.Context, e runs.Entry, block string) blockResult {
	now := d.now()
	var (
		v   any
		hit bool
	)
	whileWaiting(ctx, func() {
		v, hit = d.cache.get(ctx, d.blockKey(e, block), now, d.harvestOnce(ctx, e, block, now))
	})
	r, ok := v.(blockResult)
	if !ok {
		// This caller's context ended while it waited for another panel's
		// read.
		return cancelledBlock(block)
	}
	r.cached = hit
	return r
}

// harvestOnce is a block's computation for the cache: the harvest under a
// slot of its own, kept for good if the run is finished, for liveTTL if not,
// and not at all if the read was cancelled.
func (d *Datasource) harvestOnce(ctx context.Context, e runs.Entry, block string, now time.Time) func() (any, time.Duration) {
	return func() (any, time.Duration) {
		release, err := takeHarvestSlot(ctx, d.slots)
		if err != nil {
			return cancelledBlock(block), 0
		}
		defer release()
		r := d.harvestBlock(ctx, e, block, now.Unix())
		if ctx.Err() != nil {
			return r, 0 // a cancelled read is not an answer worth keeping
		}
		if d.finished(e, now.Unix()) {
			return r, -1
		}
		return r, liveTTL
	}
}

// cancelledBlock is an empty block (every field null) with the reason.
func cancelledBlock(block string) blockResult {
	return blockResult{value: emptyBlock(block), notices: []harvest.Notice{{Block: block, Reason: "null: the read was cancelled"}}}
}

// emptyBlock is a block with nothing measured.
func emptyBlock(block string) any {
	switch block {
	case harvest.BlockPacking:
		return harvest.Packing{}
	case harvest.BlockNodePSI, harvest.BlockPodPSI:
		return harvest.PSI{}
	case harvest.BlockSnapshots:
		return harvest.Snapshots{}
	case harvest.BlockActiveActors:
		return harvest.ActiveActors{}
	case harvest.BlockWorkingSet:
		return harvest.WorkingSet{}
	case harvest.BlockOOM:
		return harvest.OOM{}
	}
	panic("unknown block " + block)
}

// harvestBlock reads one block with the engine's own per-block function.
func (d *Datasource) harvestBlock(ctx context.Context, e runs.Entry, block string, now int64) blockResult {
	log := &promql.Log{}
	c := d.prom.Recording(log)
	p := d.params(e, now)
	var (
		v any
		n []harvest.Notice
	)
	switch block {
	case harvest.BlockPacking:
		v, n = harvest.HarvestPacking(ctx, c, p)
	case harvest.BlockNodePSI:
		v, n = harvest.HarvestNodePSI(ctx, c, p)
	case harvest.BlockPodPSI:
		v, n = harvest.HarvestPodPSI(ctx, c, p)
	case harvest.BlockSnapshots:
		v, n = harvest.HarvestSnapshots(ctx, c, p)
	case harvest.BlockActiveActors:
		v, n = harvest.HarvestActiveActors(ctx, c, p)
	case harvest.BlockWorkingSet:
		v, n = harvest.HarvestWorkingSet(ctx, c, p)
	case harvest.BlockOOM:
		v, n = harvest.HarvestOOM(ctx, c, p)
	default:
		panic("unknown block " + block)
	}
	for _, w := range log.Warnings() {
		n = append(n, harvest.Notice{Block: block, Reason: "Prometheus warned that the answer may be incomplete: " + w})
	}
	return blockResult{value: v, notices: n, queries: distinctSorted(log.Queries())}
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
func (d *Datasource) runNotices(e runs.Entry, now int64) []string {
	var out []string
	if !e.SteadyFromSamples && e.SteadyWhy != "" {
		out = append(out, fmt.Sprintf("run %s: steady window = run window (%s)", e.ID, e.SteadyWhy))
	}
	lag := d.settings.AteletLagSeconds
	switch {
	case e.Live:
		out = append(out, fmt.Sprintf("run %s is still in progress: its numbers will change", e.ID))
	case now < e.End+lag:
		out = append(out, fmt.Sprintf("run %s ended %d s ago, less than the atelet lag of %d s: atelet data (snapshots, active actors, actor working set) may be incomplete",
			e.ID, max(now-e.End, 0), lag))
	}
	for _, p := range e.Problems {
		out = append(out, fmt.Sprintf("run %s: %s", e.ID, p))
	}
	return out
}

// readFailure returns the first notice saying a Prometheus read failed.
// The harvest words every failed read "null: the read failed: …".
func readFailure(ns []harvest.Notice) (harvest.Notice, bool) {
	for _, n := range ns {
		if strings.Contains(n.Reason, "the read failed") {
			return n, true
		}
	}
	return harvest.Notice{}, false
}

// prometheusDown is the downstream error of a block whose every read
// failed: the panel shows it instead of an empty graph.
func (d *Datasource) prometheusDown(n harvest.Notice) error {
	return withStatus(backend.StatusBadGateway, fmt.Errorf("Prometheus at %s: %s", URLHost(d.settings.PrometheusURL), strings.TrimPrefix(n.Reason, "null: ")))
}
