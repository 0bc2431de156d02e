package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// runFrames is what a per-run handler produced for one run.
type runFrames struct {
	frames  []*data.Frame
	queries []string
	notices []harvest.Notice
}

// perRunFunc builds one run's frames; label is "" for a single-run query,
// else the run's legend prefix.
type perRunFunc func(ctx context.Context, m queryModel, e runs.Entry, label string) (runFrames, error)

// perRun is the common shape of the per-run query types: parse and check
// the query, resolve each run reference, build each run's frames and put
// the PromQL and the notices on them.
func (d *Datasource) perRun(ctx context.Context, q backend.DataQuery, check func(*queryModel) error, f perRunFunc) backend.DataResponse {
	m, err := parseQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	m.grid = newPanelGrid(q.TimeRange.From, q.TimeRange.To, q.Interval, q.MaxDataPoints)
	if check != nil {
		if err := check(&m); err != nil {
			return errorResponse(err)
		}
	}
	if err := oneOf("align", &m.Align, alignAbsolute, alignAbsolute, alignElapsed); err != nil {
		return errorResponse(err)
	}
	entries, err := d.promRuns(ctx, m, q)
	if err != nil {
		return errorResponse(err)
	}
	now := d.now().Unix()
	var resp backend.DataResponse
	for _, e := range entries {
		label := ""
		if len(entries) > 1 || m.Align == alignElapsed {
			label = runLabel(e)
		}
		rf, err := f(ctx, m, e, label)
		if err != nil {
			return errorResponse(err)
		}
		notes := d.runNotices(e, now)
		if m.Align == alignElapsed {
			shift := q.TimeRange.From.Unix() - e.SteadyStart
			shiftTimeSeries(rf.frames, shift)
			notes = append(notes, runNote{run: e.ID, text: fmt.Sprintf("aligned on elapsed time: shifted by %d s so that its steady start lands on the range's start", shift)})
		}
		setMeta(rf.frames, rf.queries, noticesMeta(notes, rf.notices))
		resp.Frames = append(resp.Frames, rf.frames...)
	}
	return resp
}

// Values of the query key align (datasource.md "Query model").
const (
	alignAbsolute = "absolute"
	alignElapsed  = "elapsed"
)

// shiftTimeSeries moves every time of the time-series frames by shift
// seconds (align elapsed); tables such as the summary frames keep their
// values. The frames are the handler's own, built for this request.
func shiftTimeSeries(frames []*data.Frame, shift int64) {
	d := time.Duration(shift) * time.Second
	for _, f := range frames {
		if f.Meta == nil || !f.Meta.Type.IsTimeSeries() {
			continue
		}
		for _, fld := range f.Fields {
			for i := range fld.Len() {
				switch v := fld.At(i).(type) {
				case time.Time:
					fld.Set(i, v.Add(d))
				case *time.Time:
					if v != nil {
						t := v.Add(d)
						fld.Set(i, &t)
					}
				}
			}
		}
	}
}

// promRuns resolves the query's runs of a handler that reads Prometheus:
// a 400 when its client could not be built.
func (d *Datasource) promRuns(ctx context.Context, m queryModel, q backend.DataQuery) ([]runs.Entry, error) {
	if err := d.needPrometheus(); err != nil {
		return nil, err
	}
	return d.resolveRuns(ctx, m, q)
}

// needPrometheus fails when the Prometheus client could not be built.
func (d *Datasource) needPrometheus() error {
	if d.prom == nil {
		err := d.promErr
		if err == nil {
			err = errors.New("not configured")
		}
		return withStatus(backend.StatusBadRequest, fmt.Errorf("Prometheus at %s: %v", URLHost(d.settings.PrometheusURL), err))
	}
	return nil
}

// oneOf checks an enumerated query key, applying its default when empty.
func oneOf(key string, v *string, def string, allowed ...string) error {
	if *v == "" {
		*v = def
		return nil
	}
	for _, a := range allowed {
		if *v == a {
			return nil
		}
	}
	return badRequest("%s %q is not one of %v", key, *v, allowed)
}

// overRuns is the common shape of the list-type query types (runs,
// annotations, frontier, summary): parse the query, then hand the runs it
// covers (every catalogued run starting in the range, or the named runs)
// and the catalogs' problems to f.
func (d *Datasource) overRuns(ctx context.Context, q backend.DataQuery, f func(entries []runs.Entry, problems []string) backend.DataResponse) backend.DataResponse {
	m, err := parseQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	entries, problems, err := d.listRuns(ctx, m, q)
	if err != nil {
		return errorResponse(err)
	}
	return f(entries, problems)
}
