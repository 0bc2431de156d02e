package harvest_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

// kv is one flattened leaf: a path such as "cluster_packing.summary.p50" and
// its value printed exactly ("null" for nil).
type kv struct{ path, val string }

func fv(x *float64) string {
	if x == nil {
		return "null"
	}
	return strconv.FormatFloat(*x, 'g', -1, 64)
}

func iv[T int | int64](x *T) string {
	if x == nil {
		return "null"
	}
	return strconv.FormatInt(int64(*x), 10)
}

func flatSummary(out *[]kv, prefix string, s percentile.Summary) {
	for i, k := range percentile.Keys() {
		*out = append(*out, kv{prefix + "." + k, fv(s.Values()[i])})
	}
}

func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// flatten lists every key of every block (metadata aside) with its value.
// Blocks can be restricted by name prefix.
func flatten(r *harvest.Result) []kv {
	var out []kv
	p := &out
	flatSummary(p, "cluster_packing.summary", r.Packing.Summary)
	for i, pt := range r.Packing.Timeseries {
		pre := fmt.Sprintf("cluster_packing.timeseries[%d]", i)
		out = append(out, kv{pre + ".timestamp", strconv.FormatInt(pt.Timestamp, 10)},
			kv{pre + ".busy_workers", g(pt.Busy)}, kv{pre + ".total_workers", g(pt.Total)}, kv{pre + ".packing_ratio", fv(pt.Ratio)})
	}
	out = append(out, kv{"cluster_packing.timeseries.len", strconv.Itoa(len(r.Packing.Timeseries))})
	for _, b := range []struct {
		name, count string
		psi         harvest.PSI
	}{{"node_psi", "nodes", r.NodePSI}, {"pod_psi", "pods", r.PodPSI}} {
		flatSummary(p, b.name+".cpu_stall_pct", b.psi.CPU.Summary)
		flatSummary(p, b.name+".mem_stall_pct", b.psi.Mem.Summary)
		flatSummary(p, b.name+".io_stall_pct", b.psi.IO.Summary)
		out = append(out, kv{b.name + "." + b.count, iv(b.psi.Count)})
	}
	for _, f := range r.Snapshots.Fields() {
		if f.Int != nil || f.Key == "checkpoints_in_window" || f.Key == "checkpoints_cumulative" {
			out = append(out, kv{"snapshots." + f.Key, iv(f.Int)})
		} else {
			out = append(out, kv{"snapshots." + f.Key, fv(f.Float)})
		}
	}
	flatSummary(p, "active_actors.summary", r.ActiveActors.Summary)
	out = append(out, kv{"active_actors.atelets", iv(r.ActiveActors.Atelets)},
		kv{"active_actors.timeseries.len", strconv.Itoa(len(r.ActiveActors.Timeseries))})
	for i, pt := range r.ActiveActors.Timeseries {
		pre := fmt.Sprintf("active_actors.timeseries[%d]", i)
		out = append(out, kv{pre + ".timestamp", strconv.FormatInt(pt.Timestamp, 10)},
			kv{pre + ".active_actors", g(pt.ActiveActors)}, kv{pre + ".active_atelets", strconv.Itoa(pt.ActiveAtelets)})
	}
	for _, name := range harvest.WorkingSetBlocks() {
		b := r.WorkingSet.Block(name)
		pre := "working_set." + name
		flatSummary(p, pre+".summary", b.Summary)
		out = append(out, kv{pre + ".count", iv(b.Count)}, kv{pre + ".timeseries.len", strconv.Itoa(len(b.Timeseries))})
		for i, pt := range b.Timeseries {
			tp := fmt.Sprintf("%s.timeseries[%d]", pre, i)
			out = append(out, kv{tp + ".timestamp", strconv.FormatInt(pt.Timestamp, 10)},
				kv{tp + ".total_gb", g(pt.TotalGB)}, kv{tp + ".max_gb", g(pt.MaxGB)})
		}
	}
	for i, k := range harvest.OOMKeys() {
		out = append(out, kv{"oom_events." + k, iv(r.OOM.Values()[i])})
	}
	return out
}

// only keeps the leaves whose path starts with one of prefixes.
func only(kvs []kv, prefixes ...string) []kv {
	var out []kv
	for _, x := range kvs {
		for _, p := range prefixes {
			if strings.HasPrefix(x.path, p) {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// diffKV reports every differing, missing or extra path (at most max lines).
func diffKV(t *testing.T, what string, got, want []kv) {
	t.Helper()
	gm, wm := map[string]string{}, map[string]string{}
	for _, x := range got {
		gm[x.path] = x.val
	}
	for _, x := range want {
		wm[x.path] = x.val
	}
	var lines []string
	for _, x := range want {
		if gv, ok := gm[x.path]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: missing, want %s", x.path, x.val))
		} else if gv != x.val {
			lines = append(lines, fmt.Sprintf("  %s: got %s, want %s", x.path, gv, x.val))
		}
	}
	for _, x := range got {
		if _, ok := wm[x.path]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: extra (got %s)", x.path, x.val))
		}
	}
	if len(lines) == 0 {
		return
	}
	sort.Strings(lines)
	n := len(lines)
	if n > 40 {
		lines = append(lines[:40], fmt.Sprintf("  ... and %d more", n-40))
	}
	t.Errorf("%s: %d differences:\n%s", what, n, strings.Join(lines, "\n"))
}
