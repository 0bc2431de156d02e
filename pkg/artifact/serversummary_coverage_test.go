package artifact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

// These tests pin every key of server_summary.json and every value of the
// flat server_summary row against server-telemetry.md, written out here by
// hand from the spec text (not derived from the code under test).

// shape lists the key paths of a decoded JSON value in document order with
// the JSON kind of each leaf: "a.b:int", "a.ts[]:…" (the first element of
// a non-empty list), "a.ts:[]" (an empty list).
func shape(v any, path string, out *[]string) {
	switch x := v.(type) {
	case Object:
		if len(x) == 0 {
			*out = append(*out, path+":{}")
		}
		for _, f := range x {
			p := f.Key
			if path != "" {
				p = path + "." + f.Key
			}
			shape(f.Value, p, out)
		}
	case []any:
		if len(x) == 0 {
			*out = append(*out, path+":[]")
			return
		}
		shape(x[0], path+"[]", out)
	case nil:
		*out = append(*out, path+":null")
	case int64, Number:
		*out = append(*out, path+":int")
	case float64:
		*out = append(*out, path+":float")
	case string:
		*out = append(*out, path+":str")
	case bool:
		*out = append(*out, path+":bool")
	default:
		*out = append(*out, fmt.Sprintf("%s:%T", path, v))
	}
}

// specShape is server_summary.json's key tree from the spec's block
// listing. kind(k) gives the JSON kind of a leaf in the populated result;
// empty is true for the all-null result (no series anywhere).
func specShape(empty bool) []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	num := func(kind string) string {
		if empty {
			return "null"
		}
		return kind
	}
	P := func(prefix string) {
		for _, k := range []string{"min", "p50", "p90", "p95", "p99", "max", "avg"} {
			add(prefix + "." + k + ":" + num("float"))
		}
	}
	add("metadata.test_name:str", "metadata.tag:str", "metadata.data_timestamp:str", "metadata.prom_url:str",
		"metadata.start_ts:int", "metadata.end_ts:int", "metadata.steady_start_ts:int", "metadata.steady_end_ts:int",
		"metadata.atelet_lag_s:int")
	P("cluster_packing.summary")
	if empty {
		add("cluster_packing.timeseries:[]")
	} else {
		add("cluster_packing.timeseries[].timestamp:int", "cluster_packing.timeseries[].busy_workers:int",
			"cluster_packing.timeseries[].total_workers:int", "cluster_packing.timeseries[].packing_ratio:float")
	}
	for _, b := range []struct{ name, count string }{{"node_psi", "nodes"}, {"pod_psi", "pods"}} {
		P(b.name + ".cpu_stall_pct")
		P(b.name + ".mem_stall_pct")
		P(b.name + ".io_stall_pct")
		add(b.name + "." + b.count + ":" + num("int"))
	}
	for _, k := range []string{"size_p50_mb", "size_p90_mb", "size_p95_mb", "size_p99_mb", "size_avg_mb"} {
		add("snapshots." + k + ":" + num("float"))
	}
	add("snapshots.checkpoints_in_window:"+num("int"), "snapshots.checkpoints_cumulative:"+num("int"))
	for _, op := range []string{"restore", "checkpoint"} {
		for _, k := range []string{"p50", "p90", "p95", "p99"} {
			add("snapshots." + op + "_" + k + "_s:" + num("float"))
		}
		add("snapshots." + op + "_mean_s:" + num("float"))
	}
	add("snapshots.checkpoint_mb_s:" + num("float"))
	P("active_actors.summary")
	add("active_actors.atelets:" + num("int"))
	if empty {
		add("active_actors.timeseries:[]")
	} else {
		add("active_actors.timeseries[].timestamp:int", "active_actors.timeseries[].active_actors:int",
			"active_actors.timeseries[].active_atelets:int")
	}
	for _, w := range []string{"node", "worker", "atelet", "actor", "per_actor"} {
		P("working_set." + w + ".summary")
		add("working_set." + w + ".count:" + num("int"))
		if empty {
			add("working_set." + w + ".timeseries:[]")
		} else {
			add("working_set."+w+".timeseries[].timestamp:int", "working_set."+w+".timeseries[].total_gb:float",
				"working_set."+w+".timeseries[].max_gb:float")
		}
	}
	for _, k := range []string{"node", "pod", "worker_restarts", "worker_oomkilled_pods", "evicted", "worker_pods_lost"} {
		add("oom_events." + k + ":" + num("int"))
	}
	return out
}

