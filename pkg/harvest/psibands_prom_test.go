package harvest_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// psi_series.json's bands on a run with more pods than the datasource's
// maxSeries (50), read in many chunks and with the kept series thinned to
// fit a small budget: every band equals an independent computation from
// the full 10 s series (PromQL's quantile rule per timestamp, then the
// maximum of each interval) and Prometheus's own min/quantile/max by
// timestamp; bands computed from the thinned series instead differ.
func TestPSISeriesBandsExactAtScale(t *testing.T) {
	dir := t.TempDir()
	// 60 pods on 3 nodes for an hour, scraped every 30 s.
	tr, err := simrun.Generate(simrun.Large(simrun.LargeParams{Hours: 1, Pods: 60, ScrapeS: 30}), dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, filepath.Join(dir, simrun.OMFile))
	ctx := context.Background()
	whole := newClient(t, srv.URL)
	// 361 points per series in chunks of at most 40: ten time slices per
	// resource.
	ranges := &rangeCounter{base: http.DefaultTransport}
	chunked, err := promql.New(promql.Config{URL: srv.URL, MaxPoints: 40, HTTPClient: &http.Client{Transport: ranges}})
	if err != nil {
		t.Fatal(err)
	}
	p := harvest.Params{Start: tr.Start, End: tr.End, SteadyStart: tr.SteadyStart, SteadyEnd: tr.SteadyEnd, LagS: tr.LagS,
		Sel: harvest.DefaultSelectors(), SeriesPoints: 2000}
	b, _ := harvest.HarvestPodPSI(ctx, chunked, p)
	if b.Count == nil || *b.Count <= 50 {
		t.Fatalf("pods %v, want more than maxSeries (50)", b.Count)
	}
	t.Logf("pod PSI of %d pods read in %d range requests", *b.Count, ranges.n.Load())
	if ranges.n.Load() < 3*9 {
		t.Fatalf("%d range requests for three resources: the reads were not chunked", ranges.n.Load())
	}
	var r harvest.Result
	r.PodPSI = b
	doc := artifact.NewPSISeries(&r, tr.Start, tr.End)
	step := doc.StepS
	if b.CPU.SeriesStep <= harvest.Step || step < b.CPU.SeriesStep {
		t.Fatalf("kept series every %d s, bands every %d s: the test needs thinned series", b.CPU.SeriesStep, step)
	}

	for i, res := range harvest.PSIResources() {
		got := [...]*harvest.PSIBandSet{&doc.Pod.CPU, &doc.Pod.Mem, &doc.Pod.IO}[i]
		query := harvest.PodPSIQuery(p.Sel, res.Metric)
		full, err := whole.Range(ctx, query, p.Start, p.End, harvest.Step)
		if err != nil {
			t.Fatal(err)
		}
		at := map[int64][]float64{}
		for _, s := range full {
			for _, smp := range s.Samples {
				at[smp.T] = append(at[smp.T], smp.V)
			}
		}
		// Prometheus's own bands by timestamp over the same window (for
		// the first resource: one is enough to pin the quantile rule).
		var server [5]map[int64]float64
		for k, expr := range []string{"min(%s)", "quantile(0.5, %s)", "quantile(0.9, %s)", "quantile(0.99, %s)", "max(%s)"} {
			if i > 0 {
				break
			}
			ss, err := whole.Range(ctx, fmt.Sprintf(expr, query), p.Start, p.End, harvest.Step)
			if err != nil || len(ss) != 1 {
				t.Fatalf("%s: %v, %d series", expr, err, len(ss))
			}
			server[k] = map[int64]float64{}
			for _, smp := range ss[0].Samples {
				server[k][smp.T] = smp.V
			}
		}
		want := [5][]*float64{}
		fromServer := [5][]*float64{}
		for k := range want {
			want[k] = make([]*float64, len(got.Timestamps))
			fromServer[k] = make([]*float64, len(got.Timestamps))
		}
		for j, ts := range got.Timestamps {
			for tt := ts; tt < ts+step && tt <= p.End; tt += harvest.Step {
				vals := slices.Clone(at[tt])
				if len(vals) == 0 {
					continue
				}
				slices.Sort(vals)
				for k, v := range [5]float64{vals[0], linearQuantile(0.5, vals), linearQuantile(0.9, vals), linearQuantile(0.99, vals), vals[len(vals)-1]} {
					raise(&want[k][j], v)
					if server[k] != nil {
						raise(&fromServer[k][j], server[k][tt])
					}
				}
			}
		}
		compared := 0
		for k, gotBand := range [5][]*float64{got.Min, got.P50, got.P90, got.P99, got.Max} {
			for j := range gotBand {
				w, s, g := want[k][j], fromServer[k][j], gotBand[j]
				if (w == nil) != (g == nil) || (server[k] != nil && (s == nil) != (g == nil)) {
					t.Fatalf("%s band %d at %d: got %v, computed %v, Prometheus %v", res.Key, k, got.Timestamps[j], g, w, s)
				}
				if g == nil {
					continue
				}
				if *g != percentile.Round4(*w) || (s != nil && math.Abs(*g-*s) > 1e-4) {
					t.Fatalf("%s band %d at %d: got %v, computed %v, Prometheus %v", res.Key, k, got.Timestamps[j], *g, percentile.Round4(*w), s)
				}
				compared++
			}
		}
		// The same bands from the thinned series: what folding from every
		// sample avoids.
		thinned := harvest.PSIBands(b.Resource(res.Key).Series, "pod", p.Start, p.End, step)
		differ := 0
		for k, tb := range [5][]*float64{thinned.Min, thinned.P50, thinned.P90, thinned.P99, thinned.Max} {
			for j := range tb {
				if g := [5][]*float64{got.Min, got.P50, got.P90, got.P99, got.Max}[k][j]; tb[j] != nil && g != nil && *tb[j] != *g {
					differ++
				}
			}
		}
		t.Logf("%s: %d series, kept every %d s, bands every %d s: %d band values equal the per-timestamp computation (cpu: and Prometheus's); %d of them differ when computed from the thinned series",
			res.Key, len(full), b.Resource(res.Key).SeriesStep, step, compared, differ)
		if compared == 0 {
			t.Errorf("%s: no band value compared", res.Key)
		}
		if differ == 0 {
			t.Errorf("%s: bands from the thinned series equal the exact ones: the test does not exercise thinning", res.Key)
		}
	}
}

