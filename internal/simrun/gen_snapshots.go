package simrun

import (
	"math"
)

// SizeBounds and DurationBounds are the histogram bucket upper bounds.
var (
	SizeBounds     = sizeBounds()
	DurationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, math.Inf(1)}
)

func sizeBounds() []float64 {
	var b []float64
	for k := 0; k <= 12; k++ {
		b = append(b, float64(int64(1)<<(20+k)))
	}
	return append(b, math.Inf(1))
}

// obsOf lists the observations one event makes, for one histogram family.
type obs struct {
	t           float64
	label, kind string
	v           float64
	ev          int
}

func (g *gen) nodeEvents(n int) []event {
	if ev, ok := g.events[n]; ok {
		return ev
	}
	ev := g.w.nodeEvents(n)
	if !g.lean {
		g.events[n] = ev
	}
	return ev
}

func eventObs(fam string, evs []event, microVM func(pod int) bool) []obs {
	var out []obs
	kindOf := func(e event) string {
		if e.incr {
			return "incremental"
		}
		return "full"
	}
	for i, e := range evs {
		switch fam {
		case FamSnapshotSize:
			if !e.checkpoint {
				continue
			}
			mem, meta := "pages.img", "checkpoint.img"
			if microVM(e.pod) {
				mem, meta = "memory-ranges", "vmstate"
			}
			out = append(out, obs{e.t, mem, "", e.memBytes, i}, obs{e.t, meta, "", e.metaBytes, i})
		case FamCheckpoint, FamRestore:
			if e.checkpoint != (fam == FamCheckpoint) {
				continue
			}
			phase := "download"
			if e.checkpoint {
				phase = "upload"
			}
			out = append(out, obs{e.t, "total", kindOf(e), e.total, i}, obs{e.t, phase, kindOf(e), e.phase, i})
		}
	}
	return out
}

func (g *gen) histograms() {
	w := g.w
	micro := func(p int) bool { return w.pods[p].microVM }
	for _, fam := range []string{FamSnapshotSize, FamRestore, FamCheckpoint} {
		g.o.family(fam, "histogram")
		bounds := DurationBounds
		if fam == FamSnapshotSize {
			bounds = SizeBounds
		}
		for n := range w.nodes {
			if !w.nodes[n].worker {
				continue
			}
			all := eventObs(fam, g.nodeEvents(n), micro)
			// Label sets in first-observation order.
			type key struct{ label, kind string }
			var keys []key
			groups := map[key][]obs{}
			for _, o := range all {
				k := key{o.label, o.kind}
				if _, ok := groups[k]; !ok {
					keys = append(keys, k)
				}
				groups[k] = append(groups[k], o)
			}
			for _, k := range keys {
				ls := []Label{{"job", "otel-collector"}, {"instance", w.collectA}, {"exported_instance", w.nodes[n].atelet}}
				if fam == FamSnapshotSize {
					ls = append(ls, Label{"file_name", k.label})
				} else {
					ls = append(ls, Label{"ate_snapshot_phase", k.label}, Label{"ate_snapshot_kind", k.kind})
				}
				pts, exported := g.histPoints(n, groups[k], bounds)
				g.o.histogram(fam, ls, bounds, pts)
				if g.truth != nil && !g.lean {
					for i, o := range groups[k] {
						g.truth.Observations = append(g.truth.Observations, Observation{T: o.t, Atelet: w.nodes[n].atelet,
							Node: w.nodes[n].name, Family: fam, Label: k.label, Kind: k.kind, Value: o.v, Lost: !exported[i]})
					}
				}
			}
		}
	}
}

// histPoints accumulates observations into cumulative histogram samples at
// the collector's scrape times (value at real time ts - shift). A series
// exists from its first observation since the atelet last started; a
// restart sets it back to zero. exported[i] is false for an observation the
// atelet made but never exported (it died before the next scrape).
func (g *gen) histPoints(n int, os []obs, bounds []float64) ([]histPoint, []bool) {
	w := g.w
	exported := make([]bool, len(os))
	counts := make([]float64, len(bounds))
	var sum float64
	var pts []histPoint
	epoch := int64(math.MinInt64)
	j := 0
	seen := false
	prev := false
	for _, ts := range g.collA {
		real := ts - w.shift
		up := w.ateletUp(n, real)
		if ep := w.ateletEpoch(n, real); ep != epoch {
			epoch = ep
			for i := range counts {
				counts[i] = 0
			}
			sum, seen = 0, false
			for j < len(os) && os[j].t < float64(ep) {
				j++
			}
		}
		if up {
			for j < len(os) && os[j].t <= float64(real) {
				o := os[j]
				for i, b := range bounds {
					if o.v <= b {
						counts[i]++
					}
				}
				sum += o.v
				exported[j] = true
				seen = true
				j++
			}
		}
		ok := up && seen
		switch {
		case ok:
			pts = append(pts, histPoint{t: ts, counts: append([]float64(nil), counts...), sum: sum})
		case w.sc.StaleNaN && prev:
			pts = append(pts, histPoint{t: ts, nan: true})
		}
		prev = ok
	}
	return pts, exported
}