// fullResult has every field measured, every timeseries non-empty.
func fullResult() *harvest.Result {
	s := func(base float64) percentile.Summary {
		return percentile.Summary{Min: fp(base), P50: fp(base + 0.25), P90: fp(base + 0.5), P95: fp(base + 0.75), P99: fp(base + 1.25), Max: fp(base + 1.5), Avg: fp(base + 0.125)}
	}
	r := &harvest.Result{}
	r.Packing = harvest.Packing{Summary: s(0.5), Timeseries: []harvest.PackingPoint{{Timestamp: 1710237600, Busy: 3, Total: 4, Ratio: fp(0.75)}}}
	for i, b := range []*harvest.PSI{&r.NodePSI, &r.PodPSI} {
		b.CPU.Summary, b.Mem.Summary, b.IO.Summary, b.Count = s(1.5), s(2.5), s(3.5), ip(3+i)
	}
	sn := &r.Snapshots
	for i, p := range []**float64{&sn.SizeP50MB, &sn.SizeP90MB, &sn.SizeP95MB, &sn.SizeP99MB, &sn.SizeAvgMB,
		&sn.RestoreP50S, &sn.RestoreP90S, &sn.RestoreP95S, &sn.RestoreP99S, &sn.RestoreMeanS,
		&sn.CheckpointP50S, &sn.CheckpointP90S, &sn.CheckpointP95S, &sn.CheckpointP99S, &sn.CheckpointMeanS, &sn.CheckpointMBs} {
		*p = fp(float64(i) + 0.5)
	}
	sn.CheckpointsInWindow, sn.CheckpointsCumulative = i64p(911), i64p(992)
	r.ActiveActors = harvest.ActiveActors{Summary: s(240), Atelets: ip(3), Timeseries: []harvest.ActorsPoint{{Timestamp: 1710237565, ActiveActors: 240, ActiveAtelets: 3}}}
	for i, name := range harvest.WorkingSetBlocks {
		*r.WorkingSet.Block(name) = harvest.WSBlock{Summary: s(float64(i) + 4.5), Count: ip(i + 1),
			Timeseries: []harvest.WSPoint{{Timestamp: 1710237600, TotalGB: 12.5, MaxGB: 3.25}}}
	}
	r.OOM = harvest.OOM{Node: i64p(1), Pod: i64p(2), WorkerRestarts: i64p(3), WorkerOOMKilledPods: i64p(4), Evicted: i64p(5), WorkerPodsLost: i64p(6)}
	return r
}

// emptyResult is what a harvest that measured nothing returns: all-null
// summaries, null counts, empty timeseries (never JSON null, never zeros).
func emptyResult() *harvest.Result {
	r := &harvest.Result{}
	r.Packing.Timeseries = []harvest.PackingPoint{}
	r.ActiveActors.Timeseries = []harvest.ActorsPoint{}
	for _, name := range harvest.WorkingSetBlocks {
		r.WorkingSet.Block(name).Timeseries = []harvest.WSPoint{}
	}
	return r
}

func TestCoverageServerSummaryKeyTree(t *testing.T) {
	md := ServerMetadata{TestName: "actor-density", Tag: "c0ffee1", PromURL: "http://prom:9090", Start: 1710237600, End: 1710240585,
		SteadyStart: 1710238139, SteadyEnd: 1710240315, LagS: 70}
	for _, tc := range []struct {
		name  string
		res   *harvest.Result
		empty bool
	}{{"every field measured", fullResult(), false}, {"nothing measured", emptyResult(), true}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ServerSummaryJSON(md, tc.res)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(b), "\n}\n") || !strings.HasPrefix(string(b), "{\n  \"metadata\": {\n    \"test_name\"") {
				t.Errorf("not indent=2 with a trailing newline: %.60q … %q", b, b[len(b)-4:])
			}
			v, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			shape(v, "", &got)
			want := specShape(tc.empty)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for i := 0; i < max(len(got), len(want)); i++ {
					var g, w string
					if i < len(got) {
						g = got[i]
					}
					if i < len(want) {
						w = want[i]
					}
					if g != w {
						t.Errorf("path %d: got %q, spec %q", i, g, w)
					}
				}
			}
			top := v.(Object)
			md, _ := top.Get("metadata")
			if ts, _ := md.(Object).Get("data_timestamp"); ts != "2024-03-12T10:00:00Z" {
				t.Errorf("data_timestamp %v", ts)
			}
			snaps, _ := top.Get("snapshots")
			if n := len(snaps.(Object)); n != 18 {
				t.Errorf("%d snapshot keys, want 18", n)
			}
		})
	}
}

