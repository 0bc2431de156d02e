package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// handlePacking answers `packing`: the busy, total and ratio series of the
// benchmark pool over the run, and the ratio's steady-window summary.
func (d *Datasource) handlePacking(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, nil, d.packingFrames)
}

func (d *Datasource) packingFrames(ctx context.Context, m queryModel, e runs.Entry, label string) (runFrames, error) {
	br := d.block(ctx, e, harvest.BlockPacking)
	p := br.result.Packing
	if n, failed := readFailure(br.notices); failed && len(p.Timeseries) == 0 {
		return runFrames{}, d.prometheusDown(n)
	}
	points := onGrid(p.Timeseries, func(x harvest.PackingPoint) int64 { return x.Timestamp }, m.grid.step)
	ts := make([]int64, len(points))
	busy := make([]float64, len(points))
	total := make([]float64, len(points))
	ratio := make([]*float64, len(points))
	for i, pt := range points {
		ts[i], busy[i], total[i], ratio[i] = pt.Timestamp, pt.Busy, pt.Total, pt.Ratio
	}
	series := data.NewFrame(frameName("packing", label),
		timeField(ts),
		configured(data.NewField("busy_workers", nil, busy), withPrefix(label, "Busy workers"), unitNone),
		configured(data.NewField("total_workers", nil, total), withPrefix(label, "Total workers"), unitNone),
		configured(data.NewField("packing_ratio", nil, ratio), withPrefix(label, "Packing ratio"), unitRatio),
	)
	timeSeriesWide(series)
	summary := numericWide(data.NewFrame(frameName("packing summary", label),
		summaryFields(p.Summary, label, "Packing ratio", unitRatio)...))
	return runFrames{frames: []*data.Frame{series, summary}, queries: br.queries, notices: br.notices}, nil
}
