package harvest_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/substrate/density/internal/oracle"
	"github.com/substrate/density/pkg/harvest"
)

// Block prefixes of flatten's paths, one sub-test each.
var blockPrefixes = []struct{ name, prefix string }{
	{"cluster_packing", "cluster_packing."},
	{"node_psi", "node_psi."},
	{"pod_psi", "pod_psi."},
	{"snapshots", "snapshots."},
	{"active_actors", "active_actors."},
	{"working_set.node", "working_set.node."},
	{"working_set.worker", "working_set.worker."},
	{"working_set.atelet", "working_set.atelet."},
	{"working_set.actor", "working_set.actor."},
	{"working_set.per_actor", "working_set.per_actor."},
	{"oom_events", "oom_events."},
}

// oracleScenarios are the scenarios with per-sample truth.
var oracleScenarios = []string{"steady", "redeploy", "ladder", "no-atelet", "no-history", "demo"}

// TestHarvestMatchesOracle: every key of every block equals the oracle's,
// exactly (after the spec's rounding), against a real Prometheus 2.42.
func TestHarvestMatchesOracle(t *testing.T) {
	for _, name := range oracleScenarios {
		t.Run(name, func(t *testing.T) {
			e := loadScenario(t, name)
			got := flatten(harvestOf(t, e.prom(t), e.params()))
			want := flatten(oracle.Expect(e.store, e.params()))
			for _, b := range blockPrefixes {
				t.Run(b.name, func(t *testing.T) {
					diffKV(t, name+" "+b.name, only(got, b.prefix), only(want, b.prefix))
				})
			}
		})
	}
}

// TestHarvestVictoriaMetrics runs the same harvest against VictoriaMetrics
// loaded with the same samples.
//
// Where the two engines' semantics agree the numbers must be identical:
// per-series counter growth read with instant queries at A and B plus
// resets() and raw samples (snapshots, oom_events), client-side window
// quantiles, and gauges read at steps where every series is scraped
// regularly (steady: packing, active actors, working sets).
//
// Where they differ inherently the difference is asserted:
//   - rate(): Prometheus extrapolates to the window edges
//     (extrapolatedRate); VictoriaMetrics does not (it takes the sample
//     before the window as the base), so PSI percentiles differ slightly;
//     they must differ somewhere, with p50 and avg within 5 % of Prometheus's.
//   - lookback: Prometheus 2.42 answers a series for 5 minutes after its
//     last sample; VictoriaMetrics treats a series as gone after about two
//     scrape intervals. Across the ladder's 130 s scrape gap Prometheus still
//     reports active actors, VictoriaMetrics skips those steps.
func TestHarvestVictoriaMetrics(t *testing.T) {
	for _, name := range []string{"steady", "redeploy", "ladder", "no-atelet", "demo"} {
		t.Run(name, func(t *testing.T) {
			e := loadScenario(t, name)
			res := harvestOf(t, e.vm(t), e.params())
			vm := flatten(res)
			want := flatten(oracle.Expect(e.store, e.params()))
			defer func() {
				if t.Failed() {
					for _, n := range res.Notices {
						t.Logf("notice: %s %s: %s", n.Block, n.Field, n.Reason)
					}
				}
			}()
			t.Run("counter growth and window quantiles equal the oracle", func(t *testing.T) {
				diffKV(t, name, only(vm, "snapshots.", "oom_events."), only(want, "snapshots.", "oom_events."))
			})
			t.Run("series counts equal the oracle", func(t *testing.T) {
				var keys []string
				for _, b := range []string{"node", "worker", "atelet", "actor", "per_actor"} {
					keys = append(keys, "working_set."+b+".count")
				}
				keys = append(keys, "active_actors.atelets", "node_psi.nodes", "pod_psi.pods")
				diffKV(t, name, exact(vm, keys...), exact(want, keys...))
			})
			if name == "steady" {
				t.Run("gauges equal the oracle on a regular scrape", func(t *testing.T) {
					p := []string{"cluster_packing.", "active_actors.", "working_set."}
					diffKV(t, name, only(vm, p...), only(want, p...))
				})
				t.Run("PSI differs by rate extrapolation only", func(t *testing.T) {
					prom := flatten(harvestOf(t, e.prom(t), e.params()))
					pv, vv := toMap(only(prom, "node_psi.", "pod_psi.")), toMap(only(vm, "node_psi.", "pod_psi."))
					differ := 0
					for k, p := range pv {
						if strings.HasSuffix(k, ".nodes") || strings.HasSuffix(k, ".pods") {
							continue
						}
						pf, _ := strconv.ParseFloat(p, 64)
						vf, _ := strconv.ParseFloat(vv[k], 64)
						if p != vv[k] {
							differ++
						}
						// single extremes move more; the central figures stay close
						central := strings.HasSuffix(k, ".p50") || strings.HasSuffix(k, ".avg")
						if central && math.Abs(vf-pf) > 0.05*math.Abs(pf) {
							t.Errorf("%s: VictoriaMetrics %s, Prometheus %s: more than 5 %% apart", k, vv[k], p)
						}
					}
					if differ == 0 {
						t.Errorf("PSI identical on both engines: rate extrapolation should make them differ")
					}
				})
			}
			if name == "ladder" {
				t.Run("scrape gap: Prometheus bridges it with the 5 min lookback, VictoriaMetrics does not", func(t *testing.T) {
					prom := harvestOf(t, e.prom(t), e.params())
					vmr := harvestOf(t, e.vm(t), e.params())
					gapFrom, gapTo := e.truth.Start+e.sc.ScrapeGap.FromS, e.truth.Start+e.sc.ScrapeGap.ToS
					in := func(r *harvest.Result) int {
						n := 0
						for _, p := range r.ActiveActors.Timeseries {
							if p.Timestamp >= gapFrom+30 && p.Timestamp < gapTo {
								n++
							}
						}
						return n
					}
					if pn, vn := in(prom), in(vmr); pn == 0 || vn >= pn {
						t.Errorf("active_actors points inside the gap: Prometheus %d, VictoriaMetrics %d; want Prometheus > VictoriaMetrics", pn, vn)
					}
				})
			}
		})
	}
}

