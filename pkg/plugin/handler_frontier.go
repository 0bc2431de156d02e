package plugin

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// handleFrontier answers `frontier`: per run one row with id, start, the
// density frontiers (actors per node, vCPU, GiB of RAM, per pod p50/90/99),
// multi_actor_worker and the failure ratios. With run range it is one row
// per catalogued run starting in the dashboard range: a trend across runs.
// Failure-ratio columns are the union over the runs (null where a run has
// no such operation).
func (d *Datasource) handleFrontier(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, err := parseQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	entries, problems, err := d.listRuns(ctx, m, q)
	if err != nil {
		return errorResponse(err)
	}
	rows := make([]trialRow, len(entries))
	for i, e := range entries {
		rows[i] = d.trialSummary(ctx, e)
	}
	keys := append([]string(nil), frontierKeys...)
	for _, r := range rows {
		for _, k := range r.keys {
			if strings.HasSuffix(k, "_failure_ratio") && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	frame, notices := runTable("frontier", entries, rows, keys)
	notes := []string{frontierCaveat}
	notes = append(notes, problems...)
	for _, r := range rows {
		notes = append(notes, r.notices...)
	}
	setMeta([]*data.Frame{frame}, nil, noticesMeta(notes, notices))
	return backend.DataResponse{Frames: data.Frames{frame}}
}

// runTable is one row per run: id, start, then keys from each run's trial
// row (columns typed by trialFields' rule).
func runTable(name string, entries []runs.Entry, rows []trialRow, keys []string) (*data.Frame, []harvest.Notice) {
	ids := make([]string, len(entries))
	starts := make([]time.Time, len(entries))
	for i, e := range entries {
		ids[i], starts[i] = e.ID, time.Unix(e.Start, 0).UTC()
	}
	fields := []*data.Field{
		configured(data.NewField("id", nil, ids), "Run", ""),
		configured(data.NewField("start", nil, starts), "Start", ""),
	}
	var notices []harvest.Notice
	cols := make([][]*data.Field, len(rows))
	for i, r := range rows {
		var ns []harvest.Notice
		cols[i], ns = trialFields(r, keys, "")
		for _, n := range ns {
			n.Reason = entries[i].ID + ": " + n.Reason
			notices = append(notices, n)
		}
	}
	for j, k := range keys {
		var f *data.Field
		if isTextKey(k) {
			v := make([]*string, len(rows))
			for i := range rows {
				v[i] = cols[i][j].At(0).(*string)
			}
			f = data.NewField(k, nil, v)
		} else {
			v := make([]*float64, len(rows))
			for i := range rows {
				v[i] = cols[i][j].At(0).(*float64)
			}
			f = data.NewField(k, nil, v)
		}
		unit := unitNone
		if isTextKey(k) {
			unit = ""
		}
		fields = append(fields, configured(f, strings.ReplaceAll(k, "_", " "), unit))
	}
	return data.NewFrame(name, fields...), notices
}
