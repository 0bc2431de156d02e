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
	gs, err := d.configuredGates()
	if err != nil {
		return errorResponse(err)
	}
	if d.catalogs.Store == nil {
		return errorResponse(badRequest("gates reads stored runs: configure a results store"))
	}
	t, err := parseGatesRuns(m)
	if err != nil {
		return errorResponse(err)
	}
	run, err := d.gatesRun(ctx, t)
	if err != nil {
		return errorResponse(err)
	}
	base, err := d.gatesBaseline(ctx, t, run)
	if err != nil {
		return errorResponse(err)
	}
	rs := verdicts.Evaluate(gs, run, base)
	if opts.numeric {
		return gatesNumeric(run, rs, opts, []runNote{note("gates of run " + run.ID)})
	}
	frames := gatesFrames(rs, t.latest)
	setMeta(frames, nil, []data.Notice{{Severity: data.NoticeSeverityInfo, Text: "gates of run " + run.ID}})
	return backend.DataResponse{Frames: frames}
}

// configuredGates are the gates of the datasource setting gates: an empty
// or malformed setting is a 400.
func (d *Datasource) configuredGates() (verdicts.Gates, error) {
	if strings.TrimSpace(d.settings.Gates) == "" {
		return verdicts.Gates{}, badRequest("gates: the datasource setting gates is empty")
	}
	gs, err := verdicts.ParseGates([]byte(d.settings.Gates))
	if err != nil {
		return verdicts.Gates{}, badRequest("the datasource setting gates: %v", err)
	}
	return gs, nil
}

// gatesRuns names the runs of a gates query: the run (the latest stored
// run of testName, or a stored run id) and its baseline (none, latest, or
// a stored run id).
type gatesRuns struct {
	latest   bool
	testName string
	run      runs.RunID // when not latest
	baseline string     // as the query says it
	base     runs.RunID // when baseline is an id
}

// parseGatesRuns reads the runs of a gates query: anything but one run id
// or latest, an unset dashboard variable, or an id that names no stored
// run is a 400.
func parseGatesRuns(m queryModel) (gatesRuns, error) {
	ids := m.Run.ids()
	if len(ids) != 1 || ids[0] == runs.IDRange {
		return gatesRuns{}, badRequest("gates needs one stored run id or latest")
	}
	for _, s := range []string{ids[0], m.Baseline, m.TestName} {
		if v, ok := unresolvedVariable(s); ok {
			return gatesRuns{}, badRequest("gates: the dashboard variable $%s is not set", v)
		}
	}
	t := gatesRuns{latest: ids[0] == runs.IDLatest, testName: m.TestName, baseline: m.Baseline}
	var err error
	if !t.latest {
		if t.run, err = storedRunID(ids[0]); err != nil {
			return gatesRuns{}, err
		}
	}
	if t.baseline != "" && t.baseline != runs.IDLatest {
		if t.base, err = storedRunID(t.baseline); err != nil {
			return gatesRuns{}, err
		}
	}
	return t, nil
}

// gatesRun loads the run whose gates are evaluated: the latest stored run
// of the test name (a failing read is a 502), or the stored run of its id
// (loadStoredRun).
func (d *Datasource) gatesRun(ctx context.Context, t gatesRuns) (*verdicts.Run, error) {
	if !t.latest {
		return d.loadStoredRun(ctx, t.run)
	}
	e, err := d.latestRun(ctx, t.testName, true)
	if err != nil {
		return nil, catalogError(err)
	}
	run, err := d.loadRun(ctx, e)
	if err != nil {
		return nil, withStatus(backend.StatusBadGateway, err)
	}
	return run, nil
}

// gatesBaseline loads the baseline run is evaluated against: none (nil),
// the latest baseline of run's test name (verdicts.LatestBaselineOf; none
// is a 404), or the stored run of its id (loadStoredRun).
func (d *Datasource) gatesBaseline(ctx context.Context, t gatesRuns, run *verdicts.Run) (*verdicts.Run, error) {
	switch t.baseline {
	case "":
		return nil, nil
	case runs.IDLatest:
		es, _, err := d.listStore(ctx, runs.ListOptions{TestName: run.TestName}, 0)
		if err != nil {
			return nil, withStatus(backend.StatusBadGateway, err)
		}
		load := func(e runs.Entry) (*verdicts.Run, error) { return d.loadRun(ctx, e) }
		base, err := verdicts.LatestBaselineOf(es, run, load)
		if err != nil {
			return nil, withStatus(backend.StatusNotFound, err)
		}
		return base, nil
	}
	return d.loadStoredRun(ctx, t.base)
}

// gatesFrames are the frames of the gate results rs: with latest (the run
// is the latest of its test name) first a one-number frame of failed gates
// for alert rules (numeric-wide), then the gate rows as a table.
func gatesFrames(rs []verdicts.GateResult, latest bool) data.Frames {
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
	if latest {
		// First: alert rules read a response by its first frame.
		failed := float64(verdicts.Summarise(rs).Failed)
		frames = append(data.Frames{numericWide(data.NewFrame("failed_gates", data.NewField("failed_gates", nil, []float64{failed})))}, frames...)
	}
	return frames
}