// TestCoverageFlatRowValues gives every measured field of a Result its own
// value and checks that each of the 80 flat keys carries the value of the
// field the spec names for it (e.g. psi_mem_stall_p90 is node PSI memory
// p90, pod_psi_mem_stall_p90 the pod one).
func TestCoverageFlatRowValues(t *testing.T) {
	vals := map[string]string{} // source name -> printed value
	next := 0.0
	src := func(name string) *float64 {
		next++
		v := next + 0.5
		vals[name] = FormatFloat(v)
		return &v
	}
	isrc := func(name string) *int64 {
		next++
		v := int64(next) * 1000
		vals[name] = fmt.Sprint(v)
		return &v
	}
	sum := func(prefix string) percentile.Summary {
		return percentile.Summary{Min: src(prefix + ".min"), P50: src(prefix + ".p50"), P90: src(prefix + ".p90"), P95: src(prefix + ".p95"),
			P99: src(prefix + ".p99"), Max: src(prefix + ".max"), Avg: src(prefix + ".avg")}
	}
	r := &harvest.Result{}
	r.Packing.Summary = sum("packing")
	r.NodePSI.CPU.Summary, r.NodePSI.Mem.Summary, r.NodePSI.IO.Summary = sum("node.cpu"), sum("node.mem"), sum("node.io")
	r.PodPSI.CPU.Summary, r.PodPSI.Mem.Summary, r.PodPSI.IO.Summary = sum("pod.cpu"), sum("pod.mem"), sum("pod.io")
	s := &r.Snapshots
	s.SizeP50MB, s.SizeP90MB, s.SizeP95MB, s.SizeP99MB = src("size_p50"), src("size_p90"), src("size_p95"), src("size_p99")
	s.SizeAvgMB = src("size_avg")
	s.CheckpointsInWindow, s.CheckpointsCumulative = isrc("in_window"), isrc("cumulative")
	s.RestoreP50S, s.RestoreP90S, s.RestoreP95S, s.RestoreP99S, s.RestoreMeanS = src("restore_p50"), src("restore_p90"), src("restore_p95"), src("restore_p99"), src("restore_mean")
	s.CheckpointP50S, s.CheckpointP90S, s.CheckpointP95S, s.CheckpointP99S, s.CheckpointMeanS = src("ckpt_p50"), src("ckpt_p90"), src("ckpt_p95"), src("ckpt_p99"), src("ckpt_mean")
	s.CheckpointMBs = src("ckpt_mb_s")
	r.ActiveActors.Summary = sum("actors")
	r.WorkingSet.Node, r.WorkingSet.Worker = harvest.WSBlock{Summary: sum("ws.node")}, harvest.WSBlock{Summary: sum("ws.worker")}
	r.WorkingSet.Atelet, r.WorkingSet.Actor = harvest.WSBlock{Summary: sum("ws.atelet")}, harvest.WSBlock{Summary: sum("ws.actor")}
	r.WorkingSet.PerActor = harvest.WSBlock{Summary: sum("ws.per_actor")}
	r.OOM = harvest.OOM{Node: isrc("oom.node"), Pod: isrc("oom.pod"), WorkerRestarts: isrc("oom.restarts"),
		WorkerOOMKilledPods: isrc("oom.oomkilled"), Evicted: isrc("oom.evicted"), WorkerPodsLost: isrc("oom.lost")}

	// The spec's list, key -> source, in order.
	var want [][2]string
	w := func(key, source string) { want = append(want, [2]string{key, source}) }
	ps := []string{"p50", "p90", "p95", "p99"}
	for _, p := range ps {
		w("cluster_packing_"+p, "packing."+p)
	}
	for _, res := range []string{"cpu", "mem", "io"} {
		for _, p := range ps {
			w("psi_"+res+"_stall_"+p, "node."+res+"."+p)
			w("pod_psi_"+res+"_stall_"+p, "pod."+res+"."+p)
		}
	}
	for _, p := range ps {
		w("snapshot_size_"+p+"_mb", "size_"+p)
	}
	w("snapshot_size_avg_mb", "size_avg")
	w("checkpoints_in_window", "in_window")
	for _, p := range ps {
		w("restore_"+p+"_s", "restore_"+p)
	}
	w("restore_mean_s", "restore_mean")
	for _, p := range ps {
		w("checkpoint_"+p+"_s", "ckpt_"+p)
	}
	w("checkpoint_mean_s", "ckpt_mean")
	w("checkpoint_mb_s", "ckpt_mb_s")
	for _, p := range ps {
		w("active_actors_"+p, "actors."+p)
	}
	for _, b := range []string{"node", "worker", "atelet", "actor", "per_actor"} {
		for _, p := range []string{"p50", "p90", "p95", "p99", "max"} {
			w("working_set_"+b+"_"+p+"_gb", "ws."+b+"."+p)
		}
	}
	for _, f := range [][2]string{{"node", "oom.node"}, {"pod", "oom.pod"}, {"worker_restarts", "oom.restarts"},
		{"worker_oomkilled_pods", "oom.oomkilled"}, {"evicted", "oom.evicted"}, {"worker_pods_lost", "oom.lost"}} {
		w("oom_events_"+f[0], f[1])
	}
	if len(want) != 80 {
		t.Fatalf("spec list has %d keys, want 80", len(want))
	}

	m := ServerSummaryMeasurements(r)
	if len(m) != 80 {
		t.Fatalf("%d measurements, want 80", len(m))
	}
	for i, kv := range want {
		if m[i].Key != kv[0] {
			t.Errorf("key %d = %s, want %s", i, m[i].Key, kv[0])
			continue
		}
		got, ok := m[i].Value.(string)
		if !ok || got != vals[kv[1]] {
			t.Errorf("%s = %#v, want %q (from %s)", kv[0], m[i].Value, vals[kv[1]], kv[1])
		}
	}
	if _, ok := m.Get("checkpoints_cumulative"); ok {
		t.Error("checkpoints_cumulative is in server_summary.json only, not in the flat row")
	}
}
