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
	return d.overRuns(ctx, q, func(entries []runs.Entry, problems []string) backend.DataResponse {
		rows := make([]trialRow, len(entries))
		for i, e := range entries {
			rows[i] = d.trialSummary(ctx, e)
		}
		failureRatio := func(k string) bool { return strings.HasSuffix(k, "_failure_ratio") }
		keys := unionTrialKeys(append([]string(nil), frontierKeys...), rows, failureRatio)
		cols, notices := trialColumns(entries, rows, keys, "")
		frame := table(data.NewFrame("frontier", append(runColumns(entries), cols...)...))
		notes := frontierNotes(problems)
		for _, r := range rows {
			notes = append(notes, r.notices...)
		}
		setMeta([]*data.Frame{frame}, nil, noticesMeta(notes, notices))
		return backend.DataResponse{Frames: data.Frames{frame}}
	})
}

// frontierNotes are the first notes of a table of runs that shows their
// frontiers: the frontier caveat, then the problems of resolving the runs.
func frontierNotes(problems []string) []runNote {
	notes := []runNote{note(frontierCaveat)}
	for _, p := range problems {
		notes = append(notes, note(p))
	}
	return notes
}

// unionTrialKeys appends to keys the keys of rows that keep accepts (nil:
// every key) and keys lacks, in the order rows first have them.
func unionTrialKeys(keys []string, rows []trialRow, keep func(string) bool) []string {
	for _, r := range rows {
		for _, k := range r.keys {
			if (keep == nil || keep(k)) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// runColumns are the id and start columns of a table with one row per run.
func runColumns(entries []runs.Entry) []*data.Field {
	ids := make([]string, len(entries))
	starts := make([]time.Time, len(entries))
	for i, e := range entries {
		ids[i], starts[i] = e.ID, time.Unix(e.Start, 0).UTC()
	}
	return []*data.Field{
		configured(data.NewField("id", nil, ids), "Run", ""),
		configured(data.NewField("start", nil, starts), "Start", ""),
	}
}

// trialColumns are one column per trial key, one row per run: text keys
// as strings, the others as numbers (a value that does not parse is null
// with a notice, never a string in a number column). label prefixes the
// display names (multi-run per-run queries).
func trialColumns(entries []runs.Entry, rows []trialRow, keys []string, label string) ([]*data.Field, []harvest.Notice) {
	var (
		out     []*data.Field
		notices []harvest.Notice
	)
	for _, k := range keys {
		display := withPrefix(label, strings.ReplaceAll(k, "_", " "))
		if isTextKey(k) {
			v := make([]*string, len(rows))
			for i, r := range rows {
				v[i] = r.values[k]
			}
			out = append(out, configured(data.NewField(k, nil, v), display, ""))
			continue
		}
		v := make([]*float64, len(rows))
		for i, r := range rows {
			n, err := number(r.values[k])
			if err != nil {
				notices = append(notices, harvest.Notice{Field: k, Reason: entries[i].ID + ": null: " + err.Error()})
			}
			v[i] = n
		}
		out = append(out, configured(data.NewField(k, nil, v), display, unitNone))
	}
	return out, notices
}
