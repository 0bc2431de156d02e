package harvest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

func psiSeries(name string, samples ...promql.Sample) promql.Series {
	return promql.Series{Labels: map[string]string{"pod": name}, Samples: samples}
}

func smp(t int64, v float64) promql.Sample { return promql.Sample{T: t, V: v} }

// fp renders a nullable slice for comparison: "n" for null.
func fp(vs []*float64) string {
	s := "["
	for i, p := range vs {
		if i > 0 {
			s += " "
		}
		if p == nil {
			s += "n"
		} else {
			s += fmt.Sprint(*p)
		}
	}
	return s + "]"
}

func TestPSIBandStep(t *testing.T) {
	for _, c := range []struct {
		start, end int64
		steps      []int64
		want       int64
	}{
		{1000, 1000, nil, 10},
		{1000, 1000 + 19990, nil, 10}, // 2,000 points
		{1000, 1000 + 20000, nil, 20}, // 2,001 points
		{1000, 1000 + 86400, nil, 50}, // 8,641 points
		{1000, 1000 + 86400, []int64{870}, 870},
		{1000, 1000 + 3600, []int64{10, 30}, 30},
		{1000, 1000 + 3600, []int64{25}, 30}, // a 10 s multiple
		{1000, 900, nil, 10},
	} {
		if got := PSIBandStep(c.start, c.end, c.steps...); got != c.want {
			t.Errorf("PSIBandStep(%d, %d, %v) = %d, want %d", c.start, c.end, c.steps, got, c.want)
		}
	}
}

func TestPSIBands(t *testing.T) {
	const s0 = 1_700_000_000
	for _, c := range []struct {
		name        string
		series      []promql.Series
		end, step   int64
		wantSeries  string
		wantTS      string
		wantBands   [5]string
		wantTop     []string // name:peak:values
		wantTopSize int
	}{
		{
			name: "failed read", series: nil, end: s0 + 30, step: 10,
			wantSeries: "<nil>", wantTS: "[]", wantBands: [5]string{"[]", "[]", "[]", "[]", "[]"},
		},
		{
			name: "no series", series: []promql.Series{}, end: s0 + 20, step: 10,
			wantSeries: "0", wantTS: "[0 10 20]", wantBands: [5]string{"[n n n]", "[n n n]", "[n n n]", "[n n n]", "[n n n]"},
		},
		{
			name: "linear quantiles, a lone sample, a gap",
			series: []promql.Series{
				psiSeries("a", smp(s0, 1), smp(s0+10, 5)),
				psiSeries("b", smp(s0, 2)),
				psiSeries("c", smp(s0, 3)),
				psiSeries("d", smp(s0, 4), smp(s0+30, 0.5)),
			},
			end: s0 + 30, step: 10,
			wantSeries: "4", wantTS: "[0 10 20 30]",
			wantBands: [5]string{"[1 5 n 0.5]", "[2.5 5 n 0.5]", "[3.7 5 n 0.5]", "[3.97 5 n 0.5]", "[4 5 n 0.5]"},
			wantTop:   []string{"a:5:[1 5 n n]", "d:4:[4 n n 0.5]", "c:3:[3 n n n]", "b:2:[2 n n n]"},
		},
		{
			name: "thinned: bands per 10 s first, then the max of each interval",
			series: []promql.Series{
				psiSeries("a", smp(s0, 1), smp(s0+10, 10), smp(s0+20, 7)),
				psiSeries("b", smp(s0, 3), smp(s0+40, 2)),
			},
			end: s0 + 40, step: 20,
			wantSeries: "2", wantTS: "[0 20 40]",
			// at s0 {1, 3}: min 1, p50 2; at s0+10 {10}: every band 10.
			wantBands: [5]string{"[10 7 2]", "[10 7 2]", "[10 7 2]", "[10 7 2]", "[10 7 2]"},
			wantTop:   []string{"a:10:[10 7 n]", "b:3:[3 n 2]"},
		},
		{
			name: "rounded to 4 decimals, samples outside the window dropped, NaN ignored",
			series: []promql.Series{
				psiSeries("a", smp(s0-10, 99), smp(s0, 1.23456), smp(s0+10, math.NaN()), smp(s0+20, 99)),
			},
			end: s0 + 10, step: 10,
			wantSeries: "1", wantTS: "[0 10]",
			wantBands: [5]string{"[1.2346 n]", "[1.2346 n]", "[1.2346 n]", "[1.2346 n]", "[1.2346 n]"},
			wantTop:   []string{"a:1.2346:[1.2346 n]"},
		},
		{
			name: "ties by name, at most ten named",
			series: func() []promql.Series {
				var out []promql.Series
				for i := range 12 {
					out = append(out, psiSeries(fmt.Sprintf("p%02d", 11-i), smp(s0, float64(i/4))))
				}
				return out
			}(),
			end: s0, step: 10,
			wantSeries: "12", wantTS: "[0]",
			wantBands: [5]string{"[0]", "[1]", "[2]", "[2]", "[2]"},
			wantTop: []string{"p00:2:[2]", "p01:2:[2]", "p02:2:[2]", "p03:2:[2]", "p04:1:[1]", "p05:1:[1]",
				"p06:1:[1]", "p07:1:[1]", "p08:0:[0]", "p09:0:[0]"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := PSIBands(c.series, "pod", s0, c.end, c.step)
			gotSeries := "<nil>"
			if got.Series != nil {
				gotSeries = fmt.Sprint(*got.Series)
			}
			if gotSeries != c.wantSeries {
				t.Errorf("series %s, want %s", gotSeries, c.wantSeries)
			}
			rel := make([]int64, len(got.Timestamps))
			for i, ts := range got.Timestamps {
				rel[i] = ts - s0
			}
			if s := fmt.Sprint(rel); s != c.wantTS {
				t.Errorf("timestamps %s, want %s", s, c.wantTS)
			}
			for i, b := range [5][]*float64{got.Min, got.P50, got.P90, got.P99, got.Max} {
				if s := fp(b); s != c.wantBands[i] {
					t.Errorf("band %d: %s, want %s", i, s, c.wantBands[i])
				}
			}
			var top []string
			for _, s := range got.Top {
				top = append(top, fmt.Sprintf("%s:%v:%s", s.Name, s.Peak, fp(s.Values)))
			}
			if fmt.Sprint(top) != fmt.Sprint(c.wantTop) {
				t.Errorf("top\n got %v\nwant %v", top, c.wantTop)
			}
			if got.Top == nil || got.Timestamps == nil || got.Min == nil {
				t.Error("slices must be empty, not nil (written as [])")
			}
		})
	}
}

