package promql_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/promql"
)

// TestVictoriaMetrics runs the growth fixture against VictoriaMetrics: the
// per-series window growth is the same as on Prometheus (same hand-computed
// values); the range answers differ where the engines differ, asserted here.
func TestVictoriaMetrics(t *testing.T) {
	srv := promtest.StartVM(t, writeGrowthOM(t))
	ctx := context.Background()
	c, log := realClient(t, srv.URL, nil)

	g, err := c.WindowGrowth(ctx, "c_total", winA, winB)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Series {
		w := wantGrowth[s.Labels["instance"]]
		if s.Growth != w.growth || s.Restarted != w.restarted || (s.End == nil) != math.IsNaN(w.end) {
			t.Errorf("%v: growth %v restarted %v end %v; want %v %v %v", s.Labels, s.Growth, s.Restarted, s.End, w.growth, w.restarted, w.end)
		}
	}
	if len(g.Series) != len(wantGrowth) || g.Delta() != 865 || g.End() != 623 || g.Restarted != 3 {
		t.Errorf("%d series, Delta %v End %v Restarted %d; want %d 865 623 3 (queries %q)", len(g.Series), g.Delta(), g.End(), g.Restarted, len(wantGrowth), log.Queries())
	}
	g, err = c.WindowGrowth(ctx, `{__name__=~"hh_(bucket|sum|count)"}`, winA, winB)
	// p1 40 x (1+2+3+2) + p2 39 x 8.
	if err != nil || g.Delta() != 632 || g.Restarted != 4 {
		t.Errorf("hh: delta %v restarted %d err %v; want 632 4", g.Delta(), g.Restarted, err)
	}
	// Selectors whose per-name reads would hold two __name__ matchers and
	// another matcher, which VictoriaMetrics answers with nothing.
	for _, bc := range bracedCases {
		c, log := realClient(t, srv.URL, nil)
		g, err := c.WindowGrowth(ctx, bc.sel, winA, winB)
		if err != nil || g.Delta() != bc.delta || g.Restarted != bc.restarted {
			t.Errorf("%s: delta %v restarted %d err %v; want %v %d (queries %q)", bc.sel, g.Delta(), g.Restarted, err, bc.delta, bc.restarted, log.Queries())
		}
	}

	// Inherent differences: VictoriaMetrics drops NaN on ingestion, so the
	// k 50 step reads the previous sample (49) where Prometheus has no point;
	// and it stops reading a series about one scrape interval after its last
	// sample (x: t0+1230) where Prometheus reads it for the 5 min lookback
	// (t0+1500).
	r, err := c.Range(ctx, `c_total{instance=~"n|x"}`, t0, t0+2400, scrape)
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 2 || len(r[0].Samples) != 81 || r[0].Samples[50] != (promql.Sample{T: t0 + 50*scrape, V: 49}) {
		t.Errorf("n on VictoriaMetrics: %+v", r)
	}
	if last := r[1].Samples[len(r[1].Samples)-1]; last != (promql.Sample{T: t0 + 1230, V: 40}) {
		t.Errorf("x last point on VictoriaMetrics %+v, want {%d 40}", last, t0+1230)
	}

	// Splitting: equal to the unsplit answer when each chunk spans at least
	// a scrape interval. (VictoriaMetrics derives its lookback from the
	// samples inside the requested window, so chunks shorter than the scrape
	// interval can read differently at their edges; the default cap of
	// 11,000 points is far from that.)
	for _, q := range []string{`c_total`, `rate(c_total[2m])`, `sum by (instance) (hh_bucket)`} {
		for _, step := range []int64{10, 7, 60} {
			want, err := c.Range(ctx, q, t0-100, t0+2500, step)
			if err != nil {
				t.Fatal(err)
			}
			split, _ := realClient(t, srv.URL, func(c *promql.Config) { c.MaxPoints = 100 })
			got, err := split.Range(ctx, q, t0-100, t0+2500, step)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s step %d: split answer differs from unsplit", q, step)
			}
		}
	}
}
