package plugin

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// handleCompare answers `compare`: the stored runs `baseline` and
// `candidate` key by key (verdicts.md), numbers as numbers; keys null in
// one run are named in a notice.
func (d *Datasource) handleCompare(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, err := parseQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	if m.Baseline == "" || m.Candidate == "" {
		return errorResponse(badRequest("compare needs baseline and candidate run ids"))
	}
	for _, id := range []string{m.Baseline, m.Candidate} {
		if v, ok := unresolvedVariable(id); ok {
			return errorResponse(badRequest("compare: the dashboard variable $%s is not set", v))
		}
	}
	if d.catalogs.Store == nil {
		return errorResponse(badRequest("compare reads stored runs: configure a results store"))
	}
	var ids [2]runs.RunID
	for i, id := range []string{m.Baseline, m.Candidate} {
		if ids[i], err = storedRunID(id); err != nil {
			return errorResponse(err)
		}
	}
	var rs [2]*verdicts.Run
	for i, id := range ids {
		if rs[i], err = d.loadStoredRun(ctx, id); err != nil {
			return errorResponse(err)
		}
	}
	c := verdicts.Compare(rs[0], rs[1], verdicts.DefaultNoisePct)
	n := len(c.Rows)
	key, dir, verdict := make([]string, n), make([]string, n), make([]string, n)
	base, cand, delta := make([]float64, n), make([]float64, n), make([]float64, n)
	pct := make([]*float64, n)
	for i, r := range c.Rows {
		key[i], dir[i], verdict[i] = r.Key, r.Direction, r.Verdict
		base[i], cand[i], delta[i], pct[i] = r.Baseline, r.Candidate, r.Delta, r.DeltaPct
	}
	f := data.NewFrame("compare",
		data.NewField("key", nil, key),
		data.NewField("baseline", nil, base),
		data.NewField("candidate", nil, cand),
		data.NewField("delta", nil, delta),
		configured(data.NewField("delta_pct", nil, pct), "Δ %", "percent"),
		data.NewField("direction", nil, dir),
		data.NewField("verdict", nil, verdict),
	)
	var notices []data.Notice
	if len(c.Skipped) > 0 {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo,
			Text: "not compared (null in one run): " + strings.Join(c.Skipped, ", ")})
	}
	setMeta([]*data.Frame{table(f)}, nil, notices)
	return backend.DataResponse{Frames: data.Frames{f}}
}

// storedRunID parses the id of a stored run named by a verdict query: a
// malformed or hostile id, or one that names no stored run (latest, range,
// prom-<ts>), is a 400.
func storedRunID(id string) (runs.RunID, error) {
	rid, err := runs.ParseRunID(id)
	if err != nil {
		return runs.RunID{}, badRequest("%v", err)
	}
	if rid.Kind != runs.KindStore {
		return runs.RunID{}, badRequest("run %q is not a stored run id (<test_name>/<run_ts>/<tag>)", id)
	}
	return rid, nil
}

// loadStoredRun reads a stored run's rows: a run the store does not hold is
// a 404, a failing store a 502, a run whose stats.jsonl cannot be read a
// 404 naming it.
func (d *Datasource) loadStoredRun(ctx context.Context, id runs.RunID) (*verdicts.Run, error) {
	e, err := d.catalogs.Store.Get(ctx, id)
	if err != nil {
		return nil, catalogError(err)
	}
	r, err := d.loadRun(ctx, e)
	if err != nil {
		return nil, withStatus(backend.StatusNotFound, err)
	}
	return r, nil
}
