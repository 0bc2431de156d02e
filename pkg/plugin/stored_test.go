package plugin

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

const day = 86400

// exportedRun runs `density export` on the env's simulated run against its
// real Prometheus and returns the artifacts' directory.
func exportedRun(t testing.TB, e *env) string {
	t.Helper()
	r, _ := promCache.Prometheus(t, e.name)
	dir := t.TempDir()
	copyLocustFiles(t, r.Dir, dir)
	tr := e.truth
	var out bytes.Buffer
	env := export.DefaultEnv(io.Discard, &out)
	code := export.Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", e.prom.URL,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10), "--atelet-lag-s", strconv.FormatInt(tr.LagS, 10),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--no-cluster-facts", "--no-wait"}, env)
	if code != cli.ExitOK {
		t.Fatalf("export exit %d: %s", code, out.String())
	}
	return dir
}

// storeShifted puts the exported artifacts into the env's store as the run
// of the same test k days later (a nightly run Prometheus never held): its
// server_summary.json and stats.jsonl rows with every time moved by k days.
// It returns the run's id and its stored server_summary measurements.
func storeShifted(t testing.TB, e *env, exported string, k int64) (string, artifact.Object) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exported, runs.FileServerSummary))
	if err != nil {
		t.Fatal(err)
	}
	s, err := artifact.ReadServerSummary(b)
	if err != nil {
		t.Fatal(err)
	}
	shift := k * day
	md := s.Meta
	md.Start, md.End, md.SteadyStart, md.SteadyEnd = md.Start+shift, md.End+shift, md.SteadyStart+shift, md.SteadyEnd+shift
	md.Tag = "n" + strconv.FormatInt(k, 10)
	r := s.Result
	for i := range r.Packing.Timeseries {
		r.Packing.Timeseries[i].Timestamp += shift
	}
	for i := range r.ActiveActors.Timeseries {
		r.ActiveActors.Timeseries[i].Timestamp += shift
	}
	for _, name := range []string{"node", "worker", "atelet", "actor", "per_actor"} {
		ws := r.WorkingSet.Block(name)
		for i := range ws.Timeseries {
			ws.Timeseries[i].Timestamp += shift
		}
	}
	// Values differ between nights, so that a row taken from the wrong run
	// shows.
	if p := r.Snapshots.RestoreP99S; p != nil {
		v := *p + float64(k)
		r.Snapshots.RestoreP99S = &v
	}
	dir := filepath.Join(e.storeRoot, "runs", md.TestName, "run_date="+time.Unix(md.Start, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(md.Start, 10), "run_tag="+md.Tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	summary, err := artifact.ServerSummaryJSON(md, r)
	if err != nil {
		t.Fatal(err)
	}
	row := artifact.ServerSummaryRow(md, r)
	line, err := row.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		runs.FileServerSummary: summary,
		runs.FileStatsJSONL:    append(line, '\n'),
		runs.FileStatus:        []byte(`{"locust_exit_code": 0, "stats_generated": true}`),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return runs.StoreRunID(md.TestName, md.Start, md.Tag), row.Measurements
}

// noticeTexts are every notice of a response's frames.
func noticeTexts(r backend.DataResponse) string {
	var b strings.Builder
	for _, f := range r.Frames {
		if f.Meta == nil {
			continue
		}
		for _, n := range f.Meta.Notices {
			b.WriteString(n.Text + "\n")
		}
	}
	return b.String()
}

// A results store of ten nightly runs that `density export` wrote, none of
// which Prometheus holds any more: `summary` over the range shows every
// stored value of every run, key for key, without one Prometheus request;
// per-node PSI panels of such a run are empty with the retention notice
// while the stored PSI summary still shows.
func TestStoredRunsOutliveRetention(t *testing.T) {
	e := newEnv(t, "steady")
	exported := exportedRun(t, e)
	want := map[string]artifact.Object{}
	for k := int64(1); k <= 10; k++ {
		id, m := storeShifted(t, e, exported, k)
		want[id] = m
	}
	proxy := newCountingProxy(t, e.prom.URL)
	e.promURL = proxy.URL
	e.jsonData["discoverRuns"] = false
	e.jsonData["gates"] = "gates:\n  - key: restore_p99_s\n    max_regression_pct: 10\n  - key: cluster_packing_p50\n    min: 0.95\n"
	tr := e.truth
	e.now = time.Unix(tr.End+20*day, 0)
	c := e.client(t)

	resp := e.query(t, c, q("A", tr.Start+day-600, tr.Start+10*day+600, map[string]any{"queryType": "summary", "run": "range"}))["A"]
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if n := proxy.n.Load(); n != 0 {
		t.Errorf("summary of 10 stored runs sent %d Prometheus requests, want 0", n)
	}
	f := summaryTable(t, resp)
	ids := field(t, f, "id")
	if ids.Len() != 10 {
		t.Fatalf("%d rows, want 10", ids.Len())
	}
	shown, total := 0, 0
	for i := range ids.Len() {
		id := ids.At(i).(string)
		m, ok := want[id]
		if !ok {
			t.Fatalf("row %d: run %q is not one of the stored runs", i, id)
		}
		for _, kv := range m {
			got, ok := field(t, f, kv.Key).ConcreteAt(i)
			if !ok {
				got = nil // ConcreteAt gives a zero with false for null
			}
			total++
			if kv.Value == nil {
				if got != nil {
					t.Errorf("%s %s = %v, stored null", id, kv.Key, got)
				}
				continue
			}
			wantV, _ := strconv.ParseFloat(kv.Value.(string), 64)
			if g, ok := got.(float64); !ok || g != wantV {
				t.Errorf("%s %s = %v, stored %v", id, kv.Key, got, wantV)
				continue
			}
			shown++
		}
	}
	nonNull := 0
	for _, m := range want {
		for _, kv := range m {
			if kv.Value != nil {
				nonNull++
			}
		}
	}
	t.Logf("summary over 10 stored runs: %d of %d stored values shown (%d keys), %d Prometheus requests", shown, nonNull, total, proxy.n.Load())
	if shown != nonNull {
		t.Errorf("%d of %d stored values shown", shown, nonNull)
	}
	// One notice for the ten runs, naming the first three in run order.
	src := fmt.Sprintf("source: results store (the server_summary row of its stored stats.jsonl) (10 runs, e.g. %s, %s, %s)\n", ids.At(0), ids.At(1), ids.At(2))
	if got := strings.Count(noticeTexts(resp), "source: results store"); got != 1 || !strings.Contains(noticeTexts(resp), src) {
		t.Errorf("%d notices say the runs' values are their stored server_summary row, want one %q:\n%s", got, src, noticeTexts(resp))
	}

	// Every other query type over the stored runs answers from their
	// artifacts too: not one Prometheus request.
	one := runs.StoreRunID(tr.TestName, tr.Start+4*day, "n4")
	prev := runs.StoreRunID(tr.TestName, tr.Start+3*day, "n3")
	for _, m := range []map[string]any{
		{"queryType": "freshness"},
		{"queryType": "summary", "run": "range", "format": "numeric"},
		{"queryType": "summary", "run": one, "format": "numeric"},
		{"queryType": "frontier", "run": one}, {"queryType": "snapshots", "run": one},
		{"queryType": "oomEvents", "run": one}, {"queryType": "clusterFacts", "run": one},
		{"queryType": "phases", "run": one}, {"queryType": "ladder", "run": one},
		{"queryType": "ladder", "run": one, "format": "numeric"},
		{"queryType": "gates", "run": one, "baseline": prev},
		{"queryType": "gates", "run": one, "baseline": prev, "format": "numeric"},
		{"queryType": "compare", "baseline": prev, "candidate": one},
		{"queryType": "changePoints", "testName": tr.TestName},
		{"queryType": "annotations"},
		{"queryType": "annotations", "testName": tr.TestName, "changePoints": true},
		{"queryType": "summary", "run": "latest", "testName": tr.TestName},
		{"queryType": "gates", "run": "latest", "testName": tr.TestName, "baseline": "latest"},
		{"queryType": "gates", "run": "latest", "testName": tr.TestName, "format": "numeric"},
	} {
		before := proxy.n.Load()
		r := e.query(t, c, q("D", tr.Start+day-600, tr.Start+10*day+600, m))["D"]
		if r.Error != nil {
			t.Errorf("%v: %v", m, r.Error)
			continue
		}
		t.Logf("%v: %d Prometheus requests", m, proxy.n.Load()-before)
		if n := proxy.n.Load() - before; n != 0 {
			t.Errorf("%v of stored runs sent %d Prometheus requests, want 0", m, n)
		}
	}

	// A run stored with its psi_series.json: the PSI panel is the stored
	// bands and top series, without a Prometheus request.
	b, err := os.ReadFile(filepath.Join(exported, runs.FilePSISeries))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := artifact.ReadPSISeries(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*artifact.PSIScope{&ps.Node, &ps.Pod} {
		for _, bs := range []*harvest.PSIBandSet{&sc.CPU, &sc.Mem, &sc.IO} {
			for i := range bs.Timestamps {
				bs.Timestamps[i] += 5 * day
			}
		}
	}
	if b, err = artifact.PSISeriesJSON(ps); err != nil {
		t.Fatal(err)
	}
	id5 := runs.StoreRunID(tr.TestName, tr.Start+5*day, "n5")
	if err := os.WriteFile(filepath.Join(e.storeRoot, "runs", tr.TestName, "run_date="+time.Unix(tr.Start+5*day, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(tr.Start+5*day, 10), "run_tag=n5", runs.FilePSISeries), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.uid += "-psi" // a new instance: the store listing is cached
	c = e.client(t)
	before := proxy.n.Load()
	stored := e.query(t, c, q("C", tr.Start+5*day-600, tr.End+5*day+600, map[string]any{"queryType": "psi", "run": id5, "scope": "pod", "resource": "cpu"}))["C"]
	if stored.Error != nil {
		t.Fatal(stored.Error)
	}
	if n := proxy.n.Load() - before; n != 0 {
		t.Errorf("PSI panel of a run stored with %s sent %d Prometheus requests", runs.FilePSISeries, n)
	}
	sf := stored.Frames[0]
	for _, name := range bandFields {
		fl := field(t, sf, name)
		if fl.Len() == 0 {
			t.Errorf("stored band %s is empty", name)
		}
	}
	if v, ok := field(t, sf, "p99").ConcreteAt(0); !ok || ps.Pod.CPU.P99[0] == nil || v != *ps.Pod.CPU.P99[0] {
		t.Errorf("stored p99[0] %v, file %v", v, ps.Pod.CPU.P99[0])
	}
	if !strings.Contains(noticeTexts(stored), runs.FilePSISeries) {
		t.Errorf("notices do not name %s:\n%s", runs.FilePSISeries, noticeTexts(stored))
	}

	// A per-node PSI panel of one of them: the stored summary, no series,
	// and the notices say where each part came from.
	id := runs.StoreRunID(tr.TestName, tr.Start+3*day, "n3")
	psi := e.query(t, c, q("B", tr.Start+3*day-600, tr.End+3*day+600, map[string]any{"queryType": "psi", "run": id, "scope": "node", "resource": "cpu"}))["B"]
	if psi.Error != nil {
		t.Fatal(psi.Error)
	}
	series, summary := psi.Frames[0], psi.Frames[1]
	if len(series.Fields) > 1 {
		t.Errorf("series frame of a run Prometheus no longer holds has %d fields", len(series.Fields))
	}
	p99, _ := field(t, summary, "p99").ConcreteAt(0)
	if w := storedValue(want[id], "psi_cpu_stall_p99"); p99 != w {
		t.Errorf("stored PSI p99 %v, want %v", p99, w)
	}
	notes := noticeTexts(psi)
	t.Logf("notices of a stored run's PSI panel past retention:\n%s", notes)
	for _, s := range []string{"source: results store", "Prometheus holds no samples for this run (past its retention?)"} {
		if !strings.Contains(notes, s) {
			t.Errorf("notices lack %q:\n%s", s, notes)
		}
	}
}

// A stored run whose server_summary.json is damaged is harvested instead,
// with a notice saying so, and its numbers are the harvest's.
func TestStoredRunCorruptSummaryFallsBack(t *testing.T) {
	e := newEnv(t, "steady")
	exported := exportedRun(t, e)
	for _, f := range []string{runs.FileServerSummary, runs.FileStatsJSONL} {
		b, err := os.ReadFile(filepath.Join(exported, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == runs.FileServerSummary {
			b = b[:len(b)/2]
		}
		if err := os.WriteFile(filepath.Join(e.runDir(), f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxy := newCountingProxy(t, e.prom.URL)
	e.promURL = proxy.URL
	tr := e.truth
	resp := e.query(t, e.client(t), q("A", tr.Start-600, tr.End+600, map[string]any{"queryType": "snapshots", "run": e.runID}))["A"]
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if proxy.n.Load() == 0 {
		t.Error("no Prometheus request: the damaged file was not harvested around")
	}
	notes := noticeTexts(resp)
	if !strings.Contains(notes, "server_summary.json could not be read") || !strings.Contains(notes, "harvested from Prometheus") {
		t.Errorf("notices do not say the run was harvested instead:\n%s", notes)
	}
	h := e.expected(t)
	got, _ := field(t, resp.Frames[0], "restore_p99_s").ConcreteAt(0)
	if w := h.Snapshots.RestoreP99S; w == nil || got != *w {
		t.Errorf("restore_p99_s %v, harvest %v", got, w)
	}
}

// storedValue is a stored row's measurement as the number a frame holds
// (nil for null).
func storedValue(o artifact.Object, k string) any {
	v, _ := o.Get(k)
	if s, ok := v.(string); ok {
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	return v
}

// bandFields are the field names of a PSI panel's distribution bands.
var bandFields = func() []string {
	var out []string
	for _, b := range harvest.PSIBandList() {
		out = append(out, b.Name)
	}
	return out
}()

// Above maxSeries a PSI panel gets Prometheus's bands across the series:
// they equal a per-timestamp computation from every series at the same
// resolution with PromQL's quantile rule; and the series follow the panel's
// MaxDataPoints.
func TestPSIBands(t *testing.T) {
	e := newEnv(t, "steady")
	e.jsonData["maxSeries"] = 1
	e.jsonData["topSeries"] = 2
	tr := e.truth
	c := e.client(t)
	from, to := tr.Start-600, tr.End+600
	narrow := func(refID string, model map[string]any) backend.DataQuery {
		qq := q(refID, from, to, model)
		qq.MaxDataPoints = 100
		return qq
	}
	resp := e.query(t, c,
		narrow("A", map[string]any{"queryType": "psi", "run": e.runID, "scope": "pod", "resource": "cpu"}),
		narrow("B", map[string]any{"queryType": "psi", "run": e.runID, "scope": "pod", "resource": "cpu", "series": "all"}))
	bands, all := resp["A"], resp["B"]
	if bands.Error != nil || all.Error != nil {
		t.Fatal(bands.Error, all.Error)
	}
	bf, af := bands.Frames[0], all.Frames[0]
	step := newPanelGrid(time.Unix(from, 0), time.Unix(to, 0), 10*time.Second, 100).step
	if n := af.Rows(); n > int((tr.End-tr.Start)/step)+2 {
		t.Errorf("%d points per series at MaxDataPoints 100 (step %d s)", n, step)
	}
	if len(af.Fields) < 3 {
		t.Fatalf("series: all gave %d fields", len(af.Fields))
	}
	if !strings.Contains(noticeTexts(bands), "showing bands") {
		t.Errorf("no notice says the panel shows bands:\n%s", noticeTexts(bands))
	}
	for _, name := range bandFields {
		field(t, bf, name)
	}
	if top := len(bf.Fields) - 1 - len(bandFields); top != 2 {
		t.Errorf("%d top series, want 2", top)
	}
	// The top series are the two pods with the highest peak over every 10 s
	// sample of the panel's window, as one max_over_time over all of it has
	// them.
	start, end := floorTo(tr.Start, step), floorTo(tr.End, step)
	peaks, err := e.prom.Query(context.Background(), "max_over_time(("+harvest.PodPSIQuery(harvest.DefaultSelectors(), "cpu")+")["+
		strconv.FormatInt(end-start, 10)+"s:10s])", end)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(peaks, func(a, b promtest.RawSeries) int {
		return cmp.Or(cmp.Compare(b.Samples[0].V, a.Samples[0].V), strings.Compare(a.Labels["pod"], b.Labels["pod"]))
	})
	if len(peaks) < 3 || peaks[1].Samples[0].V == peaks[2].Samples[0].V {
		t.Fatalf("%d pods, or a tie at the second peak: the test needs a clear top 2", len(peaks))
	}
	var want, got []string
	for _, p := range peaks[:2] {
		want = append(want, p.Labels["pod"])
	}
	for _, fl := range bf.Fields[1+len(bandFields):] {
		got = append(got, fl.Labels["pod"])
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("top series %v, want the highest peaks %v", got, want)
	}
	if bf.Rows() != af.Rows() {
		t.Fatalf("bands have %d rows, series %d", bf.Rows(), af.Rows())
	}
	checked := 0
	for i := range af.Rows() {
		var vals []float64
		for _, fl := range af.Fields[1:] {
			if v, ok := fl.ConcreteAt(i); ok {
				vals = append(vals, v.(float64))
			}
		}
		if len(vals) == 0 {
			continue
		}
		slices.Sort(vals)
		want := map[string]float64{"min": vals[0], "max": vals[len(vals)-1],
			"p50": promQuantile(0.5, vals), "p90": promQuantile(0.9, vals), "p99": promQuantile(0.99, vals)}
		for name, w := range want {
			got, ok := field(t, bf, name).ConcreteAt(i)
			if !ok || math.Abs(got.(float64)-w) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Fatalf("row %d %s = %v, want %v from %d series", i, name, got, w, len(vals))
			}
		}
		checked++
	}
	t.Logf("bands equal the per-timestamp computation at %d timestamps (step %d s)", checked, step)
	if checked == 0 {
		t.Fatal("no timestamp compared")
	}
}

// promQuantile is PromQL's quantile over sorted values: linear between the
// ranks around φ·(n−1).
func promQuantile(phi float64, sorted []float64) float64 {
	rank := phi * float64(len(sorted)-1)
	lo := math.Floor(rank)
	hi := math.Min(lo+1, float64(len(sorted)-1))
	w := rank - lo
	return sorted[int(lo)]*(1-w) + sorted[int(hi)]*w
}

// BenchmarkStoredTrend is the Runs over time summary panel over 30 stored
// nightly runs: cold (a new datasource instance each time) and cached, with
// the Prometheus requests per load.
func BenchmarkStoredTrend(b *testing.B) {
	e := newEnv(b, "steady")
	exported := exportedRun(b, e)
	for k := int64(1); k <= 30; k++ {
		storeShifted(b, e, exported, k)
	}
	proxy := newCountingProxy(b, e.prom.URL)
	e.promURL = proxy.URL
	e.jsonData["discoverRuns"] = false
	tr := e.truth
	e.now = time.Unix(tr.End+40*day, 0)
	qs := q("A", tr.Start+day-600, tr.Start+30*day+600, map[string]any{"queryType": "summary", "run": "range"})
	for _, mode := range []string{"cold", "cached"} {
		b.Run(mode, func(b *testing.B) {
			base := e.uid
			i := 0
			for b.Loop() {
				if mode == "cold" {
					i++
					e.uid = base + "-cold-" + strconv.Itoa(i)
				}
				resp := e.query(b, e.client(b), qs)["A"]
				if resp.Error != nil || resp.Frames[0].Rows() != 30 {
					b.Fatalf("%v, %d rows", resp.Error, resp.Frames[0].Rows())
				}
			}
			e.uid = base
			b.ReportMetric(float64(proxy.n.Load())/float64(b.N), "prom-requests/op")
		})
	}
}

// The reference runner's artifacts: working_set.ateom is the worker block,
// a missing oom_events block is harvested (Prometheus still has the run),
// and a nested trial_summary maps ap_ratio_* to actors_per_pod_*.
func TestReferenceRunnerArtifacts(t *testing.T) {
	e := newEnv(t, "steady")
	exported := exportedRun(t, e)
	b, err := os.ReadFile(filepath.Join(exported, runs.FileServerSummary))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := artifact.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var ref artifact.Object
	var worker any
	for _, f := range doc.(artifact.Object) {
		switch f.Key {
		case "oom_events":
			continue
		case "working_set":
			var ws artifact.Object
			for _, g := range f.Value.(artifact.Object) {
				if g.Key == "worker" {
					g.Key, worker = "ateom", g.Value
				}
				ws = append(ws, g)
			}
			f.Value = ws
		}
		ref = append(ref, f)
	}
	rb, err := artifact.MarshalIndent(ref)
	if err != nil {
		t.Fatal(err)
	}
	tr := e.truth
	trial := `{"timestamp": "` + artifact.DataTimestamp(tr.Start) + `", "tag": "` + tr.Tag + `", "test_name": "` + tr.TestName +
		`", "metric": "trial_summary", "measurements": {"raw_configuration": {"node_count": 3, "machine_type": "n2-standard-8"}, "frontiers": {"ap_ratio_p50": 2.5, "ap_ratio_p99": 4.0}}}` + "\n"
	for name, content := range map[string][]byte{runs.FileServerSummary: rb, runs.FileStatsJSONL: []byte(trial)} {
		if err := os.WriteFile(filepath.Join(e.runDir(), name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client(t)
	resp := e.query(t, c,
		q("A", tr.Start-600, tr.End+600, map[string]any{"queryType": "workingSet", "run": e.runID, "block": "worker"}),
		q("B", tr.Start-600, tr.End+600, map[string]any{"queryType": "oomEvents", "run": e.runID}),
		q("C", tr.Start-600, tr.End+600, map[string]any{"queryType": "frontier", "run": e.runID}))
	for _, r := range resp {
		if r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	wantP99 := func() any {
		for _, f := range worker.(artifact.Object) {
			if f.Key == "summary" {
				v, _ := f.Value.(artifact.Object).Get("p99")
				return v
			}
		}
		return nil
	}()
	if got, _ := field(t, resp["A"].Frames[1], "p99").ConcreteAt(0); got != wantP99 {
		t.Errorf("worker p99 %v, stored ateom p99 %v", got, wantP99)
	}
	h := e.expected(t)
	if got, ok := field(t, resp["B"].Frames[0], "node").ConcreteAt(0); !ok || h.OOM.Node == nil || got != *h.OOM.Node {
		t.Errorf("oom node %v, harvest %v", got, h.OOM.Node)
	}
	if !strings.Contains(noticeTexts(resp["A"]), "source: results store") || strings.Contains(noticeTexts(resp["B"]), "source: results store") {
		t.Errorf("sources:\nworkingSet %s\noomEvents %s", noticeTexts(resp["A"]), noticeTexts(resp["B"]))
	}
	f := resp["C"].Frames[0]
	if got, _ := field(t, f, "actors_per_pod_p50").ConcreteAt(0); got != 2.5 {
		t.Errorf("actors_per_pod_p50 %v, want 2.5 from ap_ratio_p50", got)
	}
}

// One dashboard load of a finished run by where its numbers come from: a
// run harvested from Prometheus, one stored with server_summary.json and
// stats.jsonl (PSI series from Prometheus), and one stored with
// psi_series.json too (nothing from Prometheus), cold and cached.
func TestDashboardLoadBySource(t *testing.T) {
	base := newEnv(t, "steady")
	exported := exportedRun(t, base)
	for _, c := range []struct {
		name  string
		files []string
	}{
		{"harvested", nil},
		{"stored without psi_series.json", []string{runs.FileServerSummary, runs.FileStatsJSONL}},
		{"stored", []string{runs.FileServerSummary, runs.FileStatsJSONL, runs.FilePSISeries}},
	} {
		e := newEnv(t, "steady")
		for _, f := range c.files {
			b, err := os.ReadFile(filepath.Join(exported, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.runDir(), f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		proxy := newCountingProxy(t, e.prom.URL)
		e.promURL = proxy.URL
		e.jsonData["discoverRuns"] = false
		cold := loadDashboard(t, e)
		n := proxy.n.Load()
		cached := loadDashboard(t, e)
		t.Logf("%-32s cold %4d Prometheus requests %8v, cached %d requests %8v", c.name, n, cold.Round(time.Millisecond), proxy.n.Load()-n, cached.Round(time.Millisecond))
		if c.name == "stored" && n != 0 {
			t.Errorf("a run stored with all its artifacts sent %d Prometheus requests", n)
		}
		if c.name != "stored" && n == 0 {
			t.Errorf("%s: no Prometheus request", c.name)
		}
	}
}

// pointsProxy forwards to Prometheus and counts, in the answers of range
// queries, the points each series gets per query (summed over the chunks
// the client cut a read into) and the step it was read at.
type pointsProxy struct {
	*httptest.Server
	mu    sync.Mutex
	reads map[string]*rangeRead // by query and step
}

// rangeRead is one PromQL range query's answers at one step as the server
// sent them.
type rangeRead struct {
	step     string
	requests int
	points   map[string]int // by the series' label set
}

func newPointsProxy(t testing.TB, target string) *pointsProxy {
	t.Helper()
	p := &pointsProxy{reads: map[string]*rangeRead{}}
	upstream := &http.Client{Transport: &http.Transport{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form := r.URL.Query()
		if f, err := url.ParseQuery(string(body)); err == nil {
			for k, v := range f {
				form[k] = append(form[k], v...)
			}
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.Header.Del("Accept-Encoding")
		resp, err := upstream.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/query_range") && resp.StatusCode == http.StatusOK {
			p.count(form.Get("query"), form.Get("step"), answer)
		}
		for k, vs := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(func() {
		p.Close()
		upstream.CloseIdleConnections()
	})
	return p
}

func (p *pointsProxy) count(query, step string, answer []byte) {
	var a struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values []json.RawMessage `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := query + " step " + step
	rd := p.reads[key]
	if rd == nil {
		rd = &rangeRead{step: step, points: map[string]int{}}
		p.reads[key] = rd
	}
	rd.requests++
	for _, s := range a.Data.Result {
		rd.points[fmt.Sprint(s.Metric)] += len(s.Values)
	}
}

// take returns the reads counted since the last take and forgets them.
func (p *pointsProxy) take() map[string]*rangeRead {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.reads
	p.reads = map[string]*rangeRead{}
	return out
}

// Panel resolution on a 6 h simulated run at 1,000 points wide, counted in
// Prometheus's answers: a run stored without psi_series.json reads its PSI
// series (every series, or the bands and top series) at the panel's step,
// at most 1,100 points per series, and its summary frame is the stored
// exact one; a run outside the store reads the same series at the panel's
// step (only those reads are counted) and its summary is the exact 10 s
// harvest's, equal to the stored one.
func TestPanelResolutionPointsPerSeries(t *testing.T) {
	simDir := t.TempDir()
	// Four pods on one node, scraped every 30 s: 6 hours backfill in seconds.
	tr, err := simrun.Generate(simrun.Large(simrun.LargeParams{Hours: 6, Pods: 4, ScrapeS: 30}), simDir)
	if err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, filepath.Join(simDir, simrun.OMFile))
	exported := t.TempDir()
	copyLocustFiles(t, simDir, exported)
	var out bytes.Buffer
	if code := export.Main(context.Background(), []string{"--run-dir", exported, "--prometheus-url", srv.URL,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10), "--atelet-lag-s", strconv.FormatInt(tr.LagS, 10),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--no-cluster-facts", "--no-wait", "--no-report"}, export.DefaultEnv(io.Discard, &out)); code != cli.ExitOK {
		t.Fatalf("export exit %d: %s", code, out.String())
	}
	b, err := os.ReadFile(filepath.Join(exported, runs.FileServerSummary))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := artifact.ReadServerSummary(b)
	if err != nil {
		t.Fatal(err)
	}

	from, to := tr.Start-600, tr.End+600
	grid := newPanelGrid(time.Unix(from, 0), time.Unix(to, 0), 10*time.Second, 1000)
	proxy := newPointsProxy(t, srv.URL)
	for _, c := range []struct {
		name  string
		files []string
	}{
		{"stored without psi_series.json", []string{runs.FileServerSummary, runs.FileStatsJSONL}},
		{"outside the store", nil},
	} {
		root := t.TempDir()
		dir := filepath.Join(root, "runs", tr.TestName, "run_date="+time.Unix(tr.Start, 0).UTC().Format("2006-01-02"),
			"run_ts="+strconv.FormatInt(tr.Start, 10), "run_tag="+tr.Tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		copyLocustFiles(t, simDir, dir)
		for _, f := range c.files {
			b, err := os.ReadFile(filepath.Join(exported, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, runs.FileStatus), []byte(`{"locust_exit_code": 0, "stats_generated": true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		e := &env{name: "resolution", promURL: proxy.URL, storeRoot: root,
			runID: runs.StoreRunID(tr.TestName, tr.Start, tr.Tag), now: time.Unix(tr.End+3600, 0),
			jsonData: map[string]any{"resultsStore": "file://" + root, "discoverRuns": false, "ateletLagSeconds": tr.LagS, "timeoutSeconds": 30},
			uid:      fmt.Sprintf("ds-resolution-%d", envSeq.Add(1))}
		cl := e.client(t)
		for _, scope := range []string{"node", "pod"} {
			for _, series := range []string{"auto", "bands"} {
				what := fmt.Sprintf("%s, %s psi, series %s", c.name, scope, series)
				proxy.take()
				resp := e.query(t, cl, q("A", from, to, map[string]any{"queryType": "psi", "run": e.runID, "scope": scope, "resource": "cpu", "series": series}))["A"]
				if resp.Error != nil {
					t.Fatalf("%s: %v", what, resp.Error)
				}
				panelReads, most, perRead := 0, 0, []string{}
				for query, rd := range proxy.take() {
					if rd.step != strconv.FormatInt(grid.step, 10) {
						if c.files != nil {
							t.Errorf("%s: %s read at step %s, the panel's is %d s", what, query, rd.step, grid.step)
						}
						continue // the exact harvest of a run outside the store
					}
					panelReads++
					n := 0
					for _, pts := range rd.points {
						n = max(n, pts)
					}
					most = max(most, n)
					perRead = append(perRead, fmt.Sprintf("%d series × ≤ %d points (%d requests)", len(rd.points), n, rd.requests))
					if n > 1100 {
						t.Errorf("%s: %s read %d points per series at MaxDataPoints 1000", what, query, n)
					}
				}
				t.Logf("%s: step %d s, %d panel reads, most points per series %d: %s", what, grid.step, panelReads, most, strings.Join(perRead, "; "))
				if panelReads == 0 || most == 0 {
					t.Errorf("%s: no series read at the panel's step", what)
				}
				if series == "bands" && panelReads != len(harvest.PSIBandList())+2 {
					t.Errorf("%s: %d panel reads, want %d bands, the peaks and the top series", what, panelReads, len(harvest.PSIBandList())+2)
				}
				res := stored.Result.NodePSI.CPU.Summary
				if scope == "pod" {
					res = stored.Result.PodPSI.CPU.Summary
				}
				sf := resp.Frames[1]
				for i, k := range percentile.Keys() {
					got, ok := field(t, sf, k).ConcreteAt(0)
					if w := res.Values()[i]; w == nil || !ok || got != *w {
						t.Errorf("%s: summary %s = %v, stored %v", what, k, got, w)
					}
				}
				src := "source: results store"
				if has := strings.Contains(noticeTexts(resp), src); has != (c.files != nil) {
					t.Errorf("%s: notices (%q %v):\n%s", what, src, has, noticeTexts(resp))
				}
			}
		}
	}
}
