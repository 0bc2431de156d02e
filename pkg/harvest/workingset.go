package harvest

import (
	"context"
	"math"
	"sync"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// GiB is the divisor of working-set bytes.
const GiB = 1 << 30

// WorkingSetBlocks are the five sub-blocks in output order.
var WorkingSetBlocks = [5]string{"node", "worker", "atelet", "actor", "per_actor"}

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
	var reads [4]rangeRead // node, worker, atelet, actor
	var sampledRead rangeRead
	var wg sync.WaitGroup
	for i, b := range WorkingSetBlocks[:3] {
		wg.Go(func() { reads[i] = readRange(ctx, c, WorkingSetQuery(p.Sel, b), p.Start, p.End) })
	}
	wg.Go(func() {
		s, e := shiftedWindow(p)
		reads[3] = readRange(ctx, c, ActorMemoryQuery, s, e)
	})
	wg.Go(func() { sampledRead = sampled(ctx) })
	wg.Wait()

	out := emptyWorkingSet()
	var notices []Notice
	what := [4]string{
		"node working sets on nodes hosting a live worker",
		"live worker containers' working sets",
		"atelet working sets on nodes hosting a live worker",
		"ate_actor_stats_memory_working_set_bytes",
	}
	// cAdvisor blocks: one series per result series, unshifted.
	for i, name := range WorkingSetBlocks[:3] {
		var n []Notice
		*out.Block(name), n = wsFromRead(p, name, reads[i], what[i], func(series []promql.Series) []map[int64]float64 {
			cols := make([]map[int64]float64, len(series))
			for j, s := range series {
				cols[j] = make(map[int64]float64, len(s.Samples))
				for _, smp := range s.Samples {
					cols[j][smp.T] = smp.V / GiB
				}
			}
			return cols
		})
		notices = append(notices, n...)
	}
	// actor: keyed by process, merged by max, timestamps shifted back.
	shift := p.Shift()
	var n []Notice
	out.Actor, n = wsFromRead(p, "actor", reads[3], what[3], func(series []promql.Series) []map[int64]float64 {
		procs := byProcess(series, shift)
		cols := make([]map[int64]float64, 0, len(procs))
		for _, proc := range sortedKeys(procs) {
			m := procs[proc]
			for t, v := range m {
				m[t] = v / GiB
			}
			cols = append(cols, m)
		}
		return cols
	})
	notices = append(notices, n...)
	// per_actor: actor / sampled_actors per process and timestamp.
	switch {
	case reads[3].err != nil:
		notices = append(notices, failed(BlockWorkingSet, "per_actor", reads[3].err))
	case sampledRead.err != nil:
		notices = append(notices, failed(BlockWorkingSet, "per_actor", sampledRead.err))
	default:
		mem := byProcess(reads[3].series, shift)
		cnt := byProcess(sampledRead.series, shift)
		var cols []map[int64]float64
		for _, proc := range sortedKeys(mem) {
			m := map[int64]float64{}
			for t, bytes := range mem[proc] {
				if k, ok := cnt[proc][t]; ok && k != 0 {
					m[t] = bytes / k / GiB
				}
			}
			if len(m) > 0 {
				cols = append(cols, m)
			}
		}
		if len(cols) == 0 {
			notices = append(notices, Notice{Block: BlockWorkingSet, Field: "per_actor",
				Reason: "null: no timestamp where an atelet reported both its actors' memory and a non-zero sampled actor count"})
		} else {
			out.PerActor, n = wsBlock(p, "per_actor", cols)
			notices = append(notices, n...)
		}
	}
	return out, notices
}

// wsFromRead turns a read into a sub-block through cols, which maps the
// series to per-series timestamp -> GiB columns.
func wsFromRead(p Params, name string, r rangeRead, what string, cols func([]promql.Series) []map[int64]float64) (WSBlock, []Notice) {
	if r.err != nil {
		return emptyWSBlock(), []Notice{failed(BlockWorkingSet, name, r.err)}
	}
	if len(r.series) == 0 {
		return emptyWSBlock(), []Notice{absent(BlockWorkingSet, name, what)}
	}
	return wsBlock(p, name, cols(r.series))
}

// wsBlock computes summary, count and timeseries over per-series columns
// (at least one). Columns are in a fixed order so float sums are
// deterministic.
func wsBlock(p Params, name string, cols []map[int64]float64) (WSBlock, []Notice) {
	type agg struct{ sum, max float64 }
	at := map[int64]*agg{}
	var steady []float64
	count := 0
	for _, col := range cols {
		hasSteady := false
		for _, t := range sortedKeys(col) {
			v := col[t]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			a := at[t]
			if a == nil {
				at[t] = &agg{sum: v, max: v}
			} else {
				a.sum += v
				a.max = max(a.max, v)
			}
			if p.inSteady(t) {
				steady = append(steady, v)
				hasSteady = true
			}
		}
		if hasSteady {
			count++
		}
	}
	b := WSBlock{Summary: percentile.Of(steady), Count: ptr(count), Timeseries: make([]WSPoint, 0, len(at))}
	for _, t := range sortedKeys(at) {
		b.Timeseries = append(b.Timeseries, WSPoint{Timestamp: t, TotalGB: percentile.Round4(at[t].sum), MaxGB: percentile.Round4(at[t].max)})
	}
	if count == 0 {
		return b, []Notice{{Block: BlockWorkingSet, Field: name, Reason: "summary null: no sample inside the steady window"}}
	}
	return b, nil
}
