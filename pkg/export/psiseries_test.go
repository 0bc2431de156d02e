package export

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// rawBands is psi_series.json's band set computed plainly from series read
// straight from Prometheus: values per timestamp, min / PromQL quantile /
// max, the max of each step_s interval, rounded to 4 decimals.
func rawBands(series []promtest.RawSeries, by string, start, end, step int64) (bands [5][]*float64, names []string, peaks []float64) {
	n := int((end-start)/step + 1)
	at := map[int64][]float64{}
	type named struct {
		name string
		peak float64
	}
	var tops []named
	for _, s := range series {
		peak := math.Inf(-1)
		for _, p := range s.Samples {
			at[p.TMs/1000] = append(at[p.TMs/1000], p.V)
			peak = math.Max(peak, p.V)
		}
		if len(s.Samples) > 0 {
			tops = append(tops, named{s.Labels[by], percentile.Round4(peak)})
		}
	}
	quantile := func(q float64, v []float64) float64 {
		rank := q * float64(len(v)-1)
		lo := math.Floor(rank)
		hi := math.Min(float64(len(v)-1), lo+1)
		w := rank - lo
		return v[int(lo)]*(1-w) + v[int(hi)]*w
	}
	for b := range bands {
		bands[b] = make([]*float64, n)
	}
	for t, v := range at {
		sort.Float64s(v)
		k := (t - start) / step
		for b, x := range []float64{v[0], quantile(0.5, v), quantile(0.9, v), quantile(0.99, v), v[len(v)-1]} {
			if bands[b][k] == nil || x > *bands[b][k] {
				bands[b][k] = &x
			}
		}
	}
	for b := range bands {
		for _, p := range bands[b] {
			if p != nil {
				*p = percentile.Round4(*p)
			}
		}
	}
	sort.SliceStable(tops, func(i, j int) bool {
		if tops[i].peak != tops[j].peak {
			return tops[i].peak > tops[j].peak
		}
		return tops[i].name < tops[j].name
	})
	for i, s := range tops {
		if i == harvest.PSITopSeries {
			break
		}
		names = append(names, s.name)
		peaks = append(peaks, s.peak)
	}
	return bands, names, peaks
}

func sameValues(a, b []*float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || a[i] != nil && *a[i] != *b[i] {
			return false
		}
	}
	return true
}

