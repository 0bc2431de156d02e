package plugin

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/verdicts"
	"github.com/substrate/density/pkg/verdicts/command"
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
	var rs [2]*verdicts.Run
	for i, id := range []string{m.Baseline, m.Candidate} {
		r, err := command.LoadStoreRun(ctx, d.catalogs.Store, id)
		if err != nil {
			return errorResponse(withStatus(backend.StatusNotFound, err))
		}
		rs[i] = r
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
	setMeta([]*data.Frame{f}, nil, notices)
	return backend.DataResponse{Frames: data.Frames{f}}
}
