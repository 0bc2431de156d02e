package harvest

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// GiB is the divisor of working-set bytes.
const GiB = 1 << 30

// workingSetBlocks are the five sub-blocks in output order.
var workingSetBlocks = [5]string{"node", "worker", "atelet", "actor", "per_actor"}

// WorkingSetBlocks are the five sub-blocks in output order (a fresh slice
// each call).
func WorkingSetBlocks() []string { return slices.Clone(workingSetBlocks[:]) }

// WSBlock is one working_set sub-block (values in GiB).
type WSBlock struct {
	Summary    percentile.Summary // P over every sample inside the steady window
	Count      *int               // series with a steady sample; 0 if none is steady; nil with no series
	Timeseries []WSPoint
}

// WSPoint is the sum and max across series at one timestamp, rounded to 4.
type WSPoint struct {
	Timestamp      int64
	TotalGB, MaxGB float64
}

// WorkingSet is the working_set block.
type WorkingSet struct{ Node, Worker, Atelet, Actor, PerActor WSBlock }

// Block returns the sub-block by name (one of WorkingSetBlocks), or nil.
func (w *WorkingSet) Block(name string) *WSBlock {
	switch name {
	case "node":
		return &w.Node
	case "worker":
		return &w.Worker
	case "atelet":
		return &w.Atelet
	case "actor":
		return &w.Actor
	case "per_actor":
		return &w.PerActor
	}
	return nil
}

func emptyWSBlock() WSBlock { return WSBlock{Timeseries: []WSPoint{}} }

func emptyWorkingSet() WorkingSet {
	return WorkingSet{emptyWSBlock(), emptyWSBlock(), emptyWSBlock(), emptyWSBlock(), emptyWSBlock()}
}

// liveExpr is LIVE: worker containers that used CPU at the step.
func liveExpr(sel Selectors) string {
	return "rate(container_cpu_usage_seconds_total{namespace=" + quote(sel.WorkerNamespace) +
		", container=" + quote(sel.WorkerContainer) + "}[1m]) > 0"
}

// WorkingSetQuery is the PromQL of the cAdvisor sub-blocks node, worker and
// atelet, and of actor; per_actor is computed from actor and the sampled
// actors count.
func WorkingSetQuery(sel Selectors, block string) string {
	switch block {
	case "node":
		return `max by (instance) (container_memory_working_set_bytes{container="node"}) and on (instance) count by (instance) (` + liveExpr(sel) + ")"
	case "worker":
		return "max by (pod) (container_memory_working_set_bytes{namespace=" + quote(sel.WorkerNamespace) +
			", container=" + quote(sel.WorkerContainer) + "}) and on (pod) (" + liveExpr(sel) + ")"
	case "atelet":
		return "max by (pod, instance) (container_memory_working_set_bytes{namespace=" + quote(sel.AteletNamespace) +
			", container=" + quote(sel.AteletContainer) + "}) and on (instance) count by (instance) (" + liveExpr(sel) + ")"
	case "actor":
		return ActorMemoryQuery
	}
	return ""
}

// HarvestWorkingSet reads the five working_set sub-blocks.
func HarvestWorkingSet(ctx context.Context, c *promql.Client, p Params) (WorkingSet, []Notice) {
	return workingSet(ctx, c, p, onceSampled(c, p))
}

func workingSet(ctx context.Context, c *promql.Client, p Params, sampled sampledFn) (WorkingSet, []Notice) {
	var cadvisor [3]wsRead // node, worker, atelet: folded while streaming
	var actor, sampledRead rangeRead
	var wg sync.WaitGroup
	for i, b := range workingSetBlocks[:3] {
		wg.Go(func() { cadvisor[i] = readWS(ctx, c, p, WorkingSetQuery(p.Sel, b)) })
	}
	wg.Go(func() {
		s, e := shiftedWindow(p)
		actor = readRange(ctx, c, ActorMemoryQuery, s, e)
	})
	wg.Go(func() { sampledRead = sampled(ctx) })
	wg.Wait()

	out := emptyWorkingSet()
	var notices []Notice
	what := [3]string{
		"node working sets on nodes hosting a live worker",
		"live worker containers' working sets",
		"atelet working sets on nodes hosting a live worker",
	}
	// cAdvisor blocks: one column per result series, unshifted.
	for i, name := range workingSetBlocks[:3] {
		var n []Notice
		switch r := cadvisor[i]; {
		case r.err != nil:
			n = []Notice{failed(BlockWorkingSet, name, r.err)}
		case !r.series:
			n = []Notice{absent(BlockWorkingSet, name, what[i])}
		default:
			*out.Block(name), n = r.fold.block(name)
		}
		notices = append(notices, n...)
	}
	// actor: keyed by process, merged by max, timestamps shifted back.
	shift := p.Shift()
	var n []Notice
	switch {
	case actor.err != nil:
		n = []Notice{failed(BlockWorkingSet, "actor", actor.err)}
	case len(actor.series) == 0:
		n = []Notice{absent(BlockWorkingSet, "actor", "ate_actor_stats_memory_working_set_bytes")}
	default:
		f := newWSFold(p)
		procs := byProcess(actor.series)
		for _, proc := range sortedKeys(procs) {
			f.add(proc, procs[proc], GiB, shift)
		}
		out.Actor, n = f.block("actor")
	}
	notices = append(notices, n...)
	// per_actor: actor / sampled_actors per process and timestamp.
	switch {
	case actor.err != nil:
		notices = append(notices, failed(BlockWorkingSet, "per_actor", actor.err))
	case sampledRead.err != nil:
		notices = append(notices, failed(BlockWorkingSet, "per_actor", sampledRead.err))
	default:
		mem, cnt := byProcess(actor.series), byProcess(sampledRead.series)
		f := newWSFold(p)
		procs := 0
		for _, proc := range sortedKeys(mem) {
			if per := perActor(mem[proc], cnt[proc]); len(per) > 0 {
				f.add(proc, per, GiB, shift)
				procs++
			}
		}
		if procs == 0 {
			notices = append(notices, Notice{Block: BlockWorkingSet, Field: "per_actor",
				Reason: "null: no timestamp where an atelet reported both its actors' memory and a non-zero sampled actor count"})
		} else {
			out.PerActor, n = f.block("per_actor")
			notices = append(notices, n...)
		}
	}
	return out, notices
}

