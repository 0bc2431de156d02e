package harvest

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// psiResources are the pressure resources in output order: the metric infix
// and the output key prefix.
var psiResources = [3]struct{ Metric, Key string }{
	{"cpu", "cpu"}, {"memory", "mem"}, {"io", "io"},
}

// PSIResources are the pressure resources in output order: the metric infix
// and the output key prefix (a fresh slice each call).
func PSIResources() []struct{ Metric, Key string } { return slices.Clone(psiResources[:]) }

// PSIKey is the output key prefix of a resource named by its metric infix
// ("memory" → "mem"); "" for an unknown resource.
func PSIKey(metric string) string {
	for _, r := range psiResources {
		if r.Metric == metric {
			return r.Key
		}
	}
	return ""
}

// PSIResource is one resource of a PSI block.
type PSIResource struct {
	Summary percentile.Summary // <key>_stall_pct: every steady sample of every series, pooled
	// Series are the per-node (instance) or per-pod series of the whole run,
	// in stall percent, for panels. Nil when the read failed.
	Series []promql.Series
	// SeriesStep is the seconds between Series points: Step, or the stride
	// of the max-thinning that fit them into Params.SeriesPoints.
	SeriesStep int64
	// Bands are the bands across every series at each 10 s timestamp,
	// folded from every sample read (psi_series.json's bands): kept
	// whenever Series are (Params.SeriesPoints ≥ 0), nil otherwise.
	Bands *PSITimestampBands
}

// PSI is the node_psi or pod_psi block.
type PSI struct {
	CPU, Mem, IO PSIResource
	// Count is `nodes` (node_psi) or `pods` (pod_psi): distinct non-empty
	// instance/pod labels seen in any of the three results; nil only when
	// all three reads failed (unknown, not zero).
	Count *int
}

// Resource returns the block's resource by output key ("cpu", "mem", "io").
func (b *PSI) Resource(key string) *PSIResource {
	switch key {
	case "cpu":
		return &b.CPU
	case "mem", "memory":
		return &b.Mem
	case "io":
		return &b.IO
	}
	return nil
}

// podSelector is the spec's worker-pod cgroup selector POD.
func podSelector(sel Selectors) string {
	return `pod=~` + quote(sel.WorkerPodRegex) + `, container="", id=~` + quote(`.*[/-]pod[^/]+(\.slice)?`)
}

// psiExpr is psi(R, SEL, BY) of the spec.
func psiExpr(res, sel, by string) string {
	return "sum by (" + by + ") (rate(container_pressure_" + res + "_waiting_seconds_total{" + sel + "}[1m])) * 100"
}

// NodePSIQuery is node_psi's PromQL for resource res ("cpu", "memory", "io").
func NodePSIQuery(sel Selectors, res string) string {
	return psiExpr(res, `container="node"`, "instance") + " and on (instance) " + psiExpr(res, podSelector(sel), "instance")
}

// PodPSIQuery is pod_psi's PromQL for resource res.
func PodPSIQuery(sel Selectors, res string) string {
	return psiExpr(res, podSelector(sel), "pod")
}

// PSIQueryOf is node_psi's (by "instance") or pod_psi's (by "pod") PromQL for
// resource res restricted to the series whose by label is one of names: a
// few series of many read without evaluating the rest.
func PSIQueryOf(sel Selectors, res, by string, names []string) string {
	alts := make([]string, len(names))
	for i, n := range names {
		alts[i] = regexp.QuoteMeta(n)
	}
	only := ", " + by + "=~" + quote(strings.Join(alts, "|"))
	if by == "pod" {
		return psiExpr(res, podSelector(sel)+only, "pod")
	}
	return psiExpr(res, `container="node"`+only, "instance") + " and on (instance) " + psiExpr(res, podSelector(sel)+only, "instance")
}

// HarvestNodePSI reads node_psi over [Start, End].
func HarvestNodePSI(ctx context.Context, c *promql.Client, p Params) (PSI, []Notice) {
	return harvestPSI(ctx, c, p, BlockNodePSI, "instance", func(res string) string { return NodePSIQuery(p.Sel, res) })
}

// HarvestPodPSI reads pod_psi over [Start, End].
func HarvestPodPSI(ctx context.Context, c *promql.Client, p Params) (PSI, []Notice) {
	return harvestPSI(ctx, c, p, BlockPodPSI, "pod", func(res string) string { return PodPSIQuery(p.Sel, res) })
}

