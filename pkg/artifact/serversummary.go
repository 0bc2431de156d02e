package artifact

import (
	"math"
	"time"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

// ServerMetadata is the metadata block of server_summary.json.
type ServerMetadata struct {
	TestName, Tag string
	PromURL       string // as configured, without credentials (the caller redacts)
	Start, End    int64
	SteadyStart   int64
	SteadyEnd     int64
	LagS          int64
}

// DataTimestamp is the run start as YYYY-MM-DDTHH:MM:SSZ (UTC): the
// metadata's data_timestamp and the stats.jsonl rows' timestamp.
func DataTimestamp(start int64) string {
	return time.Unix(start, 0).UTC().Format("2006-01-02T15:04:05Z")
}

// count writes a gauge-derived count (busy_workers, total_workers,
// active_actors) as an integer when it is integral, as the spec writes
// counts; a fractional gauge value stays a float rather than being truncated.
func count(x float64) any {
	if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return int64(x)
	}
	return x
}

func summaryObject(s percentile.Summary) Object {
	v := s.Values()
	o := make(Object, len(percentile.Keys()))
	for i, k := range percentile.Keys() {
		o[i] = Field{k, v[i]}
	}
	return o
}

func wsObject(b *harvest.WSBlock) Object {
	ts := make([]any, len(b.Timeseries))
	for i, p := range b.Timeseries {
		ts[i] = Object{{"timestamp", p.Timestamp}, {"total_gb", p.TotalGB}, {"max_gb", p.MaxGB}}
	}
	return Object{{"summary", summaryObject(b.Summary)}, {"count", b.Count}, {"timeseries", ts}}
}

func psiObject(b *harvest.PSI, countKey string) Object {
	return Object{
		{"cpu_stall_pct", summaryObject(b.CPU.Summary)},
		{"mem_stall_pct", summaryObject(b.Mem.Summary)},
		{"io_stall_pct", summaryObject(b.IO.Summary)},
		{countKey, b.Count},
	}
}

// ServerSummary is server_summary.json as an ordered object, keys exactly
// in the spec's order.
func ServerSummary(md ServerMetadata, r *harvest.Result) Object {
	packTS := make([]any, len(r.Packing.Timeseries))
	for i, p := range r.Packing.Timeseries {
		packTS[i] = Object{{"timestamp", p.Timestamp}, {"busy_workers", count(p.Busy)}, {"total_workers", count(p.Total)}, {"packing_ratio", p.Ratio}}
	}
	snap := Object{}
	for _, f := range r.Snapshots.Fields() {
		if f.Key == "checkpoints_in_window" || f.Key == "checkpoints_cumulative" {
			snap = append(snap, Field{f.Key, f.Int})
		} else {
			snap = append(snap, Field{f.Key, f.Float})
		}
	}
	actTS := make([]any, len(r.ActiveActors.Timeseries))
	for i, p := range r.ActiveActors.Timeseries {
		actTS[i] = Object{{"timestamp", p.Timestamp}, {"active_actors", count(p.ActiveActors)}, {"active_atelets", p.ActiveAtelets}}
	}
	ws := Object{}
	for _, name := range harvest.WorkingSetBlocks() {
		ws = append(ws, Field{name, wsObject(r.WorkingSet.Block(name))})
	}
	oom := Object{}
	for i, k := range harvest.OOMKeys() {
		oom = append(oom, Field{k, r.OOM.Values()[i]})
	}
	return Object{
		{"metadata", Object{
			{"test_name", md.TestName}, {"tag", md.Tag}, {"data_timestamp", DataTimestamp(md.Start)},
			{"prom_url", md.PromURL}, {"start_ts", md.Start}, {"end_ts", md.End},
			{"steady_start_ts", md.SteadyStart}, {"steady_end_ts", md.SteadyEnd}, {"atelet_lag_s", md.LagS},
		}},
		{"cluster_packing", Object{{"summary", summaryObject(r.Packing.Summary)}, {"timeseries", packTS}}},
		{"node_psi", psiObject(&r.NodePSI, "nodes")},
		{"pod_psi", psiObject(&r.PodPSI, "pods")},
		{"snapshots", snap},
		{"active_actors", Object{{"summary", summaryObject(r.ActiveActors.Summary)}, {"atelets", r.ActiveActors.Atelets}, {"timeseries", actTS}}},
		{"working_set", ws},
		{"oom_events", oom},
	}
}