func exact(kvs []kv, paths ...string) []kv {
	set := map[string]bool{}
	for _, p := range paths {
		set[p] = true
	}
	var out []kv
	for _, x := range kvs {
		if set[x.path] {
			out = append(out, x)
		}
	}
	return out
}

func toMap(kvs []kv) map[string]string {
	m := map[string]string{}
	for _, x := range kvs {
		m[x.path] = x.val
	}
	return m
}

// TestPerBlockFunctionsEqualHarvest: the per-block entry points (one per
// datasource query type) compute the same blocks as the full harvest.
func TestPerBlockFunctionsEqualHarvest(t *testing.T) {
	e := loadScenario(t, "redeploy")
	c, p, ctx := e.prom(t), e.params(), context.Background()
	full := harvestOf(t, c, p)
	var r harvest.Result
	r.Packing, _ = harvest.HarvestPacking(ctx, c, p)
	r.NodePSI, _ = harvest.HarvestNodePSI(ctx, c, p)
	r.PodPSI, _ = harvest.HarvestPodPSI(ctx, c, p)
	r.Snapshots, _ = harvest.HarvestSnapshots(ctx, c, p)
	r.ActiveActors, _ = harvest.HarvestActiveActors(ctx, c, p)
	r.WorkingSet, _ = harvest.HarvestWorkingSet(ctx, c, p)
	r.OOM, _ = harvest.HarvestOOM(ctx, c, p)
	diffKV(t, "per-block vs Harvest", flatten(&r), flatten(full))
	if len(full.Queries) < 30 {
		t.Errorf("%d queries recorded, want every read (>= 30)", len(full.Queries))
	}
}

// TestLadderZeroWorkerSamples: before the pool has workers the ratio is
// null (not 0) and those points stay out of the summary.
func TestLadderZeroWorkerSamples(t *testing.T) {
	e := loadScenario(t, "ladder")
	res := harvestOf(t, e.prom(t), e.params())
	zero := 0
	for _, pt := range res.Packing.Timeseries {
		if pt.Total == 0 {
			zero++
			if pt.Ratio != nil {
				t.Errorf("t=%d: total 0 but ratio %v", pt.Timestamp, *pt.Ratio)
			}
		}
	}
	if zero == 0 {
		t.Errorf("no zero-worker sample: the ladder scenario no longer starts with an empty pool")
	}
}
