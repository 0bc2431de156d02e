package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// workingSetDisplay names the sub-blocks in legends.
var workingSetDisplay = map[string]string{
	"node": "Node", "worker": "Worker", "atelet": "Atelet", "actor": "Actors per atelet", "per_actor": "Per actor",
}

func checkWorkingSet(m *queryModel) error {
	return oneOf("block", &m.Block, "node", harvest.WorkingSetBlocks()[:]...)
}

// handleWorkingSet answers `workingSet` for one sub-block (block node,
// worker, atelet, actor or per_actor): the sum and max across series per
// timestamp in GiB, and the steady-window summary with the series count.
func (d *Datasource) handleWorkingSet(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, checkWorkingSet, d.workingSetFrames)
}

func (d *Datasource) workingSetFrames(ctx context.Context, m queryModel, e runs.Entry, label string) (runFrames, error) {
	br := d.block(ctx, e, harvest.BlockWorkingSet)
	ws := br.result.WorkingSet
	b := ws.Block(m.Block)
	var notices []harvest.Notice
	for _, n := range br.notices {
		if n.Field == "" || n.Field == m.Block {
			notices = append(notices, n)
		}
	}
	if n, failed := readFailure(notices); failed && b.Count == nil {
		return runFrames{}, d.prometheusDown(n)
	}
	points := onGrid(b.Timeseries, func(x harvest.WSPoint) int64 { return x.Timestamp }, m.grid.step)
	ts := make([]int64, len(points))
	total := make([]float64, len(points))
	mx := make([]float64, len(points))
	for i, p := range points {
		ts[i], total[i], mx[i] = p.Timestamp, p.TotalGB, p.MaxGB
	}
	name := workingSetDisplay[m.Block]
	series := data.NewFrame(frameName("working set "+m.Block, label),
		timeField(ts),
		configured(data.NewField("total_gb", nil, total), withPrefix(label, name+" total"), unitGiB),
		configured(data.NewField("max_gb", nil, mx), withPrefix(label, name+" max"), unitGiB),
	)
	timeSeriesWide(series)
	fields := summaryFields(b.Summary, label, name, unitGiB)
	fields = append(fields, configured(data.NewField("count", nil, []*int64{intPtrToInt64(b.Count)}), withPrefix(label, name+" series"), unitNone))
	summary := numericWide(data.NewFrame(frameName("working set "+m.Block+" summary", label), fields...))
	return runFrames{frames: []*data.Frame{series, summary}, queries: br.queries, notices: notices}, nil
}
