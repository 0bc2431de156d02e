package promql_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/promql"
)

// TestCoverageDefaultInFlightIsEight pins server-telemetry.md "a bounded
// number in flight (configurable, default 8)": with a zero Config, 24
// concurrent callers against a slow server put exactly 8 requests on the
// wire at once.
func TestCoverageDefaultInFlightIsEight(t *testing.T) {
	srv := promfake.New(t, promfake.Always(promfake.Reply{Delay: 300 * time.Millisecond, Body: okVector}))
	c := newClient(t, srv.URL, nil)
	concurrently(t, 24, func(int) error {
		_, err := c.Instant(context.Background(), "up", 1700000000)
		return err
	})
	if got := srv.MaxInFlight(); got != 8 {
		t.Errorf("max in flight %d, want the default 8", got)
	}
}

// TestCoverageDefaultPointCapSplits pins "The Prometheus 11,000-points-per-
// series limit must never be hit: split a long range into consecutive
// chunks and join them" with the default Config: 12,001 points at 10 s are
// read as 11,000 + 1,001 and joined back into one series.
func TestCoverageDefaultPointCapSplits(t *testing.T) {
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		if strings.HasSuffix(r.Path, "/api/v1/query") { // the series count that sizes the chunks
			return countReply(1)
		}
		start, _ := strconv.ParseInt(r.Form.Get("start"), 10, 64)
		end, _ := strconv.ParseInt(r.Form.Get("end"), 10, 64)
		step, _ := strconv.ParseInt(r.Form.Get("step"), 10, 64)
		if n := (end-start)/step + 1; n > 11000 {
			return promfake.APIError("bad_data", "exceeded maximum resolution of 11,000 points per timeseries")
		}
		var pts []promfake.Point
		for ts := start; ts <= end; ts += step {
			pts = append(pts, promfake.Point{T: float64(ts), V: "1"})
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{Labels: map[string]string{"a": "b"}, Points: pts})))
	})
	c := newClient(t, srv.URL, nil)
	const start = int64(1700000000)
	got, err := c.Range(context.Background(), "q", start, start+120000, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Samples) != 12001 || got[0].Samples[0].T != start || got[0].Samples[12000].T != start+120000 {
		t.Fatalf("joined series: %d series, %d samples", len(got), len(got[0].Samples))
	}
	var spans []string
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/api/v1/query_range") {
			spans = append(spans, r.Form.Get("start")+"-"+r.Form.Get("end"))
		}
	}
	sort.Strings(spans)
	want := []string{fmt.Sprintf("%d-%d", start, start+109990), fmt.Sprintf("%d-%d", start+110000, start+120000)}
	if !reflect.DeepEqual(spans, want) {
		t.Errorf("chunks %v, want %v", spans, want)
	}
}

// TestCoverageNoRestartEqualsPromQL pins "Where no series restarted inside
// the window, these equal what sum(SEL) - (sum(SEL @ A) or vector(0)) and
// histogram_quantile(Q, sum by (le) (B_SEL) - (sum by (le) (B_SEL @ A) or
// sum by (le) (B_SEL) * 0)) give when evaluated at B", against a real
// Prometheus 2.42 loaded with the growth fixture: s (steady), y (stopped
// inside the lookback), b (born inside the window: the `or vector(0)`
// branch) and d (a drop before A only); histogram hh of instance p1.
func TestCoverageNoRestartEqualsPromQL(t *testing.T) {
	srv := growthProm(t)
	c, _ := realClient(t, srv.URL, nil)
	ctx := context.Background()
	scalar := func(q string) float64 {
		t.Helper()
		r, err := c.Instant(ctx, q, winB)
		if err != nil {
			t.Fatal(err)
		}
		if len(r) != 1 || len(r[0].Samples) != 1 {
			t.Fatalf("%s: %+v", q, r)
		}
		return r[0].Samples[0].V
	}
	for _, sel := range []string{`c_total{instance="s"}`, `c_total{instance="y"}`, `c_total{instance="b"}`, `c_total{instance="d"}`, `c_total{instance=~"s|y|b|d"}`} {
		g, err := c.WindowGrowth(ctx, sel, winA, winB)
		if err != nil {
			t.Fatal(err)
		}
		if g.Restarted != 0 {
			t.Fatalf("%s: %d restarts; the case needs none", sel, g.Restarted)
		}
		want := scalar(fmt.Sprintf("sum(%s) - (sum(%s @ %d) or vector(0))", sel, sel, winA))
		if g.Delta() != want {
			t.Errorf("%s: per-series delta %v, PromQL %v", sel, g.Delta(), want)
		}
	}
	// 80 + 35 + 61 + 40: the union is the sum of its parts.
	if g, _ := c.WindowGrowth(ctx, `c_total{instance=~"s|y|b|d"}`, winA, winB); g.Delta() != 216 {
		t.Errorf("s|y|b|d delta %v, want 216", g.Delta())
	}

	g, err := c.WindowGrowth(ctx, `{__name__=~"hh_(bucket|sum|count)", instance="p1"}`, winA, winB)
	if err != nil || g.Restarted != 0 {
		t.Fatalf("hh p1: %v, %d restarts", err, g.Restarted)
	}
	byLE := map[float64]float64{}
	for _, s := range g.Series {
		if s.Labels["__name__"] != "hh_bucket" {
			continue
		}
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			t.Fatal(err)
		}
		byLE[le] += s.Growth
	}
	var buckets []promql.Bucket
	for le, n := range byLE {
		buckets = append(buckets, promql.Bucket{UpperBound: le, Count: n})
	}
	const bsel = `hh_bucket{instance="p1"}`
	for _, q := range []float64{0.25, 0.5, 0.9, 0.99} {
		got := promql.HistogramQuantile(q, buckets)
		want := scalar(fmt.Sprintf("histogram_quantile(%g, sum by (le) (%s) - (sum by (le) (%s @ %d) or sum by (le) (%s) * 0))", q, bsel, bsel, winA, bsel))
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("q %g: window quantile %v, PromQL %v", q, got, want)
		}
	}
}