// TestExportPSISeries exports a simulated run from a real Prometheus and
// checks psi_series.json against the PSI series read back from it, and
// the p90 band against Prometheus's own quantile.
func TestExportPSISeries(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tr := run.Truth
	dir := copyRun(t, run)
	e := newEnv(nil, nil)
	args := []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts"}
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	path := filepath.Join(dir, runs.FilePSISeries)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes for a %d s run", runs.FilePSISeries, len(data), tr.End-tr.Start)
	doc, err := artifact.ReadPSISeries(data)
	if err != nil {
		t.Fatal(err)
	}
	if doc.StepS != harvest.PSIBandStep(tr.Start, tr.End) {
		t.Errorf("step_s %d for a %d s run", doc.StepS, tr.End-tr.Start)
	}
	// The status lines count what the artifact holds.
	if want := fmt.Sprintf("psi_series.json (%d points per series, every %d s, in 6 of 6 PSI series sets)", len(doc.Node.CPU.Timestamps), doc.StepS); len(doc.Node.CPU.Timestamps) == 0 || !strings.Contains(e.out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, e.out.String())
	}
	// --no-cluster-facts leaves oom_events' four Kubernetes fields null.
	if want := fmt.Sprintf("measured %d of %d blocks in full; 1 with null fields: oom_events\n", len(harvest.BlockNames())-1, len(harvest.BlockNames())); !strings.Contains(e.out.String(), want) || strings.Contains(e.out.String(), "nothing was measured") {
		t.Errorf("output lacks %q or says nothing was measured:\n%s", want, e.out.String())
	}

	ctx := context.Background()
	sel := harvest.DefaultSelectors()
	for _, sc := range []struct {
		name  string
		scope *artifact.PSIScope
		by    string
		query func(harvest.Selectors, string) string
	}{{"node", &doc.Node, "instance", harvest.NodePSIQuery}, {"pod", &doc.Pod, "pod", harvest.PodPSIQuery}} {
		for i, res := range harvest.PSIResources() {
			got := []*harvest.PSIBandSet{&sc.scope.CPU, &sc.scope.Mem, &sc.scope.IO}[i]
			at := sc.name + "." + res.Key
			q := sc.query(sel, res.Metric)
			raw, err := prom.QueryRange(ctx, q, tr.Start, tr.End, harvest.Step)
			if err != nil {
				t.Fatal(err)
			}
			if got.Series == nil || *got.Series != len(raw) || len(raw) == 0 {
				t.Errorf("%s: series %v, Prometheus has %d", at, got.Series, len(raw))
				continue
			}
			if n := len(got.Timestamps); n == 0 || n > harvest.PSIBandsMaxPoints {
				t.Errorf("%s: %d timestamps", at, n)
			}
			want, names, peaks := rawBands(raw, sc.by, tr.Start, tr.End, doc.StepS)
			for b, vals := range [5][]*float64{got.Min, got.P50, got.P90, got.P99, got.Max} {
				if !sameValues(vals, want[b]) {
					t.Errorf("%s band %d differs from the series read back from Prometheus", at, b)
				}
			}
			if len(got.Top) != len(names) {
				t.Fatalf("%s: %d top series, want %d", at, len(got.Top), len(names))
			}
			for j, s := range got.Top {
				if s.Name != names[j] || s.Peak != peaks[j] || len(s.Values) != len(got.Timestamps) {
					t.Errorf("%s top %d: %s peak %v (%d values), want %s peak %v", at, j, s.Name, s.Peak, len(s.Values), names[j], peaks[j])
				}
			}

			// Prometheus's quantile by timestamp is the same band (the run
			// needs no thinning, so each point is one 10 s timestamp).
			if doc.StepS != harvest.Step {
				continue
			}
			pq, err := prom.QueryRange(ctx, "quantile(0.9, "+q+")", tr.Start, tr.End, harvest.Step)
			if err != nil || len(pq) != 1 {
				t.Fatalf("%s: quantile read: %v (%d series)", at, err, len(pq))
			}
			for _, p := range pq[0].Samples {
				k := (p.TMs/1000 - tr.Start) / doc.StepS
				if g := got.P90[k]; g == nil || math.Abs(*g-p.V) > 0.6e-4 {
					t.Errorf("%s p90 at %d: %v, Prometheus says %v", at, p.TMs/1000, g, p.V)
				}
			}
		}
	}
	if !strings.Contains(e.out.String(), "wrote "+path) {
		t.Errorf("no line for %s in %q", runs.FilePSISeries, e.out.String())
	}
}

// TestExportPSISeriesUnreachable: with every PSI read failed the file is
// still written, each band set "series": null with empty arrays.
func TestExportPSISeriesUnreachable(t *testing.T) {
	closed := promfake.ClosedURL(t)
	run := cache.Generated(t, "steady")
	dir := copyRun(t, run)
	e := newEnv(nil, nil)
	if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", closed, "--no-cluster-facts", "--timeout", "2s"}, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, runs.FilePSISeries))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := artifact.ReadPSISeries(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*harvest.PSIBandSet{&doc.Node.CPU, &doc.Node.Mem, &doc.Node.IO, &doc.Pod.CPU, &doc.Pod.Mem, &doc.Pod.IO} {
		if b.Series != nil || len(b.Timestamps) != 0 || len(b.Max) != 0 || len(b.Top) != 0 {
			t.Errorf("a failed read: %+v, want series null and empty arrays", b)
		}
	}
}
