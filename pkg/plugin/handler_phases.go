package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/runs"
)

// blockPhases names the phase breakdown in notices.
const blockPhases = "phases"

// phaseOptions are the `phases` query's filters (phase-breakdown.md
// "Decisions"): layer atelet|ateom, op restore|checkpoint; "" is all.
type phaseOptions struct {
	Op    string `json:"op"`
	Layer string `json:"layer"`
}

// parsePhaseOptions reads and checks the filters; a bad value is a 400.
func parsePhaseOptions(q backend.DataQuery) (phaseOptions, error) {
	var o phaseOptions
	if len(strings.TrimSpace(string(q.JSON))) > 0 {
		if err := json.Unmarshal(q.JSON, &o); err != nil {
			return phaseOptions{}, badRequest("query %s: malformed query JSON: %v", q.RefID, err)
		}
	}
	for _, f := range []struct {
		key, v  string
		allowed []string
	}{
		{"op", o.Op, []string{phases.OpRestore, phases.OpCheckpoint}},
		{"layer", o.Layer, []string{phases.LayerAtelet, phases.LayerAteom}},
	} {
		if name, ok := unresolvedVariable(f.v); ok {
			return phaseOptions{}, badRequest("query %s: %s %q holds the dashboard variable $%s, which was not resolved: check that the variable exists on this dashboard and has a value", q.RefID, f.key, f.v, name)
		}
		v := f.v
		if err := oneOf(f.key, &v, "", f.allowed...); err != nil {
			return phaseOptions{}, err
		}
	}
	return o, nil
}

// handlePhases answers `phases`: one row per phase group of a stored run's
// stats.jsonl phase rows (no Prometheus request); the summary row's counts
// go into the notices. Other runs get an empty table with a notice.
func (d *Datasource) handlePhases(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	o, err := parsePhaseOptions(q)
	if err != nil {
		return errorResponse(err)
	}
	return d.perRun(ctx, q, nil, func(ctx context.Context, _ queryModel, e runs.Entry, label string) (runFrames, error) {
		return d.phaseFrames(ctx, o, e, label), nil
	})
}

func (d *Datasource) phaseFrames(ctx context.Context, o phaseOptions, e runs.Entry, label string) runFrames {
	var groups []phases.Group
	var summary artifact.Object
	var notices []harvest.Notice
	note := func(kind harvest.NoticeKind, format string, a ...any) {
		notices = append(notices, harvest.Notice{Block: blockPhases, Kind: kind, Reason: fmt.Sprintf(format, a...)})
	}
	switch {
	case e.Source != runs.SourceStore || d.catalogs.Store == nil:
		note(harvest.Caveat, "run %s is not in the results store: the phase breakdown is recorded by `density export` (reading live pod logs is not supported here)", e.ID)
	default:
		s := d.storedArtifacts(ctx, e)
		groups, summary = phases.FromRows(s.phases)
		if len(s.phases) == 0 {
			note(harvest.Caveat, "the run's stored %s holds no phase rows: the phase breakdown is recorded by `density export` (reading live pod logs is not supported here)", runs.FileStatsJSONL)
		} else {
			note(harvest.Stored, "source: results store (the phase rows of the %s of run %s)", runs.FileStatsJSONL, e.ID)
		}
		if len(summary) > 0 {
			parts := make([]string, 0, len(summary))
			for _, kv := range summary {
				v := "null"
				if s, ok := kv.Value.(string); ok {
					v = s
				}
				parts = append(parts, kv.Key+" "+v)
			}
			note(harvest.Caveat, "phase records: %s", strings.Join(parts, ", "))
		}
	}
	var kept []phases.Group
	for _, g := range groups {
		if (o.Op == "" || g.Op == o.Op) && (o.Layer == "" || g.Layer == o.Layer) {
			kept = append(kept, g)
		}
	}
	return runFrames{frames: []*data.Frame{phaseFrame(kept, label)}, notices: notices}
}

// phaseFrame is the table: the dimensions as text, count, and the
// percentiles in milliseconds.
func phaseFrame(groups []phases.Group, label string) *data.Frame {
	n := len(groups)
	dims := [6][]string{}
	for i := range dims {
		dims[i] = make([]string, n)
	}
	count := make([]int64, n)
	pct := [4][]float64{}
	for i := range pct {
		pct[i] = make([]float64, n)
	}
	for i, g := range groups {
		for j, v := range []string{g.Layer, g.Op, g.Class, g.Kind, g.Scope, g.Phase} {
			dims[j][i] = v
		}
		count[i] = int64(g.Count)
		for j, v := range []float64{g.P50, g.P90, g.P95, g.Max} {
			pct[j][i] = v
		}
	}
	var fields []*data.Field
	for j, name := range []string{"layer", "op", "class", "kind", "scope", "phase"} {
		fields = append(fields, data.NewField(name, nil, dims[j]))
	}
	fields = append(fields, configured(data.NewField("count", nil, count), withPrefix(label, "count"), unitNone))
	for j, name := range []string{"p50_ms", "p90_ms", "p95_ms", "max_ms"} {
		fields = append(fields, configured(data.NewField(name, nil, pct[j]), withPrefix(label, name), unitMs))
	}
	f := data.NewFrame(frameName("phases", label), fields...)
	f.Meta = &data.FrameMeta{PreferredVisualization: data.VisTypeTable}
	return f
}
