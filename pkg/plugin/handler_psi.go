package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// psiResourceKeys maps the query's resource to the block's output key.
var psiResourceKeys = map[string]string{"cpu": "cpu", "memory": "mem", "io": "io"}

// checkPSI defaults scope to node and resource to cpu.
func checkPSI(m *queryModel) error {
	if err := oneOf("scope", &m.Scope, "node", "node", "pod"); err != nil {
		return err
	}
	return oneOf("resource", &m.Resource, "cpu", "cpu", "memory", "io")
}

// handlePSI answers `psi`: one stall-% series per node (scope node) or
// worker pod (scope pod) for one resource, and the pooled steady-window
// summary with the node/pod count.
func (d *Datasource) handlePSI(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, checkPSI, d.psiFrames)
}

func (d *Datasource) psiFrames(ctx context.Context, m queryModel, e runs.Entry, label string) (runFrames, error) {
	block, byLabel, countName := harvest.BlockNodePSI, "instance", "nodes"
	if m.Scope == "pod" {
		block, byLabel, countName = harvest.BlockPodPSI, "pod", "pods"
	}
	br := d.block(ctx, e, block)
	b := br.value.(harvest.PSI)
	res := b.Resource(psiResourceKeys[m.Resource])
	if n, failed := readFailure(br.notices); failed && res.Series == nil && b.Count == nil {
		return runFrames{}, d.prometheusDown(n)
	}
	var (
		series   [][]sample
		names    []string
		displays []string
		labels   []data.Labels
	)
	for _, s := range res.Series {
		who := s.Labels[byLabel]
		pts := make([]sample, len(s.Samples))
		for i, p := range s.Samples {
			pts[i] = sample{p.T, p.V}
		}
		series = append(series, pts)
		names = append(names, m.Resource+"_stall_pct")
		displays = append(displays, withPrefix(label, who))
		labels = append(labels, data.Labels{byLabel: who})
	}
	ts := seriesFrame(frameName("psi "+m.Scope+" "+m.Resource, label), series, names, displays, labels, unitPercent)
	ts.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide}
	what := m.Resource + " stall %"
	fields := summaryFields(res.Summary, label, what, unitPercent)
	fields = append(fields, configured(data.NewField(countName, nil, []*int64{intPtrToInt64(b.Count)}), withPrefix(label, countName), unitNone))
	summary := data.NewFrame(frameName("psi "+m.Scope+" "+m.Resource+" summary", label), fields...)
	// Notices of the other two resources are noise here.
	var notices []harvest.Notice
	for _, n := range br.notices {
		if n.Field == "" || n.Field == psiResourceKeys[m.Resource]+"_stall_pct" || n.Field == countName {
			notices = append(notices, n)
		}
	}
	return runFrames{frames: []*data.Frame{ts, summary}, queries: br.queries, notices: notices}, nil
}