// wsRead is a cAdvisor working-set read folded chunk by chunk: per-series
// samples are never held, only the block's running figures.
type wsRead struct {
	fold   *wsFold
	series bool // any series at all
	err    error
}

func readWS(ctx context.Context, c *promql.Client, p Params, q string) wsRead {
	r := wsRead{fold: newWSFold(p)}
	r.err = readEach(ctx, c, q, p.Start, p.End, func(chunk []promql.Series) {
		if r.fold.steady == nil {
			r.fold.steady = make([]float64, 0, len(chunk)*p.steadyPoints(p.Start, p.End))
		}
		for _, s := range chunk {
			r.series = true
			r.fold.add(s.Key(), s.Samples, GiB, 0)
		}
	})
	return r
}

// perActor is one process's actor memory divided by its sampled actor
// count at the timestamps where both exist and the count is not 0 (both in
// time order).
func perActor(mem, cnt []promql.Sample) []promql.Sample {
	var out []promql.Sample
	j := 0
	for _, m := range mem {
		for j < len(cnt) && cnt[j].T < m.T {
			j++
		}
		if j < len(cnt) && cnt[j].T == m.T && cnt[j].V != 0 {
			out = append(out, promql.Sample{T: m.T, V: m.V / cnt[j].V})
		}
	}
	return out
}

// wsFold accumulates a working-set sub-block series by series: the sum and
// max at each timestamp, the steady samples and the series with one. Series
// of one timestamp arrive in a fixed order (matrix order within a chunk, and
// a timestamp lies in one chunk), so the float sums are deterministic and
// equal to the unchunked ones.
type wsFold struct {
	p       Params
	at      map[int64]*wsAgg
	steady  []float64
	counted map[string]struct{}
	// finite is whether any series had a finite sample: series whose every
	// sample is NaN or ±Inf are no series at all (count null, not 0).
	finite bool
}

type wsAgg struct{ sum, max float64 }

func newWSFold(p Params) *wsFold {
	return &wsFold{p: p, at: map[int64]*wsAgg{}, counted: map[string]struct{}{}}
}

// add folds one series' samples (divided by scale, timestamps moved back by
// shift) under the series id.
func (f *wsFold) add(id string, samples []promql.Sample, scale float64, shift int64) {
	hasSteady := false
	for _, smp := range samples {
		v := smp.V / scale
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		f.finite = true
		t := smp.T - shift
		if a := f.at[t]; a == nil {
			f.at[t] = &wsAgg{sum: v, max: v}
		} else {
			a.sum += v
			a.max = max(a.max, v)
		}
		if f.p.inSteady(t) {
			f.steady = append(f.steady, v)
			hasSteady = true
		}
	}
	if hasSteady {
		f.counted[id] = struct{}{}
	}
}

func (f *wsFold) block(name string) (WSBlock, []Notice) {
	b := WSBlock{Summary: percentile.OfInPlace(f.steady), Count: ptr(len(f.counted)), Timeseries: make([]WSPoint, 0, len(f.at))}
	if !f.finite {
		b.Count = nil
		return b, []Notice{{Block: BlockWorkingSet, Field: name, Kind: Absent,
			Reason: "null: every sample of its series is NaN or ±Inf (nothing was measured)"}}
	}
	for _, t := range sortedKeys(f.at) {
		b.Timeseries = append(b.Timeseries, WSPoint{Timestamp: t, TotalGB: percentile.Round4(f.at[t].sum), MaxGB: percentile.Round4(f.at[t].max)})
	}
	if len(f.counted) == 0 {
		return b, []Notice{{Block: BlockWorkingSet, Field: name, Reason: "summary null: no sample inside the steady window"}}
	}
	return b, nil
}
