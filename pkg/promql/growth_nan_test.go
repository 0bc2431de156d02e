package promql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/promql"
)

// A counter series whose every sample in and around the window is NaN or
// ±Inf measured nothing: WindowGrowth leaves it out, so a family of only
// such series reads as absent (the harvest's null), never as a growth of
// 0; a finite series next to it is kept with its growth. (Regression: the
// NaN/Inf row of the export fault matrix reported oom_events 0.)
func TestWindowGrowthDropsSeriesWithoutFiniteSamples(t *testing.T) {
	nanLs := map[string]string{"__name__": "c_total", "instance": "nan"}
	okLs := map[string]string{"__name__": "c_total", "instance": "ok"}
	tests := []struct {
		name    string
		finite  bool // the "ok" series exists too
		wantLen int
		wantSum float64
	}{
		{"every series NaN/Inf: absent", false, 0, 0},
		{"one finite series next to a NaN one", true, 1, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := promfake.New(t, func(r promfake.Request) promfake.Reply {
				q := r.Form.Get("query")
				streams := []promfake.Stream{}
				add := func(ls map[string]string, pts ...promfake.Point) {
					streams = append(streams, promfake.Stream{Labels: ls, Points: pts})
				}
				switch {
				case strings.HasPrefix(q, "resets("):
					add(map[string]string{"instance": "nan"}, promfake.Point{T: 200, V: "NaN"})
					if tc.finite {
						add(map[string]string{"instance": "ok"}, promfake.Point{T: 200, V: "0"})
					}
					return promfake.OK(vec(streams...))
				case strings.Contains(q, "["):
					add(nanLs, promfake.Point{T: 90, V: "NaN"}, promfake.Point{T: 150, V: "+Inf"}, promfake.Point{T: 200, V: "-Inf"})
					if tc.finite {
						add(okLs, promfake.Point{T: 90, V: "3"}, promfake.Point{T: 200, V: "10"})
					}
					return promfake.OK(promfake.Success("matrix", promfake.Matrix(streams...)))
				}
				at := r.Form.Get("time")
				add(nanLs, promfake.Point{T: 100, V: map[string]string{"100": "NaN", "200": "+Inf"}[at]})
				if tc.finite {
					add(okLs, promfake.Point{T: 100, V: map[string]string{"100": "3", "200": "10"}[at]})
				}
				return promfake.OK(vec(streams...))
			})
			c, err := promql.New(promql.Config{URL: s.URL})
			if err != nil {
				t.Fatal(err)
			}
			g, err := c.WindowGrowth(context.Background(), "c_total", 100, 200)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Series) != tc.wantLen || g.Delta() != tc.wantSum {
				t.Fatalf("%d series, delta %v; want %d series, delta %v: %+v", len(g.Series), g.Delta(), tc.wantLen, tc.wantSum, g.Series)
			}
			for _, sg := range g.Series {
				if sg.Labels["instance"] == "nan" {
					t.Errorf("the all-NaN series was kept: %+v", sg)
				}
			}
		})
	}
}
