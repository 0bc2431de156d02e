package promql

import (
	"context"
	"fmt"
	"strings"
)

// lookbackSeconds is Prometheus's default lookback delta (5 min): the raw
// read reaches this far before A so that it holds v_A's sample too.
const lookbackSeconds = 300

// growthSeries is the working state of one series in WindowGrowth.
type growthSeries struct {
	labels     map[string]string
	vA, vB     float64
	hasA, hasB bool // a finite value at A / at B
	nanA       bool // present at A but NaN/±Inf: v_A is taken from raw samples
	candidate  bool // needs the raw-sample walk
	samples    []Sample
}

// WindowGrowth computes the spec's per-series restart-aware growth of the
// counter selector sel over (a, b] (server-telemetry.md, "Window counter
// deltas"). sel is a plain series selector (`name`, `name{...}` or `{...}`,
// no range, offset or @); it may match _bucket, _sum and _count at once, e.g.
// `{__name__=~"x_(bucket|sum|count)"}`. Labels keep __name__ so callers can
// tell the families apart. If b <= a the growth is zero for every series
// present at b (never a zero-length range selector).
//
// Reads: sel at a and at b (instant), then `resets(R) + sum_over_time(R) * 0`
// with R = `sel[<b-a+300>s] @ b` (one per metric name when sel starts with
// "{", because both functions drop the name and _sum/_count would collide;
// in shards by label value when one would scan more than MaxSeriesPoints
// samples, see resetShards),
// and raw samples `sel'[<b-a+300>s] @ b` only for candidate series (resets >
// 0, a NaN sample in the window, present at a but not at b, seen only inside
// the window, or v_B < v_A), where sel' narrows sel with a regex on the one
// label that singles the candidates out best. Series born inside the window
// have v_A = 0, including ones that stopped exporting more than the lookback
// before b (the resets listing finds them). A v_A that is NaN is replaced by
// the latest finite raw sample at or before a.
func (c *Client) WindowGrowth(ctx context.Context, sel string, a, b int64) (Growth, error) {
	sel = strings.TrimSpace(sel)
	if b <= a {
		return c.growthAtB(ctx, sel, b)
	}

	window := b - a + lookbackSeconds
	braced := strings.HasPrefix(sel, "{")
	var atA, atB []Series
	err := parallel(ctx, 2, func(ctx context.Context, i int) error {
		var err error
		switch i {
		case 0:
			if atA, err = c.Instant(ctx, sel, a); err != nil {
				return fmt.Errorf("window growth: reading v_A: %w", err)
			}
		case 1:
			if atB, err = c.Instant(ctx, sel, b); err != nil {
				return fmt.Errorf("window growth: reading v_B: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Growth{}, err
	}

	index := make(map[string]*growthSeries, len(atB))
	var all []*growthSeries
	get := func(ls map[string]string) *growthSeries {
		k := labelKey(ls)
		gs, ok := index[k]
		if !ok {
			gs = &growthSeries{labels: ls}
			index[k] = gs
			all = append(all, gs)
		}
		return gs
	}
	for _, s := range atA {
		gs := get(s.Labels)
		if len(s.Samples) > 0 {
			gs.vA, gs.hasA = s.Samples[0].V, true
		} else {
			gs.nanA = true
		}
	}
	for _, s := range atB {
		gs := get(s.Labels)
		if len(s.Samples) > 0 {
			gs.vB, gs.hasB = s.Samples[0].V, true
		}
	}
	if len(all) == 0 {
		return Growth{}, nil // the family is absent
	}

	names := metricNames(all)
	if !braced && len(names) != 1 {
		return Growth{}, fmt.Errorf("window growth: selector %q matched %d metric names", sel, len(names))
	}
	resets, err := c.listResets(ctx, sel, braced, all, names, window, b)
	if err != nil {
		return Growth{}, err
	}
	for _, s := range resets {
		gs := get(s.Labels)
		// No value: NaN, i.e. a NaN sample in the window (see resetsQuery).
		if len(s.Samples) == 0 || s.Samples[0].V > 0 {
			gs.candidate = true
		}
	}
	var cands []*growthSeries
	for _, gs := range all {
		// Absent at B (stopped, or born and gone inside the window), NaN at A,
		// or a drop between A and B that resets somehow did not report.
		if !gs.hasB || gs.nanA || gs.vB < gs.vA {
			gs.candidate = true
		}
		if gs.candidate {
			cands = append(cands, gs)
		}
	}

	if len(cands) > 0 {
		if err := c.readRaw(ctx, sel, all, cands, index, window, b); err != nil {
			return Growth{}, err
		}
	}

	return growthOf(all, a, b), nil
}

// growthAtB is WindowGrowth's answer for b <= a: zero growth for every
// series present at b.
func (c *Client) growthAtB(ctx context.Context, sel string, b int64) (Growth, error) {
	atB, err := c.Instant(ctx, sel, b)
	if err != nil {
		return Growth{}, fmt.Errorf("window growth: reading values at B: %w", err)
	}
	g := Growth{Series: make([]SeriesGrowth, 0, len(atB))}
	for _, s := range atB {
		sg := SeriesGrowth{Labels: s.Labels}
		if len(s.Samples) > 0 {
			v := s.Samples[0].V
			sg.End = &v
		}
		g.Series = append(g.Series, sg)
	}
	sortSeries(g.Series, func(s *SeriesGrowth) map[string]string { return s.Labels })
	return g, nil
}

// growthOf is the window figures of every series that measured something:
// a walk over the raw samples for candidates, v_B - v_A for the rest.
func growthOf(all []*growthSeries, a, b int64) Growth {
	g := Growth{Series: make([]SeriesGrowth, 0, len(all))}
	for _, gs := range all {
		// A series with no finite value at A, at B or in between measured
		// nothing (NaN samples are skipped): leave it out, so a family
		// whose every sample is NaN/±Inf reads as absent (null), not as a
		// growth of 0.
		if !gs.hasA && !gs.hasB && len(gs.samples) == 0 {
			continue
		}
		sg := SeriesGrowth{Labels: gs.labels}
		if gs.hasB {
			v := gs.vB
			sg.End = &v
		}
		if gs.candidate {
			vA := gs.vA
			if gs.nanA {
				vA = latestAtOrBefore(gs.samples, a)
			}
			sg.Growth, sg.Restarted = walk(vA, gs.samples, a, b)
		} else {
			sg.Growth = gs.vB - gs.vA
		}
		if sg.Restarted {
			g.Restarted++
		}
		g.Series = append(g.Series, sg)
	}
	sortSeries(g.Series, func(s *SeriesGrowth) map[string]string { return s.Labels })
	return g
}

// walk is the spec's growth over (a, b] from vA: next-prev when next >= prev,
// next when next < prev (a restart). It sums whole segments between restarts
// (last - first) rather than every step, so a series without a drop gives
// exactly v_last - v_A.
func walk(vA float64, samples []Sample, a, b int64) (growth float64, restarted bool) {
	base, prev := vA, vA
	for _, s := range samples {
		if s.T <= a || s.T > b {
			continue
		}
		if s.V < prev {
			growth += prev - base
			base = 0
			restarted = true
		}
		prev = s.V
	}
	return growth + prev - base, restarted
}

func latestAtOrBefore(samples []Sample, a int64) float64 {
	v := 0.0
	for _, s := range samples {
		if s.T > a {
			break
		}
		v = s.V
	}
	return v
}
