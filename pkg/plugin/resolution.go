package plugin

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// maxPanelPoints is the most points per series a panel is sent when the
// request sets no MaxDataPoints (Prometheus's own 11,000-point cap).
const maxPanelPoints = 11000

// panelGrid is the step of a panel's time series, as Grafana's own
// Prometheus datasource picks it: ceil10(max(10 s, Interval, range /
// MaxDataPoints)), so a 24-hour panel 1,000 points wide reads ~1,000 points
// per series, not 8,640.
type panelGrid struct{ step int64 }

func newPanelGrid(from, to time.Time, interval time.Duration, maxPoints int64) panelGrid {
	if maxPoints <= 0 {
		maxPoints = maxPanelPoints
	}
	step := max(int64(harvest.Step), int64(interval/time.Second))
	if span := to.Unix() - from.Unix(); span > 0 {
		step = max(step, (span+maxPoints-1)/maxPoints)
	}
	return panelGrid{step: (step + 9) / 10 * 10}
}

// window is the run window on the grid: from the grid point at or before
// its start to the last one at or before its end (at a 10 s step, the
// harvest's own points).
func (g panelGrid) window(start, end int64) (int64, int64) {
	return floorTo(start, g.step), max(floorTo(end, g.step), floorTo(start, g.step))
}

func floorTo(t, step int64) int64 {
	if t < 0 && t%step != 0 {
		return (t/step - 1) * step
	}
	return t / step * step
}

// bandQuantiles are the distribution bands across series per timestamp, by
// field name (dashboard overrides key on them).
var bandQuantiles = []struct {
	name string
	expr func(q string) string
}{
	{"min", func(q string) string { return "min(" + q + ")" }},
	{"p50", func(q string) string { return "quantile(0.5, " + q + ")" }},
	{"p90", func(q string) string { return "quantile(0.9, " + q + ")" }},
	{"p99", func(q string) string { return "quantile(0.99, " + q + ")" }},
	{"max", func(q string) string { return "max(" + q + ")" }},
}

// psiPanel is a PSI panel's series read at panel resolution: every
// series, or the bands and the top series; immutable once read (cached).
type psiPanel struct {
	series  []promql.Series // every series, or the top series with bands
	bands   [][]sample      // per bandQuantiles entry; nil without bands
	queries []string
	notices []harvest.Notice
	failed  error
}

// psiSeriesPanel reads the per-node or per-pod series of one PSI resource
// at the panel's resolution, through the cache (a finished run's read is
// kept like its blocks). With more than maxSeries series (unless the query
// asks for all) it reads the distribution bands and the topSeries series
// with the highest peak instead, all computed by Prometheus.
func (d *Datasource) psiSeriesPanel(ctx context.Context, m queryModel, e runs.Entry, count *int) psiPanel {
	bands := m.Series == "bands" || (m.Series != "all" && count != nil && *count > d.settings.MaxSeries)
	key := d.key(keyPSIPanel, e, "")
	key.psi = psiPanelKey{scope: m.Scope, resource: m.Resource, bands: bands, step: m.grid.step, top: d.settings.TopSeries}
	var (
		p   psiPanel
		err error
	)
	whileWaiting(ctx, func() {
		p, _, err = d.cache.psiPanels.get(ctx, key, func(ctx context.Context) (psiPanel, outcome) {
			now := d.now().Unix()
			p := d.readPSIPanel(ctx, m, e, bands, count)
			if p.failed != nil {
				return p, failedRead
			}
			return p, noticesOutcome(p.notices, d.finished(e, now))
		})
	})
	if err != nil {
		return psiPanel{failed: err}
	}
	return p
}

