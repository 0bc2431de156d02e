package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/engine"
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
// stats.jsonl phase rows (no Prometheus request); a run without stored rows
// reads the live pod logs when Kubernetes access is on and the run ended
// less than liveFactsMaxAgeSeconds ago. The summary counts go into the
// notices. Other runs get an empty table with a notice.
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
	stored := false
	if d.inStore(e) {
		s := d.storedRows(ctx, e)
		if len(s.phases) > 0 {
			stored = true
			groups, summary = phases.FromRows(s.phases)
			note(harvest.Stored, "source: results store (the phase rows of the %s of run %s)", runs.FileStatsJSONL, e.ID)
		}
	}
	if !stored {
		where := "the run is not in the results store"
		if e.Source == runs.SourceStore {
			where = "the run's stored " + runs.FileStatsJSONL + " holds no phase rows"
		}
		if why := d.liveFactsUnavailable(e, d.now().Unix()); why != "" {
			note(harvest.Caveat, "no phase breakdown: %s (it is recorded by `density export`), and the live pod logs are not read: %s", where, why)
		} else {
			lp := d.livePhases(ctx, e)
			groups, summary = lp.groups, lp.summary
			note(harvest.Caveat, "source: the live pod logs (%s)", where)
			for _, n := range lp.notices {
				note(harvest.Caveat, "%s", n)
			}
		}
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
	var kept []phases.Group
	for _, g := range groups {
		if (o.Op == "" || g.Op == o.Op) && (o.Layer == "" || g.Layer == o.Layer) {
			kept = append(kept, g)
		}
	}
	return runFrames{frames: []*data.Frame{phaseFrame(kept, label)}, notices: notices}
}

// phaseFrame is the table: the dimensions as text, count, the percentiles
// in milliseconds, and a last column `group` naming the row in one string
// ("restore gvisor latest full · ateom_restore (atelet)"), the category
// axis of the dashboards' bar charts (Grafana's bar chart takes one field).
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
	names := make([]string, n)
	for i, g := range groups {
		var parts []string
		for _, v := range []string{g.Op, g.Class, g.Kind, g.Scope} {
			if v != "" && v != "-" && v != "none" {
				parts = append(parts, v)
			}
		}
		names[i] = fmt.Sprintf("%s · %s (%s)", strings.Join(parts, " "), g.Phase, g.Layer)
	}
	fields = append(fields, data.NewField("group", nil, names))
	f := data.NewFrame(frameName("phases", label), fields...)
	f.Meta = &data.FrameMeta{PreferredVisualization: data.VisTypeTable}
	return table(f)
}

// livePhase is a phase breakdown read from the live pod logs.
type livePhase struct {
	groups  []phases.Group
	summary artifact.Object
	notices []string
}

// livePhases reads the timing breakdown records of a run from the pods'
// logs (the atelet and worker namespaces and containers of the settings,
// from the run start − 60 s), as `density export` does, cached as live
// (today's pods: the logs change while they run) or, when a pod's log
// could not be read, as a failed read.
func (d *Datasource) livePhases(ctx context.Context, e runs.Entry) livePhase {
	lp, _, err := d.cache.livePhases.get(ctx, d.key(keyLivePhases, e, ""), func(ctx context.Context) (livePhase, outcome) {
		s := d.settings
		p := engine.Run(ctx, engine.Input{Kube: engine.Kubernetes{Client: d.kube}, Phases: &engine.PhaseSource{
			Logs: cluster.LogOptions{
				AteletNamespace: s.AteletNamespace, AteletContainer: s.AteletContainer,
				WorkerNamespace: s.WorkerNamespace, WorkerContainer: s.WorkerContainer,
				Since:       time.Unix(e.Start-60, 0),
				ListTimeout: s.Timeout, // each log read: cluster.DefaultLogTimeout
			},
			DropAfterUS: (e.End + s.AteletLagSeconds) * 1_000_000,
		}}, engine.PartPhases).Phases
		lp := livePhase{groups: p.Groups, notices: p.Notices}
		if p.Read {
			lp.summary = phases.SummaryRow(phases.RunKey{}, p.Summary).Measurements
		}
		if p.Summary.PodsFailed != nil && *p.Summary.PodsFailed > 0 {
			return lp, failedRead
		}
		return lp, liveRun
	})
	if err != nil {
		lp.notices = []string{fmt.Sprintf("the read of the pod logs was cancelled: %v", err)}
	}
	return lp
}
