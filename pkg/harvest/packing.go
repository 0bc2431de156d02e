package harvest

import (
	"context"
	"math"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// Packing is the cluster_packing block.
type Packing struct {
	Summary    percentile.Summary // P over non-null ratios inside the steady window
	Timeseries []PackingPoint     // the whole run, ascending time
}

// PackingPoint is one step of the live ateapi's pool view.
type PackingPoint struct {
	Timestamp int64
	// Busy and Total are worker counts as the gauge reports them (integral in
	// practice; kept as float64 so a fractional gauge is never truncated).
	Busy, Total float64
	Ratio       *float64 // round(busy/total, 4); nil when total is 0
}

func emptyPacking() Packing { return Packing{Timeseries: []PackingPoint{}} }

// PackingQuery is the PromQL of cluster_packing.
func PackingQuery(sel Selectors) string {
	return "ate_workerpool_workers{ate_workerpool_name=" + quote(sel.WorkerPool) + "}"
}

// HarvestPacking reads cluster_packing over [Start, End].
func HarvestPacking(ctx context.Context, c *promql.Client, p Params) (Packing, []Notice) {
	r := readRange(ctx, c, PackingQuery(p.Sel), p.Start, p.End)
	if r.err != nil {
		return emptyPacking(), []Notice{failed(BlockPacking, "", r.err)}
	}
	if len(r.series) == 0 {
		return emptyPacking(), []Notice{absent(BlockPacking, "", "ate_workerpool_workers for pool "+quote(p.Sel.WorkerPool))}
	}
	return packingFrom(r.series, p)
}

// packingFrom applies the live-ateapi rule to the decoded series.
func packingFrom(series []promql.Series, p Params) (Packing, []Notice) {
	// process -> timestamp -> state -> value. Two series of one process and
	// state (e.g. two collector replicas) merge by max, as in active_actors.
	byProc := map[string]map[int64]map[string]float64{}
	lastSeen := map[string]int64{}
	for _, s := range series {
		proc := processKey(s.Labels)
		state := s.Labels["ate_worker_state"]
		if state == "" {
			state = "unknown"
		}
		ts := byProc[proc]
		if ts == nil {
			ts = map[int64]map[string]float64{}
			byProc[proc] = ts
		}
		for _, smp := range s.Samples {
			st := ts[smp.T]
			if st == nil {
				st = map[string]float64{}
				ts[smp.T] = st
			}
			if old, ok := st[state]; !ok || smp.V > old {
				st[state] = smp.V
			}
			if last, ok := lastSeen[proc]; !ok || smp.T > last {
				lastSeen[proc] = smp.T
			}
		}
	}
	times := map[int64]struct{}{}
	for _, ts := range byProc {
		for t := range ts {
			times[t] = struct{}{}
		}
	}
	procs := sortedKeys(byProc)
	out := Packing{Timeseries: make([]PackingPoint, 0, len(times))}
	var ratios []float64
	for _, t := range sortedKeys(times) {
		// The live process at t: present at t with the latest last-seen
		// timestamp; ties go to the larger key (procs is ascending, so >=).
		live, found := "", false
		for _, proc := range procs {
			if _, ok := byProc[proc][t]; !ok {
				continue
			}
			if !found || lastSeen[proc] >= lastSeen[live] {
				live, found = proc, true
			}
		}
		states := byProc[live][t]
		busy := states["partial"] + states["at_capacity"]
		total := 0.0
		for _, st := range sortedKeys(states) { // fixed order: deterministic float sum
			total += states[st]
		}
		pt := PackingPoint{Timestamp: t, Busy: busy, Total: total}
		if total != 0 {
			r := percentile.Round4(busy / total)
			if !math.IsNaN(r) && !math.IsInf(r, 0) {
				pt.Ratio = &r
				if p.inSteady(t) {
					ratios = append(ratios, r)
				}
			}
		}
		out.Timeseries = append(out.Timeseries, pt)
	}
	out.Summary = percentile.Of(ratios)
	if len(ratios) == 0 {
		return out, []Notice{{Block: BlockPacking, Field: "summary",
			Reason: "null: no sample with a non-zero pool size inside the steady window"}}
	}
	return out, nil
}
