package simrun

import (
	"math"
	"math/rand/v2"
)

func (g *gen) actorGauges() {
	w := g.w
	noise := func(n int, real int64) float64 {
		return 1 + 0.02*rand.New(rand.NewPCG(uint64(w.sc.Seed), uint64(n)<<40^uint64(real))).NormFloat64() // #nosec G115 G404 -- deterministic by design
	}
	for _, fam := range []string{FamSampledActors, FamActorWorkSet} {
		g.o.family(fam, "gauge")
		for n := range w.nodes {
			if !w.nodes[n].worker {
				continue
			}
			type rep struct {
				inst  string
				times []int64
			}
			reps := []rep{{w.collectA, g.collA}}
			if d := w.sc.DuplicateReplica; d != nil && d.Node == n {
				var ts []int64
				for _, t := range g.collB {
					if t >= w.start+d.FromS && t < w.start+d.ToS {
						ts = append(ts, t)
					} else if t >= w.start+d.ToS {
						ts = append(ts, t) // the scrape that notices the replica is gone
						break
					}
				}
				reps = append(reps, rep{w.collectB, ts})
			}
			for ri, rp := range reps {
				last := int64(math.MaxInt64)
				if ri == 1 {
					last = w.start + w.sc.DuplicateReplica.ToS
				}
				val := func(ts int64) (float64, bool) {
					real := ts - w.shift
					a := w.nodeActors(n, real)
					if ts >= last || !w.ateletUp(n, real) || a == 0 {
						return 0, false
					}
					if fam == FamSampledActors {
						return float64(a), true
					}
					return math.Round(float64(a) * w.perActorBytes(real) * noise(n, real)), true
				}
				ls := []Label{{"job", "otel-collector"}, {"instance", rp.inst}, {"exported_instance", w.nodes[n].atelet}}
				samples := present(rp.times, w.sc.StaleNaN, val)
				g.o.series(fam, ls, samples)
				if g.truth == nil || g.lean {
					continue
				}
				for _, s := range samples {
					if math.IsNaN(s.V) {
						continue
					}
					if fam == FamSampledActors {
						g.truth.SampledActors = append(g.truth.SampledActors, GaugeSample{T: s.T, RealT: s.T - w.shift,
							Atelet: w.nodes[n].atelet, Instance: rp.inst, Value: s.V})
					} else {
						g.truth.WorkingSets = append(g.truth.WorkingSets, WorkingSetSample{T: s.T, Scope: "actor",
							Instance: rp.inst, Atelet: w.nodes[n].atelet, Bytes: s.V})
					}
				}
			}
		}
	}
}
