package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// handleClusterFacts answers `clusterFacts`: one row of the cluster facts
// (cluster-facts.md) of a run: counts and capacities as numbers, sets of
// values (machine types, versions, capacities, limits, sandbox classes) as
// comma-joined text. Stored runs show what was recorded with them.
func (d *Datasource) handleClusterFacts(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, nil, d.clusterFactsFrames)
}

func (d *Datasource) clusterFactsFrames(ctx context.Context, _ queryModel, e runs.Entry, label string) (runFrames, error) {
	t := d.trialSummary(ctx, e)
	fields, notices := trialColumns([]runs.Entry{e}, []trialRow{t}, clusterfacts.Keys(), label)
	frame := numericWide(data.NewFrame(frameName("cluster facts", label), fields...))
	return runFrames{frames: []*data.Frame{frame}, notices: append(notices, noteNotices(t.notices)...)}, nil
}

// textNotices wraps plain-text notices for noticesMeta.
func textNotices(ns []string) []harvest.Notice {
	out := make([]harvest.Notice, len(ns))
	for i, n := range ns {
		out[i] = harvest.Notice{Reason: n}
	}
	return out
}

// noteNotices are run notes as warnings for noticesMeta (a single run's
// frame: each says its run).
func noteNotices(ns []runNote) []harvest.Notice {
	out := make([]harvest.Notice, len(ns))
	for i, n := range ns {
		out[i] = harvest.Notice{Reason: n.text}
		if n.run != "" {
			out[i].Reason = "run " + n.run + ": " + n.text
		}
	}
	return out
}
