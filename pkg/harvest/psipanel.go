package harvest

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/promql"
)

// PSIBand is one distribution band across a PSI resource's series at each
// timestamp: its field name and its quantile (0 is the minimum, 1 the
// maximum).
type PSIBand struct {
	Name string
	Q    float64
}

// psiBands is the one definition of the bands, in the order of
// PSIBandSet's Min, P50, P90, P99, Max.
var psiBands = [...]PSIBand{{"min", 0}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"max", 1}}

// PSIBandList is the bands, in PSIBandSet's order.
func PSIBandList() []PSIBand { return psiBands[:] }

// Of is the band over ascending finite values (not empty), with PromQL's
// arithmetic.
func (b PSIBand) Of(sorted []float64) float64 {
	switch b.Q {
	case 0:
		return sorted[0]
	case 1:
		return sorted[len(sorted)-1]
	}
	return PromQuantile(b.Q, sorted)
}

// Query is the band's PromQL over the series of q.
func (b PSIBand) Query(q string) string {
	switch b.Q {
	case 0:
		return "min(" + q + ")"
	case 1:
		return "max(" + q + ")"
	}
	return "quantile(" + strconv.FormatFloat(b.Q, 'g', -1, 64) + ", " + q + ")"
}

// PSIPanelRead is a PSI panel's read: one resource's per-node (Scope
// "node") or per-pod series over [Start, End] at Step seconds (a multiple
// of Step), every series, or with Bands the distribution bands and the
// Top series with the highest peak, all computed by Prometheus.
type PSIPanelRead struct {
	Sel              Selectors
	Scope, Resource  string
	Start, End, Step int64
	Bands            bool
	// Inputs is the number of series the bands fan in from (0: unknown),
	// which sizes their chunks.
	Inputs int64
	Top    int
}

// PSIPanel is a PSI panel's series.
type PSIPanel struct {
	// Series is every series, or the top series with bands.
	Series []promql.Series
	// Bands holds the samples of each band read, in PSIBandList order; nil
	// without bands.
	Bands [][]promql.Sample
	// Summarized: the bands and the peaks were read (a panel says it shows
	// bands and the top series instead of every series).
	Summarized bool
	// Failed is the first failed read's error; its notice is in Notices.
	Failed error
	// Notices are the failed reads'; Warnings the server's warnings.
	Notices, Warnings []Notice
	Queries           []string
}

// ReadPSIPanel reads a PSI panel's series. The top series are picked by
// Prometheus: each step's top n by max_over_time over the exact 10 s
// samples. Their union holds the window's n highest peaks, each exactly (a
// series among them is among the n highest of the step its peak falls in),
// so the read costs what a band costs, in chunks, not the whole window at
// once.
func ReadPSIPanel(ctx context.Context, c *promql.Client, r PSIPanelRead) (out PSIPanel) {
	block, by := BlockNodePSI, "instance"
	query := NodePSIQuery(r.Sel, r.Resource)
	if r.Scope == "pod" {
		block, by = BlockPodPSI, "pod"
		query = PodPSIQuery(r.Sel, r.Resource)
	}
	log := &promql.Log{}
	c = c.Recording(log)
	defer func() {
		out.Queries = log.Queries()
		for _, w := range log.Warnings() {
			out.Warnings = append(out.Warnings, warned(block, w))
		}
	}()
	fail := func(what string, err error) {
		if out.Failed == nil {
			out.Failed = err
		}
		out.Notices = append(out.Notices, Notice{Block: block, Kind: ReadFailed, Err: err,
			Reason: "null: the read of " + what + " failed: " + err.Error()})
	}
	if !r.Bands {
		series, err := c.Range(ctx, query, r.Start, r.End, r.Step)
		if err != nil {
			fail("the series", err)
		}
		out.Series = series
		return out
	}
	// A band evaluates every series at every step: its reads are cut by
	// the series it fans in from, not by the one series it answers.
	for _, b := range psiBands {
		series, err := c.RangeOver(ctx, b.Query(query), r.Inputs, r.Start, r.End, r.Step)
		if err != nil {
			fail("the "+b.Name+" band", err)
			return out
		}
		var pts []promql.Sample
		if len(series) == 1 {
			pts = series[0].Samples
		}
		out.Bands = append(out.Bands, pts)
	}
	peaksQ := "topk(" + strconv.Itoa(r.Top) + ", max_over_time((" + query + ")[" +
		strconv.FormatInt(r.Step, 10) + "s:" + strconv.Itoa(Step) + "s]))"
	peaks, err := c.RangeOver(ctx, peaksQ, r.Inputs*r.Step/Step, min(r.Start+r.Step, r.End), r.End, r.Step)
	if err != nil {
		fail("the series with the highest peaks", err)
		return out
	}
	out.Summarized = true
	if names := highestPeaks(peaks, by, r.Top); len(names) > 0 {
		out.Series, err = c.Range(ctx, PSIQueryOf(r.Sel, r.Resource, by, names), r.Start, r.End, r.Step)
		if err != nil {
			fail("the series with the highest peaks", err)
		}
	}
	return out
}

// highestPeaks is the by label of the n series with the highest value in
// peaks (each series' per-step maxima), highest first, ties by name.
func highestPeaks(peaks []promql.Series, by string, n int) []string {
	type peak struct {
		name string
		v    float64
	}
	var all []peak
	for _, s := range peaks {
		name, best, seen := s.Labels[by], math.Inf(-1), false
		for _, p := range s.Samples {
			if p.V > best {
				best, seen = p.V, true
			}
		}
		if name != "" && seen {
			all = append(all, peak{name, best})
		}
	}
	slices.SortFunc(all, func(a, b peak) int {
		if c := cmp.Compare(b.v, a.v); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, 0, min(n, len(all)))
	for _, p := range all[:min(n, len(all))] {
		names = append(names, p.name)
	}
	return names
}
