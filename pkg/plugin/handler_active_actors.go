package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// handleActiveActors answers `activeActors`: the total of sampled actors and
// the number of atelets with actors, at run time (the atelet lag already
// shifted back), and the total's steady-window summary with the atelet
// count.
func (d *Datasource) handleActiveActors(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, nil, d.activeActorsFrames)
}

func (d *Datasource) activeActorsFrames(ctx context.Context, m queryModel, e runs.Entry, label string) (runFrames, error) {
	br := d.block(ctx, e, harvest.BlockActiveActors)
	a := br.result.ActiveActors
	if n, failed := readFailure(br.notices); failed && a.Atelets == nil {
		return runFrames{}, d.prometheusDown(n)
	}
	points := onGrid(a.Timeseries, func(x harvest.ActorsPoint) int64 { return x.Timestamp }, m.grid.step)
	ts := make([]int64, len(points))
	total := make([]float64, len(points))
	atelets := make([]int64, len(points))
	for i, p := range points {
		ts[i], total[i], atelets[i] = p.Timestamp, p.ActiveActors, int64(p.ActiveAtelets)
	}
	series := data.NewFrame(frameName("active actors", label),
		timeField(ts),
		configured(data.NewField("active_actors", nil, total), withPrefix(label, "Active actors"), unitNone),
		configured(data.NewField("active_atelets", nil, atelets), withPrefix(label, "Atelets with actors"), unitNone),
	)
	timeSeriesWide(series)
	fields := summaryFields(a.Summary, label, "Active actors", unitNone)
	fields = append(fields, configured(data.NewField("atelets", nil, []*int64{intPtrToInt64(a.Atelets)}), withPrefix(label, "Atelets"), unitNone))
	summary := numericWide(data.NewFrame(frameName("active actors summary", label), fields...))
	return runFrames{frames: []*data.Frame{series, summary}, queries: br.queries, notices: br.notices}, nil
}
