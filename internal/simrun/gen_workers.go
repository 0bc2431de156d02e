package simrun

import (
	"math"
)

func (g *gen) users() {
	w := g.w
	g.o.family(FamUsers, "gauge")
	ls := []Label{{"job", "locust"}, {"instance", w.nodes[w.sysNode].ip + "41:9646"}}
	g.o.series(FamUsers, ls, present(g.locustT, false, func(t int64) (float64, bool) {
		return float64(w.usersAt(t)), true
	}))
}

// unrelatedStates is the other pool's slow random walk (4 workers).
func (g *gen) unrelatedStates(t int64) (idle, partial, full int) {
	r := rngFor(g.w.sc.Seed, "unrelated", t/120)
	busy := r.IntN(5)
	full = r.IntN(busy + 1)
	return 4 - busy, busy - full, full
}

func (g *gen) workers() {
	w := g.w
	sc := w.sc
	g.o.family(FamWorkers, "gauge")
	pools := []string{PoolName}
	if sc.UnrelatedPool {
		pools = append(pools, UnrelatedPool)
	}
	states := []string{"idle", "partial", "at_capacity"}
	for _, p := range w.ateapi {
		// The last time the process itself was scraped before exiting: its
		// values are what the collector keeps re-exporting.
		lastLive := int64(math.MinInt64)
		if p.Exit != 0 {
			for _, t := range g.ateapiT {
				if t >= p.Start && t < p.Exit {
					lastLive = t
				}
			}
		}
		valueTime := func(t int64) (int64, bool, bool) {
			switch {
			case t >= p.Start && (p.Exit == 0 || t < p.Exit):
				return t, false, true
			case p.Exit != 0 && t >= p.Exit && t < p.FrozenUntil && lastLive != math.MinInt64:
				return lastLive, true, true
			}
			return 0, false, false
		}
		for _, pool := range pools {
			stateAt := func(t int64) [3]int {
				var a, b, c int
				if pool == PoolName {
					a, b, c = w.poolStates(t)
				} else {
					a, b, c = g.unrelatedStates(t)
				}
				return [3]int{a, b, c}
			}
			if g.truth != nil && !g.lean {
				for _, t := range g.ateapiT {
					if vt, frozen, ok := valueTime(t); ok {
						st := stateAt(vt)
						g.truth.WorkerStates = append(g.truth.WorkerStates, WorkerStates{T: t, Process: p.Key, Pool: pool,
							Idle: float64(st[0]), Partial: float64(st[1]), AtCapacity: float64(st[2]), Frozen: frozen})
					}
				}
			}
			for si, state := range states {
				job := "otel-collector"
				if sc.AteapiDirect {
					job = "ateapi"
				}
				ls := []Label{{"job", job}, {"instance", p.Instance}, {"exported_instance", p.ExportedInstance},
					{"ate_workerpool_name", pool}, {"ate_worker_state", state}}
				g.o.series(FamWorkers, ls, present(g.ateapiT, sc.StaleNaN, func(t int64) (float64, bool) {
					vt, _, ok := valueTime(t)
					if !ok {
						return 0, false
					}
					return float64(stateAt(vt)[si]), true
				}))
			}
		}
	}
}