// concurrentPSIPooled is the most steady samples (32 MB) a PSI resource may
// pool for the block's other two resources to be read at the same time.
const concurrentPSIPooled = 4_000_000

// psiRead is one resource's streamed read folded into what the block needs.
type psiRead struct {
	summary percentile.Summary
	keeper  *seriesKeeper
	bands   *PSITimestampBands  // nil when no series are kept
	seen    map[string]struct{} // non-empty `by` labels
	series  bool                // any series at all
	pooled  int                 // steady samples
	err     error
}

// readPSI folds a PSI range read chunk by chunk: only the steady samples
// (pooled) and the labels are kept, plus the series Params allows and,
// with them, the per-timestamp bands across every series (each chunk is a
// time slice of every series, so its timestamps' bands are exact).
func readPSI(ctx context.Context, c *promql.Client, p Params, q, by string) psiRead {
	r := psiRead{keeper: newSeriesKeeper(p.SeriesPoints, p.Start, p.End), seen: map[string]struct{}{}}
	if p.SeriesPoints >= 0 {
		r.bands = NewPSITimestampBands(p.Start, p.End)
	}
	var pooled []float64
	r.err = readEach(ctx, c, q, p.Start, p.End, func(chunk []promql.Series) {
		if pooled == nil {
			pooled = make([]float64, 0, len(chunk)*p.steadyPoints(p.Start, p.End))
		}
		for _, s := range chunk {
			r.series = true
			if v := s.Labels[by]; v != "" {
				r.seen[v] = struct{}{}
			}
			for _, smp := range s.Samples {
				if p.inSteady(smp.T) {
					pooled = append(pooled, smp.V)
				}
			}
		}
		r.bands.Add(chunk)
		r.keeper.add(chunk)
	})
	if r.err == nil {
		r.pooled = len(pooled)
		r.summary = percentile.OfInPlace(pooled)
	}
	return r
}

func harvestPSI(ctx context.Context, c *promql.Client, p Params, block, by string, query func(string) string) (PSI, []Notice) {
	// The first resource alone; the other two at once if it was small, else
	// one at a time: a resource's pooled steady samples are the largest
	// thing a harvest holds (5,000 pods over 18 steady hours are 34 M
	// samples, 268 MB), and the other blocks keep the request slots busy
	// meanwhile.
	var reads [3]psiRead
	reads[0] = readPSI(ctx, c, p, query(psiResources[0].Metric), by)
	if reads[0].pooled <= concurrentPSIPooled {
		var wg sync.WaitGroup
		for i, r := range psiResources[1:] {
			wg.Go(func() { reads[i+1] = readPSI(ctx, c, p, query(r.Metric), by) })
		}
		wg.Wait()
	} else {
		for i, r := range psiResources[1:] {
			reads[i+1] = readPSI(ctx, c, p, query(r.Metric), by)
		}
	}

	var out PSI
	var notices []Notice
	seen := map[string]struct{}{}
	okReads := 0
	for i, r := range psiResources {
		dst := out.Resource(r.Key)
		field := r.Key + "_stall_pct"
		rd := reads[i]
		if rd.err != nil {
			notices = append(notices, failed(block, field, rd.err))
			continue
		}
		okReads++
		dst.Series = rd.keeper.series()
		dst.SeriesStep = max(rd.keeper.stride, Step)
		dst.Bands = rd.bands
		dst.Summary = rd.summary
		for v := range rd.seen {
			seen[v] = struct{}{}
		}
		switch {
		case !rd.series:
			notices = append(notices, absent(block, field, "container_pressure_"+r.Metric+"_waiting_seconds_total for the selection"))
		case rd.pooled == 0:
			notices = append(notices, Notice{Block: block, Field: field, Reason: "null: no sample inside the steady window"})
		}
		if n := rd.keeper.downsampled(block, field); n != nil {
			notices = append(notices, *n)
		}
	}
	if okReads > 0 {
		out.Count = ptr(len(seen))
	} else {
		countKey := "nodes"
		if by == "pod" {
			countKey = "pods"
		}
		notices = append(notices, Notice{Block: block, Field: countKey, Reason: "null: all three PSI reads failed"})
	}
	return out, notices
}