// TestPSIBandsIndependent checks PSIBands against a plain per-timestamp
// computation on random series with missing samples, over windows that
// need thinning and windows that do not.
func TestPSIBandsIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const start = 1_700_000_000
	for trial := range 20 {
		points := int64(1 + r.IntN(5000))
		end := start + (points-1)*Step
		var series []promql.Series
		for i := range r.IntN(25) {
			s := promql.Series{Labels: map[string]string{"instance": fmt.Sprintf("node-%d", r.IntN(40)), "i": fmt.Sprint(i)}}
			miss := r.Float64()
			for k := range points {
				if r.Float64() < miss {
					continue
				}
				v := r.ExpFloat64() * 3
				if r.IntN(8) == 0 {
					v = float64(r.IntN(3)) // ties
				}
				s.Samples = append(s.Samples, promql.Sample{T: start + k*Step, V: v})
			}
			series = append(series, s)
		}
		step := PSIBandStep(start, end)
		got := PSIBands(series, "instance", start, end, step)
		if len(got.Timestamps) > PSIBandsMaxPoints {
			t.Fatalf("trial %d: %d timestamps", trial, len(got.Timestamps))
		}

		// Plainly: values per timestamp, each band per timestamp, then the
		// max per interval, then rounding.
		at := map[int64][]float64{}
		for _, s := range series {
			for _, p := range s.Samples {
				at[p.T] = append(at[p.T], p.V)
			}
		}
		quantile := func(q float64, v []float64) float64 {
			rank := q * float64(len(v)-1)
			lo := math.Floor(rank)
			hi := math.Min(float64(len(v)-1), lo+1)
			w := rank - lo
			return v[int(lo)]*(1-w) + v[int(hi)]*w
		}
		band := func(b int, v []float64) float64 {
			sort.Float64s(v)
			switch b {
			case 0:
				return v[0]
			case 4:
				return v[len(v)-1]
			}
			return quantile([]float64{0, 0.5, 0.9, 0.99}[b], v)
		}
		for k, ts := range got.Timestamps {
			if ts != start+int64(k)*step {
				t.Fatalf("trial %d: timestamp %d is %d", trial, k, ts)
			}
			for b, vals := range [5][]*float64{got.Min, got.P50, got.P90, got.P99, got.Max} {
				var want *float64
				for tt := ts; tt < ts+step && tt <= end; tt += Step {
					if v := at[tt]; len(v) > 0 {
						x := band(b, append([]float64(nil), v...))
						if want == nil || x > *want {
							want = &x
						}
					}
				}
				if want != nil {
					*want = percentile.Round4(*want)
				}
				if (want == nil) != (vals[k] == nil) || want != nil && *want != *vals[k] {
					t.Fatalf("trial %d band %d at %d: got %s want %s", trial, b, ts, fp(vals[k:k+1]), fp([]*float64{want}))
				}
			}
		}

		type peak struct {
			name string
			v    float64
			s    promql.Series
		}
		var peaks []peak
		for _, s := range series {
			if len(s.Samples) == 0 {
				continue
			}
			m := s.Samples[0].V
			for _, p := range s.Samples {
				m = math.Max(m, p.V)
			}
			peaks = append(peaks, peak{s.Labels["instance"], percentile.Round4(m), s})
		}
		sort.SliceStable(peaks, func(i, j int) bool {
			if peaks[i].v != peaks[j].v {
				return peaks[i].v > peaks[j].v
			}
			return peaks[i].name < peaks[j].name
		})
		if len(peaks) > 10 {
			peaks = peaks[:10]
		}
		if len(got.Top) != len(peaks) {
			t.Fatalf("trial %d: %d top series, want %d", trial, len(got.Top), len(peaks))
		}
		for i, p := range peaks {
			g := got.Top[i]
			if g.Name != p.name || g.Peak != p.v {
				t.Fatalf("trial %d top %d: %s %v, want %s %v", trial, i, g.Name, g.Peak, p.name, p.v)
			}
			if len(g.Values) != len(got.Timestamps) {
				t.Fatalf("trial %d top %d: %d values", trial, i, len(g.Values))
			}
			byT := map[int64]float64{}
			for _, sp := range p.s.Samples {
				byT[sp.T] = sp.V
			}
			for k, ts := range got.Timestamps {
				var want *float64
				for tt := ts; tt < ts+step; tt += Step {
					if v, ok := byT[tt]; ok && (want == nil || v > *want) {
						want = &v
					}
				}
				if want != nil {
					*want = percentile.Round4(*want)
				}
				if (want == nil) != (g.Values[k] == nil) || want != nil && *want != *g.Values[k] {
					t.Fatalf("trial %d top %s at %d: got %s want %s", trial, g.Name, ts, fp(g.Values[k:k+1]), fp([]*float64{want}))
				}
			}
		}
	}
}

// A query names a resource by its metric infix; the block keys it by its
// output prefix. Both reach the same resource.
func TestPSIKey(t *testing.T) {
	var b PSI
	for _, c := range []struct {
		metric, key string
		want        *PSIResource
	}{
		{"cpu", "cpu", &b.CPU},
		{"memory", "mem", &b.Mem},
		{"io", "io", &b.IO},
		{"mem", "", nil}, // the key is not a metric name
		{"disk", "", nil},
	} {
		if got := PSIKey(c.metric); got != c.key {
			t.Errorf("PSIKey(%q) = %q, want %q", c.metric, got, c.key)
		}
		if c.key == "" {
			continue
		}
		if b.Resource(c.metric) != c.want || b.Resource(c.key) != c.want {
			t.Errorf("Resource(%q) and Resource(%q) are not the same resource", c.metric, c.key)
		}
	}
}
