package harvest

import (
	"context"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// ActiveActors is the active_actors block.
type ActiveActors struct {
	Summary    percentile.Summary // P of the totals inside the steady window
	Atelets    *int               // processes seen; nil when no series at all
	Timeseries []ActorsPoint      // timestamps shifted back by lag_s // 2
}

// ActorsPoint is one reported step.
type ActorsPoint struct {
	Timestamp     int64   // t - shift
	ActiveActors  float64 // sum over processes (a missing atelet counts 0)
	ActiveAtelets int     // processes with a value > 0
}

func emptyActors() ActiveActors { return ActiveActors{Timeseries: []ActorsPoint{}} }

// SampledActorsQuery is active_actors' PromQL (also per_actor's denominator).
const SampledActorsQuery = "sum by (instance, exported_instance) (ate_actor_stats_sampled_actors)"

// ActorMemoryQuery is the actor working set's PromQL.
const ActorMemoryQuery = "sum by (instance, exported_instance) (ate_actor_stats_memory_working_set_bytes)"

// shiftedWindow is [start + shift, max(end, start+1) + shift].
func shiftedWindow(p Params) (int64, int64) {
	return p.Start + p.Shift(), max(p.End, p.Start+1) + p.Shift()
}

func readSampledActors(ctx context.Context, c *promql.Client, p Params) rangeRead {
	s, e := shiftedWindow(p)
	return readRange(ctx, c, SampledActorsQuery, s, e)
}

// HarvestActiveActors reads the active_actors block.
func HarvestActiveActors(ctx context.Context, c *promql.Client, p Params) (ActiveActors, []Notice) {
	return activeActors(p, readSampledActors(ctx, c, p))
}

// byProcess merges series by process (duplicates by max, never sum) into
// process -> samples in time order, timestamps as read (unshifted). A
// process with one series keeps that series' samples (no copy: at 24 h x 500
// atelets a map per process cost ~170 MB per use).
func byProcess(series []promql.Series) map[string][]promql.Sample {
	groups := map[string][]promql.Series{}
	for _, s := range series {
		k := processKey(s.Labels)
		groups[k] = append(groups[k], s)
	}
	out := make(map[string][]promql.Sample, len(groups))
	for k, g := range groups {
		if len(g) == 1 {
			out[k] = g[0].Samples
			continue
		}
		merged := map[int64]float64{}
		for _, s := range g {
			for _, smp := range s.Samples {
				if old, ok := merged[smp.T]; !ok || smp.V > old {
					merged[smp.T] = smp.V
				}
			}
		}
		samples := make([]promql.Sample, 0, len(merged))
		for _, t := range sortedKeys(merged) {
			samples = append(samples, promql.Sample{T: t, V: merged[t]})
		}
		out[k] = samples
	}
	return out
}

func activeActors(p Params, r rangeRead) (ActiveActors, []Notice) {
	if r.err != nil {
		return emptyActors(), []Notice{failed(BlockActiveActors, "", r.err)}
	}
	if len(r.series) == 0 {
		return emptyActors(), []Notice{absent(BlockActiveActors, "", "ate_actor_stats_sampled_actors")}
	}
	shift := p.Shift()
	procs := byProcess(r.series)
	names := sortedKeys(procs)
	out := ActiveActors{Atelets: ptr(len(procs)), Timeseries: []ActorsPoint{}}
	var totals []float64
	s, e := shiftedWindow(p)
	next := make([]int, len(names)) // per process, its first sample not yet walked past
	// Walk the 10 s grid of the range query; points carry shifted-back time.
	for t := s; t <= e; t += Step {
		reported := false
		total, active := 0.0, 0
		for i, proc := range names { // fixed order: deterministic float sum
			samples := procs[proc]
			for next[i] < len(samples) && samples[next[i]].T < t {
				next[i]++
			}
			if next[i] == len(samples) || samples[next[i]].T != t {
				continue // a missing atelet counts as 0
			}
			v := samples[next[i]].V
			reported = true
			total += v
			if v > 0 {
				active++
			}
		}
		if !reported {
			continue // no atelet reported: a failed scrape looks the same
		}
		t := t - shift
		out.Timeseries = append(out.Timeseries, ActorsPoint{Timestamp: t, ActiveActors: total, ActiveAtelets: active})
		if p.inSteady(t) {
			totals = append(totals, total)
		}
	}
	out.Summary = percentile.Of(totals)
	if len(totals) == 0 {
		return out, []Notice{{Block: BlockActiveActors, Field: "summary", Reason: "null: no atelet reported inside the (shifted) steady window"}}
	}
	return out, nil
}
