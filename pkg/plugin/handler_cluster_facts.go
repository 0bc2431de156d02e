package plugin

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

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
	fields, notices := trialFields(t, factKeys, label)
	frame := data.NewFrame(frameName("cluster facts", label), fields...)
	return runFrames{frames: []*data.Frame{frame}, notices: append(notices, textNotices(t.notices)...)}, nil
}

// trialFields turns trial measurements into one-row fields: text keys as
// strings, the others as numbers (a value that does not parse is null with
// a notice, never a string in a number column).
func trialFields(t trialRow, keys []string, label string) ([]*data.Field, []harvest.Notice) {
	var (
		out     []*data.Field
		notices []harvest.Notice
	)
	for _, k := range keys {
		v := t.values[k]
		display := withPrefix(label, strings.ReplaceAll(k, "_", " "))
		if isTextKey(k) {
			out = append(out, configured(data.NewField(k, nil, []*string{v}), display, ""))
			continue
		}
		n, err := number(v)
		if err != nil {
			notices = append(notices, harvest.Notice{Field: k, Reason: "null: " + err.Error()})
		}
		out = append(out, configured(data.NewField(k, nil, []*float64{n}), display, unitNone))
	}
	return out, notices
}

// textNotices wraps plain-text notices for noticesMeta.
func textNotices(ns []string) []harvest.Notice {
	out := make([]harvest.Notice, len(ns))
	for i, n := range ns {
		out[i] = harvest.Notice{Reason: n}
	}
	return out
}
