package plugin

import (
	"context"
	"fmt"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// checkPSI defaults scope to node, resource to cpu and series to bands
// beyond maxSeries.
func checkPSI(m *queryModel) error {
	if err := oneOf("scope", &m.Scope, "node", "node", "pod"); err != nil {
		return err
	}
	if err := oneOf("series", &m.Series, "auto", "auto", "bands", "all"); err != nil {
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
	// The summary is exact (stored, or the 10 s harvest); the series are
	// read at the panel's resolution.
	br := d.block(ctx, e, block)
	b := br.result.NodePSI
	if m.Scope == "pod" {
		b = br.result.PodPSI
	}
	res := b.Resource(m.Resource)
	name := frameName("psi "+m.Scope+" "+m.Resource, label)
	if stored := d.storedPSI(ctx, e, m.Scope, m.Resource); br.fromStore && stored != nil && m.Series != "all" {
		series := storedPSIFrame(stored, m.grid.step, name, byLabel, m.Resource+"_stall_pct", label)
		notices := []harvest.Notice{{Block: block, Kind: harvest.Stored,
			Reason: fmt.Sprintf("source: results store (the %s and %s of run %s): bands across the series and the ones with the highest peak", runs.FileServerSummary, runs.FilePSISeries, e.ID)}}
		return runFrames{frames: []*data.Frame{series, psiSummary(m, b, res, label, countName)}, notices: notices}, nil
	}
	panel := d.psiSeriesPanel(ctx, m, e, b.Count)
	series := panel.frame(name, byLabel, m.Resource+"_stall_pct", label)
	if n, failed := readFailure(br.notices); failed && panel.failed != nil && b.Count == nil {
		return runFrames{}, d.prometheusDown(n)
	}
	// Notices of the other two resources are noise here.
	var notices []harvest.Notice
	for _, n := range br.notices {
		if n.Field == "" || n.Field == harvest.PSIKey(m.Resource)+"_stall_pct" || n.Field == countName {
			notices = append(notices, n)
		}
	}
	if br.fromStore {
		notices = append(notices, harvest.Notice{Block: block, Reason: "source of the per-series samples: Prometheus"})
		if panel.failed == nil && len(series.Fields) <= 1 {
			notices = append(notices, harvest.Notice{Block: block, Kind: harvest.Absent,
				Reason: "Prometheus holds no samples for this run (past its retention?): the series are empty; the summary is the stored one"})
		}
	}
	notices = append(notices, panel.notices...)
	return runFrames{frames: []*data.Frame{series, psiSummary(m, b, res, label, countName)}, queries: append(slices.Clone(br.queries), panel.queries...), notices: notices}, nil
}

// psiSummary is the pooled steady-window summary with the node/pod count.
func psiSummary(m queryModel, b harvest.PSI, res *harvest.PSIResource, label, countName string) *data.Frame {
	fields := summaryFields(res.Summary, label, m.Resource+" stall %", unitPercent)
	fields = append(fields, configured(data.NewField(countName, nil, []*int64{intPtrToInt64(b.Count)}), withPrefix(label, countName), unitNone))
	return numericWide(data.NewFrame(frameName("psi "+m.Scope+" "+m.Resource+" summary", label), fields...))
}

// storedPSIFrame is a stored band set on the panel grid: the bands and the
// top series, each point the last stored one at or before its grid point.
func storedPSIFrame(b *harvest.PSIBandSet, step int64, name, byLabel, fieldName, label string) *data.Frame {
	all := make([]int, len(b.Timestamps))
	for i := range all {
		all[i] = i
	}
	idx := onGrid(all, func(i int) int64 { return b.Timestamps[i] }, step)
	pick := func(vals []*float64) []sample {
		var out []sample
		for _, i := range idx {
			if i < len(vals) && vals[i] != nil {
				out = append(out, sample{b.Timestamps[i], *vals[i]})
			}
		}
		return out
	}
	p := psiPanel{}
	for _, v := range [][]*float64{b.Min, b.P50, b.P90, b.P99, b.Max} {
		p.bands = append(p.bands, pick(v))
	}
	for _, t := range b.Top {
		var s promql.Series
		s.Labels = map[string]string{byLabel: t.Name}
		for _, x := range pick(t.Values) {
			s.Samples = append(s.Samples, promql.Sample{T: x.t, V: x.v})
		}
		p.series = append(p.series, s)
	}
	return p.frame(name, byLabel, fieldName, label)
}
