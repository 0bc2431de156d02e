package plugin

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// handleGates answers `gates`: the gates of the datasource setting `gates`
// evaluated on one stored run (an id, or latest of testName), against the
// stored run `baseline` (an id or latest; none: regression gates fail with
// reason "no baseline"). Frames: with run latest first a one-number frame
// of failed gates for alert rules (numeric-wide), then the gate rows as a
// table. With format numeric: gatesNumeric.
func (d *Datasource) handleGates(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, opts, err := parseNumericQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	if strings.TrimSpace(d.settings.Gates) == "" {
		return errorResponse(badRequest("gates: the datasource setting gates is empty"))
	}
	gs, err := verdicts.ParseGates([]byte(d.settings.Gates))
	if err != nil {
		return errorResponse(badRequest("the datasource setting gates: %v", err))
	}
	if d.catalogs.Store == nil {
		return errorResponse(badRequest("gates reads stored runs: configure a results store"))
	}
	ids := m.Run.ids()
	if len(ids) != 1 || ids[0] == runs.IDRange {
		return errorResponse(badRequest("gates needs one stored run id or latest"))
	}
	for _, s := range []string{ids[0], m.Baseline, m.TestName} {
		if v, ok := unresolvedVariable(s); ok {
			return errorResponse(badRequest("gates: the dashboard variable $%s is not set", v))
		}
	}
	var runID, baseID runs.RunID
	if ids[0] != runs.IDLatest {
		if runID, err = storedRunID(ids[0]); err != nil {
			return errorResponse(err)
		}
	}
	if m.Baseline != "" && m.Baseline != runs.IDLatest {
		if baseID, err = storedRunID(m.Baseline); err != nil {
			return errorResponse(err)
		}
	}
	var run *verdicts.Run
	if ids[0] == runs.IDLatest {
		e, err := d.catalogs.Store.Latest(ctx, m.TestName)
		if err != nil {
			return errorResponse(catalogError(err))
		}
		run, err = d.loadRun(ctx, e)
		if err != nil {
			return errorResponse(withStatus(backend.StatusBadGateway, err))
		}
	} else if run, err = d.loadStoredRun(ctx, runID); err != nil {
		return errorResponse(err)
	}
	var base *verdicts.Run
	switch m.Baseline {
	case "":
	case runs.IDLatest:
		es, _, err := d.listStore(ctx, runs.ListOptions{TestName: run.TestName}, 0)
		if err != nil {
			return errorResponse(withStatus(backend.StatusBadGateway, err))
		}
		load := func(e runs.Entry) (*verdicts.Run, error) { return d.loadRun(ctx, e) }
		if base, err = verdicts.LatestBaselineOf(es, run, load); err != nil {
			return errorResponse(withStatus(backend.StatusNotFound, err))
		}
	default:
		if base, err = d.loadStoredRun(ctx, baseID); err != nil {
			return errorResponse(err)
		}
	}
	rs := verdicts.Evaluate(gs, run, base)
	if opts.numeric {
		return gatesNumeric(run, rs, opts, []runNote{note("gates of run " + run.ID)})
	}
	n := len(rs)
	key, verdict, reason := make([]string, n), make([]string, n), make([]string, n)
	value, minV, maxV, baseV, pct, maxReg := make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n)
	for i, r := range rs {
		key[i], verdict[i], reason[i] = r.Gate.Key, r.Verdict, r.Reason
		value[i], minV[i], maxV[i], baseV[i], pct[i], maxReg[i] = r.Value, r.Gate.Min, r.Gate.Max, r.Baseline, r.DeltaPct, r.Gate.MaxRegressionPct
	}
	rows := data.NewFrame("gates",
		data.NewField("key", nil, key),
		data.NewField("value", nil, value),
		data.NewField("min", nil, minV),
		data.NewField("max", nil, maxV),
		data.NewField("baseline", nil, baseV),
		configured(data.NewField("delta_pct", nil, pct), "Δ %", "percent"),
		data.NewField("max_regression_pct", nil, maxReg),
		data.NewField("verdict", nil, verdict),
		data.NewField("reason", nil, reason),
	)
	frames := data.Frames{table(rows)}
	if ids[0] == runs.IDLatest {
		// First: alert rules read a response by its first frame.
		failed := float64(verdicts.Summarise(rs).Failed)
		frames = append(data.Frames{numericWide(data.NewFrame("failed_gates", data.NewField("failed_gates", nil, []float64{failed})))}, frames...)
	}
	setMeta(frames, nil, []data.Notice{{Severity: data.NoticeSeverityInfo, Text: "gates of run " + run.ID}})
	return backend.DataResponse{Frames: frames}
}