// linearQuantile is PromQL's quantile over ascending values, written out:
// rank φ·(n−1), linear between the values around it.
func linearQuantile(phi float64, sorted []float64) float64 {
	rank := phi * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	w := rank - float64(lo)
	return sorted[lo]*(1-w) + sorted[hi]*w
}

// raise sets *dst to the larger of it and v (nil takes v).
func raise(dst **float64, v float64) {
	if *dst == nil || v > **dst {
		*dst = &v
	}
}

// rangeCounter counts the range requests sent through it.
type rangeCounter struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *rangeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/query_range") {
		c.n.Add(1)
	}
	return c.base.RoundTrip(r)
}

// A PSI panel's bands, which Prometheus computes from the band queries,
// equal psi_series.json's, which harvest folds from every sample: the one
// definition of the bands (PSIBandList) read both ways. The top series are
// the ones with the highest peaks.
func TestPSIPanelBandsEqualStoredBands(t *testing.T) {
	dir := t.TempDir()
	tr, err := simrun.Generate(simrun.Large(simrun.LargeParams{Hours: 1, Pods: 12, ScrapeS: 30}), dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, filepath.Join(dir, simrun.OMFile))
	ctx := context.Background()
	c := newClient(t, srv.URL)
	sel := harvest.DefaultSelectors()
	panel := harvest.ReadPSIPanel(ctx, c, harvest.PSIPanelRead{Sel: sel, Scope: "pod", Resource: "cpu",
		Start: tr.Start, End: tr.End, Step: harvest.Step, Bands: true, Top: 3})
	if panel.Failed != nil || !panel.Summarized || len(panel.Bands) != len(harvest.PSIBandList()) {
		t.Fatalf("panel: failed %v, summarized %v, %d bands", panel.Failed, panel.Summarized, len(panel.Bands))
	}
	full, err := c.Range(ctx, harvest.PodPSIQuery(sel, "cpu"), tr.Start, tr.End, harvest.Step)
	if err != nil {
		t.Fatal(err)
	}
	stored := harvest.PSIBands(full, "pod", tr.Start, tr.End, harvest.Step)
	index := map[int64]int{}
	for i, ts := range stored.Timestamps {
		index[ts] = i
	}
	compared := 0
	for k, band := range [][]*float64{stored.Min, stored.P50, stored.P90, stored.P99, stored.Max} {
		for _, smp := range panel.Bands[k] {
			i, ok := index[smp.T]
			if !ok || band[i] == nil {
				t.Fatalf("%s band at %d: the panel has %v, the stored bands nothing", harvest.PSIBandList()[k].Name, smp.T, smp.V)
			}
			if math.Abs(*band[i]-smp.V) > 1e-4 {
				t.Fatalf("%s band at %d: panel %v, stored %v", harvest.PSIBandList()[k].Name, smp.T, smp.V, *band[i])
			}
			compared++
		}
	}
	if compared == 0 {
		t.Fatal("no band value compared")
	}
	var top []string
	for _, s := range panel.Series {
		top = append(top, s.Labels["pod"])
	}
	var want []string
	for _, s := range stored.Top[:3] {
		want = append(want, s.Name)
	}
	slices.Sort(top)
	slices.Sort(want)
	if !slices.Equal(top, want) {
		t.Errorf("top series %v, want the three highest peaks %v", top, want)
	}
	t.Logf("%d band values equal; %d queries", compared, len(panel.Queries))
}

// TestPSIBandQuery: each band's PromQL.
func TestPSIBandQuery(t *testing.T) {
	var got []string
	for _, b := range harvest.PSIBandList() {
		got = append(got, b.Query("q"))
	}
	want := []string{"min(q)", "quantile(0.5, q)", "quantile(0.9, q)", "quantile(0.99, q)", "max(q)"}
	if !slices.Equal(got, want) {
		t.Errorf("band queries %q, want %q", got, want)
	}
}