// ServerSummaryJSON is the bytes of server_summary.json: Python's
// json.dumps(indent=2) plus a trailing newline.
func ServerSummaryJSON(md ServerMetadata, r *harvest.Result) ([]byte, error) {
	b, err := MarshalIndent(ServerSummary(md, r))
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Measurement is one flat server_summary key with its typed value: Float
// for figures, Int for counts (Count); both nil is null.
type Measurement struct {
	Key   string
	Count bool
	Float *float64
	Int   *int64
}

// Number is the value as a float (counts converted), nil when null.
func (m Measurement) Number() *float64 {
	if m.Int != nil {
		v := float64(*m.Int)
		return &v
	}
	return m.Float
}

// ServerSummaryValues are the 80 flat measurements of the server_summary
// row, in the spec's order, as typed values.
func ServerSummaryValues(r *harvest.Result) []Measurement {
	m := make([]Measurement, 0, 80)
	f := func(k string, v *float64) { m = append(m, Measurement{Key: k, Float: v}) }
	i := func(k string, v *int64) { m = append(m, Measurement{Key: k, Count: true, Int: v}) }
	ps := [4]string{"p50", "p90", "p95", "p99"}
	for _, p := range ps {
		f("cluster_packing_"+p, pickP(r.Packing.Summary, p))
	}
	for _, res := range harvest.PSIResources() {
		for _, p := range ps {
			f("psi_"+res.Key+"_stall_"+p, pickP(r.NodePSI.Resource(res.Key).Summary, p))
			f("pod_psi_"+res.Key+"_stall_"+p, pickP(r.PodPSI.Resource(res.Key).Summary, p))
		}
	}
	s := &r.Snapshots
	f("snapshot_size_p50_mb", s.SizeP50MB)
	f("snapshot_size_p90_mb", s.SizeP90MB)
	f("snapshot_size_p95_mb", s.SizeP95MB)
	f("snapshot_size_p99_mb", s.SizeP99MB)
	f("snapshot_size_avg_mb", s.SizeAvgMB)
	i("checkpoints_in_window", s.CheckpointsInWindow)
	f("restore_p50_s", s.RestoreP50S)
	f("restore_p90_s", s.RestoreP90S)
	f("restore_p95_s", s.RestoreP95S)
	f("restore_p99_s", s.RestoreP99S)
	f("restore_mean_s", s.RestoreMeanS)
	f("checkpoint_p50_s", s.CheckpointP50S)
	f("checkpoint_p90_s", s.CheckpointP90S)
	f("checkpoint_p95_s", s.CheckpointP95S)
	f("checkpoint_p99_s", s.CheckpointP99S)
	f("checkpoint_mean_s", s.CheckpointMeanS)
	f("checkpoint_mb_s", s.CheckpointMBs)
	for _, p := range ps {
		f("active_actors_"+p, pickP(r.ActiveActors.Summary, p))
	}
	for _, name := range harvest.WorkingSetBlocks() {
		b := r.WorkingSet.Block(name)
		for _, p := range []string{"p50", "p90", "p95", "p99", "max"} {
			f("working_set_"+name+"_"+p+"_gb", pickP(b.Summary, p))
		}
	}
	for k, key := range harvest.OOMKeys() {
		i("oom_events_"+key, r.OOM.Values()[k])
	}
	return m
}

func pickP(s percentile.Summary, p string) *float64 { return s.Get(p) }

// ServerSummaryMeasurements are the 80 flat measurements of the
// server_summary row, in the spec's order; values are strings or nil.
func ServerSummaryMeasurements(r *harvest.Result) Object {
	vs := ServerSummaryValues(r)
	m := make(Object, len(vs))
	for j, v := range vs {
		if v.Int != nil {
			m[j] = Field{v.Key, IntMeasurement(v.Int)}
		} else {
			m[j] = Field{v.Key, FloatMeasurement(v.Float)}
		}
	}
	return m
}

// ServerSummaryRow is the server_summary row of stats.jsonl.
func ServerSummaryRow(md ServerMetadata, r *harvest.Result) Row {
	return Row{
		Timestamp:    DataTimestamp(md.Start),
		Tag:          md.Tag,
		TestName:     md.TestName,
		Metric:       MetricServerSummary,
		Measurements: ServerSummaryMeasurements(r),
	}
}
