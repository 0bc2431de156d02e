package plugin

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// snapshotDisplay turns a key into a legend: size_p50_mb -> "Size p50".
func snapshotDisplay(key string) string {
	if key == "checkpoint_mb_s" {
		return "Checkpoint throughput"
	}
	k := strings.TrimSuffix(strings.TrimSuffix(key, "_mb"), "_s")
	w := strings.ReplaceAll(k, "_", " ")
	return strings.ToUpper(w[:1]) + w[1:]
}

// handleSnapshots answers `snapshots`: one row whose fields are named
// exactly as the 18 snapshot keys (sizes in MiB, durations in s,
// throughput in MiB/s, counts as integers; null stays null).
func (d *Datasource) handleSnapshots(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, nil, d.snapshotFrames)
}

func (d *Datasource) snapshotFrames(ctx context.Context, _ queryModel, e runs.Entry, label string) (runFrames, error) {
	br := d.block(ctx, e, harvest.BlockSnapshots)
	s := br.result.Snapshots
	fields := s.Fields()
	allNull := true
	out := make([]*data.Field, len(fields))
	for i, f := range fields {
		var fld *data.Field
		if f.Unit == "" { // the two checkpoint counts
			fld = data.NewField(f.Key, nil, []*int64{f.Int})
		} else {
			fld = data.NewField(f.Key, nil, []*float64{f.Float})
		}
		allNull = allNull && f.Float == nil && f.Int == nil
		out[i] = configured(fld, withPrefix(label, snapshotDisplay(f.Key)), snapshotUnits[f.Unit])
	}
	if n, failed := readFailure(br.notices); failed && allNull {
		return runFrames{}, d.prometheusDown(n)
	}
	frame := numericWide(data.NewFrame(frameName("snapshots", label), out...))
	return runFrames{frames: []*data.Frame{frame}, queries: br.queries, notices: br.notices}, nil
}
