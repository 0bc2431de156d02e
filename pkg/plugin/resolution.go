package plugin

import (
	"context"
	"fmt"
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

// psiPanel is a PSI panel's series read at panel resolution: every
// series, or the bands and the top series; immutable once read (cached).
type psiPanel struct {
	series  []promql.Series // every series, or the top series with bands
	bands   [][]sample      // per harvest.PSIBandList entry; nil without bands
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

func (d *Datasource) readPSIPanel(ctx context.Context, m queryModel, e runs.Entry, bands bool, count *int) psiPanel {
	start, end := m.grid.window(e.Start, e.End)
	var inputs int64
	if count != nil {
		inputs = int64(*count)
	}
	r := harvest.ReadPSIPanel(ctx, d.prom, harvest.PSIPanelRead{Sel: d.settings.selectors(), Scope: m.Scope, Resource: m.Resource,
		Start: start, End: end, Step: m.grid.step, Bands: bands, Inputs: inputs, Top: d.settings.TopSeries})
	out := psiPanel{series: r.Series, queries: distinctSorted(r.Queries), notices: r.Notices, failed: r.Failed}
	for _, b := range r.Bands {
		out.bands = append(out.bands, samples(b))
	}
	if r.Summarized {
		block := harvest.BlockNodePSI
		if m.Scope == "pod" {
			block = harvest.BlockPodPSI
		}
		total := "?"
		if count != nil {
			total = strconv.Itoa(*count)
		}
		var names []string
		for _, b := range harvest.PSIBandList() {
			names = append(names, b.Name)
		}
		out.notices = append(out.notices, harvest.Notice{Block: block, Reason: fmt.Sprintf(
			"%s series (more than %d): showing bands across them (%s per timestamp) and the %d with the highest peak; the query option series: all shows every series",
			total, d.settings.MaxSeries, strings.Join(names, ", "), len(r.Series))})
	}
	out.notices = append(out.notices, r.Warnings...)
	return out
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
		names = append(names, harvest.PSIBandList()[i].Name)
		displays = append(displays, withPrefix(label, harvest.PSIBandList()[i].Name))
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