func (d *Datasource) readPSIPanel(ctx context.Context, m queryModel, e runs.Entry, bands bool, count *int) (out psiPanel) {
	block, byLabel := harvest.BlockNodePSI, "instance"
	query := harvest.NodePSIQuery(d.settings.selectors(), m.Resource)
	if m.Scope == "pod" {
		block, byLabel = harvest.BlockPodPSI, "pod"
		query = harvest.PodPSIQuery(d.settings.selectors(), m.Resource)
	}
	start, end := m.grid.window(e.Start, e.End)
	log := &promql.Log{}
	c := d.prom.Recording(log)
	defer func() {
		out.queries = distinctSorted(log.Queries())
		for _, w := range log.Warnings() {
			out.notices = append(out.notices, harvest.Notice{Block: block, Kind: harvest.Warned,
				Reason: "the server warned that the answer may be incomplete: " + w})
		}
	}()
	fail := func(what string, err error) {
		out.failed = err
		out.notices = append(out.notices, harvest.Notice{Block: block, Kind: harvest.ReadFailed, Err: err,
			Reason: "null: the read of " + what + " failed: " + err.Error()})
	}
	if !bands {
		series, err := c.Range(ctx, query, start, end, m.grid.step)
		if err != nil {
			fail("the series", err)
		}
		out.series = series
		return out
	}
	// A band evaluates every series at every step: its reads are cut by
	// the series it fans in from, not by the one series it answers.
	var inputs int64
	if count != nil {
		inputs = int64(*count)
	}
	for _, b := range bandQuantiles {
		series, err := c.RangeOver(ctx, b.expr(query), inputs, start, end, m.grid.step)
		if err != nil {
			fail("the "+b.name+" band", err)
			return out
		}
		var pts []sample
		if len(series) == 1 {
			pts = samples(series[0].Samples)
		}
		out.bands = append(out.bands, pts)
	}
	// The series with the highest peaks, picked by Prometheus: each panel
	// step's top n by max_over_time over its exact 10 s samples. Their union
	// holds the window's n highest peaks, each exactly (a series among them
	// is among the n highest of the step its peak falls in), so the read
	// costs what a band costs, in chunks, not the whole window at once.
	n := d.settings.TopSeries
	peaksQ := "topk(" + strconv.Itoa(n) + ", max_over_time((" + query + ")[" +
		strconv.FormatInt(m.grid.step, 10) + "s:" + strconv.Itoa(harvest.Step) + "s]))"
	peaks, err := c.RangeOver(ctx, peaksQ, inputs*m.grid.step/harvest.Step, min(start+m.grid.step, end), end, m.grid.step)
	if err != nil {
		fail("the series with the highest peaks", err)
		return out
	}
	var top []promql.Series
	if names := highestPeaks(peaks, byLabel, n); len(names) > 0 {
		top, err = c.Range(ctx, harvest.PSIQueryOf(d.settings.selectors(), m.Resource, byLabel, names), start, end, m.grid.step)
		if err != nil {
			fail("the series with the highest peaks", err)
		}
	}
	out.series = top
	total := "?"
	if count != nil {
		total = strconv.Itoa(*count)
	}
	out.notices = append(out.notices, harvest.Notice{Block: block, Reason: fmt.Sprintf(
		"%s series (more than %d): showing bands across them (min, p50, p90, p99, max per timestamp) and the %d with the highest peak; the query option series: all shows every series",
		total, d.settings.MaxSeries, len(top))})
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

// frame is the panel's wide time-series frame.
func (p psiPanel) frame(name, byLabel, fieldName, label string) *data.Frame {
	var (
		pts      [][]sample
		names    []string
		displays []string
		labels   []data.Labels
	)
	for i, b := range p.bands {
		pts = append(pts, b)
		names = append(names, bandQuantiles[i].name)
		displays = append(displays, withPrefix(label, bandQuantiles[i].name))
		labels = append(labels, nil)
	}
	for _, s := range p.series {
		who := s.Labels[byLabel]
		pts = append(pts, samples(s.Samples))
		names = append(names, fieldName)
		displays = append(displays, withPrefix(label, who))
		labels = append(labels, data.Labels{byLabel: who})
	}
	f := seriesFrame(name, pts, names, displays, labels, unitPercent)
	return timeSeriesWide(f)
}

func samples(ps []promql.Sample) []sample {
	out := make([]sample, len(ps))
	for i, p := range ps {
		out[i] = sample{p.T, p.V}
	}
	return out
}

// onGrid thins points (ascending time) onto a panel grid of step seconds:
// for each grid point the last point at or before it. At the harvest's own
// 10 s step every point stays.
func onGrid[T any](points []T, at func(T) int64, step int64) []T {
	if step <= harvest.Step || len(points) < 2 {
		return points
	}
	slot := func(t int64) int64 { return floorTo(t+step-1, step) } // the grid point at or after t
	out := make([]T, 0, len(points)/int(step/harvest.Step)+2)
	for i, p := range points {
		if i == len(points)-1 || slot(at(p)) != slot(at(points[i+1])) {
			out = append(out, p)
		}
	}
	return out
}
