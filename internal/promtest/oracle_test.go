package promtest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/simrun"
)

// These tests hold simrun's replay of Prometheus arithmetic (the helpers
// other packages derive expected values with) against the real Prometheus.

func selector(e simrun.ExportedSeries) string {
	keys := make([]string, 0, len(e.Labels))
	for k := range e.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(e.Labels[k])
	}
	return e.Name + "{" + strings.Join(parts, ",") + "}"
}

func sameFloat(a, b, rel float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestOracleInstantLookback(t *testing.T) {
	run, srv := cache.Prometheus(t, "ladder")
	tr := run.Truth
	var picks []simrun.ExportedSeries
	for _, p := range tr.Pods {
		if p.Worker && p.Died > tr.Start && p.Died < tr.End {
			picks = append(picks, tr.Series(simrun.FamCPUUsage, map[string]string{"pod": p.Name, "container": simrun.WorkerContainer})...)
		}
	}
	for _, e := range tr.Series(simrun.FamSampledActors, map[string]string{"instance": tr.Collectors[0]}) {
		if math.IsNaN(e.Samples[len(e.Samples)-1].V) {
			picks = append(picks, e) // ends with a staleness NaN
		}
	}
	picks = append(picks, tr.Series(simrun.FamUsers, nil)...) // spans the scrape gap
	if len(picks) < 3 {
		t.Fatalf("only %d series picked", len(picks))
	}
	n := 0
	for _, e := range picks {
		last := e.Samples[len(e.Samples)-1].T
		times := []int64{last, last + 1, last + 299, last + 300, last + 301, e.Samples[0].T - 1, e.Samples[1].T - 1}
		times = append(times, tr.Start+2400+60, tr.Start+2499) // inside the scrape gap
		for _, at := range times {
			got, err := srv.Query(ctx(t), selector(e), at)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := e.At(at, simrun.DefaultLookback)
			n++
			if ok != (len(got) == 1) {
				t.Errorf("%s at %d: Prometheus has %d results, oracle ok=%v", e.Key(), at, len(got), ok)
				continue
			}
			if ok && !sameFloat(got[0].Samples[0].V, want, 0) {
				t.Errorf("%s at %d: Prometheus %v, oracle %v", e.Key(), at, got[0].Samples[0].V, want)
			}
		}
	}
	t.Logf("%d instant-value comparisons", n)
}

func TestOracleRate(t *testing.T) {
	for _, name := range []string{"ladder", "steady"} {
		t.Run(name, func(t *testing.T) {
			run, srv := cache.Prometheus(t, name)
			tr := run.Truth
			var picks []simrun.ExportedSeries
			for _, e := range tr.Series(simrun.PressureFamily("cpu", "waiting"), nil) {
				if e.Labels["container"] == "node" || (strings.HasPrefix(e.Labels["pod"], "benchmark-ateom") && e.Labels["container"] == "") {
					picks = append(picks, e)
				}
			}
			picks = append(picks, tr.Series(simrun.FamCPUUsage, map[string]string{"container": simrun.WorkerContainer})...)
			from, to := tr.Start-120, tr.End+120
			n := 0
			for _, e := range picks {
				got, err := srv.QueryRange(ctx(t), "rate("+selector(e)+"[1m])", from, to, 10)
				if err != nil {
					t.Fatal(err)
				}
				have := map[int64]float64{}
				for _, g := range got {
					for _, s := range g.Samples {
						have[s.TMs/1000] = s.V
					}
				}
				for at := from; at <= to; at += 10 {
					want, ok := e.Rate(at, 60)
					g, gok := have[at]
					n++
					if ok != gok || (ok && !sameFloat(g, want, 0)) {
						t.Errorf("%s at %d: Prometheus (%v, %v), oracle (%v, %v)", e.Key(), at, g, gok, want, ok)
					}
				}
			}
			t.Logf("%d rate comparisons over %d series", n, len(picks))
		})
	}
}

func TestOracleWindowQuantileAndGrowth(t *testing.T) {
	run, srv := cache.Prometheus(t, "demo")
	tr := run.Truth
	A, B := tr.SteadyStart+tr.Shift, tr.SteadyEnd+tr.Shift
	restarted := map[string]bool{}
	for _, r := range tr.Restarts {
		restarted[r.Atelet] = true
	}
	n := 0
	for _, node := range tr.Nodes {
		if node.Atelet == "" || restarted[node.Atelet] {
			continue
		}
		for _, fam := range []string{simrun.FamSnapshotSize, simrun.FamCheckpoint} {
			match := map[string]string{"exported_instance": node.Atelet, "instance": tr.Collectors[0]}
			sel := fmt.Sprintf("%s_bucket{exported_instance=%q,instance=%q", fam, node.Atelet, tr.Collectors[0])
			if fam == simrun.FamSnapshotSize {
				match["file_name"] = "pages.img"
				sel += `,file_name="pages.img"}`
			} else {
				match["ate_snapshot_phase"] = "total"
				sel += `,ate_snapshot_phase="total"}`
			}
			byLE := map[float64]float64{}
			for _, e := range tr.Series(fam+"_bucket", match) {
				g, _, _ := e.Growth(A, B)
				le, _ := strconv.ParseFloat(e.Labels["le"], 64)
				byLE[le] += g
				vA, okA := e.At(A, simrun.DefaultLookback)
				vB, okB := e.At(B, simrun.DefaultLookback)
				if okA && okB {
					// No restart: growth is v_B - v_A, as Prometheus computes it.
					got, err := srv.Query(ctx(t), fmt.Sprintf("%s - %s @ %d", selector(e), selector(e), A), B)
					if err != nil {
						t.Fatal(err)
					}
					n++
					if len(got) != 1 || got[0].Samples[0].V != g || g != vB-vA {
						t.Errorf("%s: Prometheus %v, oracle growth %v", e.Key(), got, g)
					}
				}
			}
			var buckets []simrun.Bucket
			for le, c := range byLE {
				buckets = append(buckets, simrun.Bucket{UpperBound: le, Count: c})
			}
			for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
				query := fmt.Sprintf("histogram_quantile(%g, sum by (le) (%s) - sum by (le) (%s @ %d))", q, sel, sel, A)
				got, err := srv.Query(ctx(t), query, B)
				if err != nil {
					t.Fatal(err)
				}
				want := simrun.HistogramQuantile(q, buckets)
				n++
				if len(got) != 1 || !sameFloat(got[0].Samples[0].V, want, 1e-12) {
					t.Errorf("%s q=%v: Prometheus %v, oracle %v", sel, q, got, want)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d comparisons", n)
	}
	t.Logf("%d window growth/quantile comparisons", n)
}
