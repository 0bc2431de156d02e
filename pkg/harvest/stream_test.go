package harvest_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
)

// TestChunkedHarvestEqualsWhole: a harvest whose range reads are cut into
// many small chunks (a tiny series × points budget, and for the ladder run
// a series count probed first) folds to exactly the figures, series,
// notices and query log of the harvest that reads each range whole.
func TestChunkedHarvestEqualsWhole(t *testing.T) {
	for _, name := range []string{"steady", "ladder"} {
		t.Run(name, func(t *testing.T) {
			e := loadScenario(t, name)
			p := e.params()
			whole := harvestOf(t, e.prom(t), p)
			_, srv := cache.Prometheus(t, name)
			small, err := promql.New(promql.Config{URL: srv.URL, MaxSeriesPoints: 97})
			if err != nil {
				t.Fatal(err)
			}
			chunked := harvestOf(t, small, p)
			diffKV(t, "chunked vs whole", flatten(chunked), flatten(whole))
			for _, b := range []struct {
				name      string
				got, want harvest.PSI
			}{{"node_psi", chunked.NodePSI, whole.NodePSI}, {"pod_psi", chunked.PodPSI, whole.PodPSI}} {
				for _, key := range []string{"cpu", "mem", "io"} {
					g, w := b.got.Resource(key).Series, b.want.Resource(key).Series
					if len(w) == 0 || !reflect.DeepEqual(g, w) {
						t.Errorf("%s %s series: chunked %d, whole %d series, or they differ", b.name, key, len(g), len(w))
					}
				}
			}
			if !reflect.DeepEqual(chunked.Notices, whole.Notices) {
				t.Errorf("notices differ:\nchunked %v\nwhole   %v", chunked.Notices, whole.Notices)
			}
			// Within a block, concurrent reads log in the order they start;
			// the restart listings and raw reads of window growth (`sel[..s]
			// @ b`) are cut by the same budget, so only the rest must match.
			cut := func(qs []string) []string {
				return slices.Sorted(func(yield func(string) bool) {
					for _, q := range qs {
						if !strings.Contains(q, "s] @ ") && !yield(q) {
							return
						}
					}
				})
			}
			if g, w := cut(chunked.Queries), cut(whole.Queries); !slices.Equal(g, w) {
				t.Errorf("query logs differ:\nchunked %q\nwhole   %q", g, w)
			}
		})
	}
}

// TestPanelSeriesThinned: Params.SeriesPoints bounds the PSI series kept
// for panels to one point per stride, each the maximum of the full series
// over that stride; the summaries do not change; a negative budget keeps
// none.
func TestPanelSeriesThinned(t *testing.T) {
	e := loadScenario(t, "steady")
	c, p, ctx := e.prom(t), e.params(), context.Background()
	full, _ := harvest.HarvestPodPSI(ctx, c, p)
	p.SeriesPoints = 1000
	thin, notices := harvest.HarvestPodPSI(ctx, c, p)
	p.SeriesPoints = -1
	none, _ := harvest.HarvestPodPSI(ctx, c, p)

	fs, ts := full.CPU.Series, thin.CPU.Series
	points := (max(p.End, p.Start+1)-p.Start)/harvest.Step + 1
	stride := harvest.Step * ((int64(len(fs))*points + 999) / 1000)
	if len(fs) == 0 || len(ts) != len(fs) || stride <= harvest.Step {
		t.Fatalf("%d full, %d thinned series, stride %d s", len(fs), len(ts), stride)
	}
	kept := 0
	for i := range fs {
		want := map[int64]float64{}
		var order []int64
		for _, s := range fs[i].Samples {
			at := p.Start + (s.T-p.Start)/stride*stride
			if v, ok := want[at]; !ok {
				want[at] = s.V
				order = append(order, at)
			} else {
				want[at] = max(v, s.V)
			}
		}
		if len(ts[i].Samples) != len(order) {
			t.Fatalf("series %v: %d thinned points, want %d", ts[i].Labels, len(ts[i].Samples), len(order))
		}
		for j, s := range ts[i].Samples {
			if s.T != order[j] || s.V != want[s.T] {
				t.Fatalf("series %v point %d: %+v, want {%d %v}", ts[i].Labels, j, s, order[j], want[order[j]])
			}
		}
		kept += len(ts[i].Samples)
	}
	if kept > 1000+len(fs) {
		t.Errorf("%d points kept over a budget of 1000", kept)
	}
	for _, k := range []string{"cpu", "mem", "io"} {
		if !reflect.DeepEqual(thin.Resource(k).Summary, full.Resource(k).Summary) || !reflect.DeepEqual(none.Resource(k).Summary, full.Resource(k).Summary) {
			t.Errorf("%s summary changed with the panel budget", k)
		}
		if none.Resource(k).Series != nil {
			t.Errorf("%s: SeriesPoints -1 kept %d series", k, len(none.Resource(k).Series))
		}
	}
	found := false
	for _, n := range notices {
		found = found || (n.Field == "cpu_stall_pct" && strings.Contains(n.Reason, "thinned to one point per"))
	}
	if !found {
		t.Errorf("no thinning notice in %v", notices)
	}
}
