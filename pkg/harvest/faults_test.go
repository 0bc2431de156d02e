package harvest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
)

func faultParams() harvest.Params {
	return harvest.Params{Start: 1700000000, End: 1700003600, SteadyStart: 1700000600, SteadyEnd: 1700003000, LagS: 70, Sel: harvest.DefaultSelectors()}
}

// TestHarvestFaultsNullEveryField: whatever the server does wrong, every
// field is null (never 0), every block says why, and Harvest returns.
func TestHarvestFaultsNullEveryField(t *testing.T) {
	cases := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"connection refused", func(t *testing.T) string { return promfake.ClosedURL(t) }},
		{"HTTP 502 HTML page", func(t *testing.T) string { return promfake.New(t, promfake.Always(promfake.HTML(502))).URL }},
		{"truncated JSON", func(t *testing.T) string {
			return promfake.New(t, promfake.Always(promfake.Truncated(promfake.Success("matrix", "[]")))).URL
		}},
		{"status error", func(t *testing.T) string {
			return promfake.New(t, promfake.Always(promfake.APIError("execution", "query too expensive"))).URL
		}},
		{"wrong result type", func(t *testing.T) string {
			return promfake.New(t, promfake.Always(promfake.OK(promfake.Success("string", promfake.Scalar(promfake.Point{T: 1, V: "x"}))))).URL
		}},
		{"timeout", func(t *testing.T) string {
			return promfake.New(t, promfake.Always(promfake.Reply{Delay: 2 * time.Second, Body: promfake.Success("matrix", "[]")})).URL
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := promql.New(promql.Config{URL: c.url(t), InstantTimeout: 200 * time.Millisecond, RangeTimeout: 200 * time.Millisecond, Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			res := harvest.Harvest(context.Background(), cl, faultParams())
			for _, x := range flatten(res) {
				if strings.HasSuffix(x.path, ".len") {
					if x.val != "0" {
						t.Errorf("%s = %s, want an empty timeseries", x.path, x.val)
					}
					continue
				}
				if x.val != "null" {
					t.Errorf("%s = %s, want null", x.path, x.val)
				}
			}
			blocks := map[string]bool{}
			for _, n := range res.Notices {
				blocks[n.Block] = true
			}
			for _, b := range []string{harvest.BlockPacking, harvest.BlockNodePSI, harvest.BlockPodPSI, harvest.BlockSnapshots,
				harvest.BlockActiveActors, harvest.BlockWorkingSet, harvest.BlockOOM} {
				if !blocks[b] {
					t.Errorf("no notice for block %s; notices: %v", b, res.Notices)
				}
			}
			if res.Packing.Timeseries == nil || res.ActiveActors.Timeseries == nil || res.WorkingSet.Node.Timeseries == nil {
				t.Errorf("timeseries must be [] (not null) on failure")
			}
			if len(res.Queries) == 0 {
				t.Errorf("no query recorded")
			}
		})
	}
}

// TestHarvestOneFailingQueryNullsOnlyItsFields: a fake that answers every
// query with an empty success except the memory PSI ones, which get a 502.
func TestHarvestOneFailingQueryNullsOnlyItsFields(t *testing.T) {
	pt := func(t int64, v string) promfake.Point { return promfake.Point{T: float64(t), V: v} }
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		q := r.Form.Get("query")
		switch {
		case strings.Contains(q, "container_pressure_memory"):
			return promfake.HTML(502)
		case strings.Contains(q, "container_pressure_cpu") && strings.HasPrefix(q, "sum by (pod)"):
			return promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{
				Labels: map[string]string{"pod": "benchmark-ateom-1"},
				Points: []promfake.Point{pt(1700000600, "1.5"), pt(1700000610, "2.5"), pt(1700003500, "9")},
			})))
		case strings.Contains(r.Path, "query_range"):
			return promfake.OK(promfake.Success("matrix", "[]"))
		default:
			return promfake.OK(promfake.Success("vector", "[]"))
		}
	})
	cl, err := promql.New(promql.Config{URL: srv.URL, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	res := harvest.Harvest(context.Background(), cl, faultParams())
	if res.PodPSI.Mem.Summary.P50 != nil || res.NodePSI.Mem.Summary.P50 != nil {
		t.Errorf("mem stall not null")
	}
	if got := fv(res.PodPSI.CPU.Summary.P50); got != "2.5" {
		t.Errorf("pod cpu p50 = %s, want 2.5 (steady samples 1.5 and 2.5; 9 is outside)", got)
	}
	if got := iv(res.PodPSI.Count); got != "1" {
		t.Errorf("pods = %s, want 1", got)
	}
	// node PSI: cpu and io succeeded with no series: a read that succeeded
	// gives a count (0), only three failures give null.
	if got := iv(res.NodePSI.Count); got != "0" {
		t.Errorf("nodes = %s, want 0", got)
	}
	var memNotice bool
	for _, n := range res.Notices {
		if n.Block == harvest.BlockPodPSI && n.Field == "mem_stall_pct" && strings.Contains(n.Reason, "failed") {
			memNotice = true
		}
	}
	if !memNotice {
		t.Errorf("no failure notice for pod_psi.mem_stall_pct: %v", res.Notices)
	}
}

// TestHarvestInvalidParams: nothing is read, and the reason is a notice.
func TestHarvestInvalidParams(t *testing.T) {
	srv := promfake.New(t, promfake.Always(promfake.HTML(500)))
	cl, _ := promql.New(promql.Config{URL: srv.URL})
	p := faultParams()
	p.End = p.Start - 1
	res := harvest.Harvest(context.Background(), cl, p)
	if srv.Count() != 0 || len(res.Notices) == 0 || !strings.Contains(res.Notices[0].Reason, "end before start") {
		t.Errorf("requests %d, notices %v", srv.Count(), res.Notices)
	}
}
