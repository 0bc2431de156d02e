package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// oomDisplay names the six oom_events fields in legends.
var oomDisplay = map[string]string{
	"node": "Node OOM kills", "pod": "Worker pod OOM kills", "worker_restarts": "Worker restarts",
	"worker_oomkilled_pods": "OOM-killed worker pods", "evicted": "Evicted pods", "worker_pods_lost": "Worker pods lost",
}

// handleOOMEvents answers `oomEvents`: one row with the six oom_events
// fields. node and pod come from cAdvisor; the four Kubernetes counts from
// a stored run's server_summary.json (null otherwise, with the reason).
// The fields are never added up: one OOM can show in several.
func (d *Datasource) handleOOMEvents(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, nil, d.oomFrames)
}

func (d *Datasource) oomFrames(ctx context.Context, _ queryModel, e runs.Entry, label string) (runFrames, error) {
	br := d.block(ctx, e, harvest.BlockOOM)
	if n, failed := readFailure(br.notices); failed && br.result.OOM.Node == nil && br.result.OOM.Pod == nil {
		return runFrames{}, d.prometheusDown(n)
	}
	block := engine.BlocksFunc(func(context.Context, harvest.Params) *harvest.Result {
		return &harvest.Result{OOM: br.result.OOM, Notices: append([]harvest.Notice(nil), br.notices...)}
	})
	r := engine.Run(ctx, engine.Input{Params: d.params(e, d.now().Unix()), Blocks: block, Kube: d.kubernetes(ctx, e)},
		engine.PartBlocks|engine.PartKubernetes).Harvest
	vals := r.OOM.Values()
	fields := make([]*data.Field, len(harvest.OOMKeys()))
	for i, k := range harvest.OOMKeys() {
		fields[i] = configured(data.NewField(k, nil, []*int64{vals[i]}), withPrefix(label, oomDisplay[k]), unitNone)
	}
	frame := numericWide(data.NewFrame(frameName("oom events", label), fields...))
	return runFrames{frames: []*data.Frame{frame}, queries: br.queries, notices: r.Notices}, nil
}
