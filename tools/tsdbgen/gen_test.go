package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

func smallParams() Params {
	p := DefaultParams()
	p.Nodes, p.Pods, p.Hours, p.Restarts = 3, 9, 1, 1
	return p
}

// TestGenerateBlock writes a small cluster and reads the block back with
// the TSDB library: every series and sample counted by the generator is in
// it, the label conventions match what the harvest selects, and the
// restarted atelet's series carry a staleness marker.
func TestGenerateBlock(t *testing.T) {
	dir := t.TempDir()
	p := smallParams()
	tr, err := Generate(context.Background(), p, dir, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	var blockDir string
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 26 { // a ULID
			blockDir = filepath.Join(dir, "data", e.Name())
		}
	}
	if blockDir == "" {
		t.Fatalf("no block in %v", entries)
	}
	b, err := tsdb.OpenBlock(log.NewNopLogger(), blockDir, chunkenc.NewPool())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	meta := b.Meta()
	if int64(meta.Stats.NumSeries) != tr.Series || int64(meta.Stats.NumSamples) != tr.Samples {
		t.Errorf("block has %d series / %d samples, generator counted %d / %d",
			meta.Stats.NumSeries, meta.Stats.NumSamples, tr.Series, tr.Samples)
	}
	w := newWorld(p)
	if meta.MinTime != w.telFrom*1000 || meta.MaxTime > (w.telTo+p.shift()+p.StepS)*1000+1 {
		t.Errorf("block spans [%d, %d), telemetry is [%d, %d]", meta.MinTime, meta.MaxTime, w.telFrom*1000, (w.telTo+p.shift())*1000)
	}

	q, err := tsdb.NewBlockQuerier(b, math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	count := func(ms ...*labels.Matcher) (series int, stale int) {
		ss := q.Select(false, nil, ms...)
		for ss.Next() {
			series++
			it := ss.At().Iterator(nil)
			for it.Next() == chunkenc.ValFloat {
				if _, v := it.At(); value.IsStaleNaN(v) {
					stale++
				}
			}
		}
		if err := ss.Err(); err != nil {
			t.Fatal(err)
		}
		return series, stale
	}
	eq := func(n, v string) *labels.Matcher { return labels.MustNewMatcher(labels.MatchEqual, n, v) }
	re := func(n, v string) *labels.Matcher { return labels.MustNewMatcher(labels.MatchRegexp, n, v) }

	tests := []struct {
		name string
		ms   []*labels.Matcher
		want int
	}{
		// pod_psi's POD selector: one pod cgroup per worker pod.
		{"worker pod PSI", []*labels.Matcher{eq("__name__", "container_pressure_cpu_waiting_seconds_total"),
			re("pod", "benchmark-ateom.*"), eq("container", ""), re("id", `.*[/-]pod[^/]+(\.slice)?`)}, p.Pods},
		// Node cgroups: every worker node and the system node.
		{"node PSI", []*labels.Matcher{eq("__name__", "container_pressure_io_waiting_seconds_total"), eq("container", "node")}, p.Nodes + 1},
		{"worker containers", []*labels.Matcher{eq("__name__", famCPUUsage), eq("namespace", workerNamespace), eq("container", workerContainer)}, p.Pods},
		{"atelet containers", []*labels.Matcher{eq("__name__", famWorkingSet), eq("namespace", ateletNamespace), eq("container", ateletContainer)}, p.Nodes},
		{"pool states", []*labels.Matcher{eq("__name__", famWorkers), eq("ate_workerpool_name", poolName)}, 3},
		{"MEM counts", []*labels.Matcher{eq("__name__", famSnapshotSize+"_count"), re("file_name", "pages.img|memory-ranges")}, p.Nodes},
		{"restore buckets", []*labels.Matcher{eq("__name__", famRestore+"_bucket"), eq("ate_snapshot_phase", "total")}, p.Nodes * 2 * len(durationBounds)},
		{"sampled actors", []*labels.Matcher{eq("__name__", famSampledActors)}, p.Nodes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := count(tc.ms...); got != tc.want {
				t.Errorf("%d series, want %d", got, tc.want)
			}
		})
	}
	// The restarted atelet stopped exporting while down: a live server
	// writes a staleness marker, and so does the generator.
	var restarted string
	for _, nd := range w.nodes {
		if nd.restartAt != 0 {
			restarted = nd.atelet
		}
	}
	if _, stale := count(eq("__name__", famSampledActors), eq("exported_instance", restarted)); stale == 0 {
		t.Errorf("no staleness marker in the restarted atelet %s's gauge", restarted)
	}
	if tr.MemRestartedSeries != 1 {
		t.Errorf("MEM series restarted inside the window: %d, want 1", tr.MemRestartedSeries)
	}
	if tr.CheckpointsInWindow <= 0 || tr.CheckpointsCumulative <= 0 {
		t.Errorf("no checkpoints: %+v", tr)
	}
	for _, f := range []string{"run/stats_history.csv", "run/stats.csv", "truth.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestGenerateDeterministic: the same parameters give the same truth,
// whatever the number of workers (series are generated independently).
func TestGenerateDeterministic(t *testing.T) {
	p := smallParams()
	a, err := Generate(context.Background(), p, t.TempDir(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(context.Background(), p, t.TempDir(), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Series != b.Series || a.Samples != b.Samples || a.CheckpointsInWindow != b.CheckpointsInWindow ||
		a.CheckpointsCumulative != b.CheckpointsCumulative {
		t.Errorf("1 worker %+v, 3 workers %+v", a, b)
	}
}

func TestGrowth(t *testing.T) {
	stale := math.Float64frombits(value.StaleNaN)
	tests := []struct {
		name        string
		ts          []int64
		vs          []float64
		a, b        int64
		wantG       float64
		wantEnd     float64
		wantHasEnd  bool
		wantRestart bool
	}{
		{"plain", []int64{90, 100, 110, 120}, []float64{1, 2, 5, 9}, 100, 120, 7, 9, true, false},
		{"restart counts the new process from zero", []int64{100, 110, 120, 130}, []float64{10, 12, 3, 4}, 100, 130, 2 + 3 + 1, 4, true, true},
		{"born inside the window: v_A = 0", []int64{115, 125}, []float64{3, 7}, 100, 130, 7, 7, true, false},
		{"stale marker: skipped, no value at B", []int64{100, 110, 120}, []float64{1, 4, stale}, 100, 125, 3, 0, false, false},
		{"baseline older than the lookback is absent", []int64{0, 400}, []float64{5, 8}, 301, 400, 8, 8, true, false},
		{"sample exactly at A is the baseline, not growth", []int64{100, 110}, []float64{4, 6}, 100, 110, 2, 6, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, end, hasEnd, restarted := growth(tc.ts, tc.vs, tc.a, tc.b)
			if g != tc.wantG || end != tc.wantEnd || hasEnd != tc.wantHasEnd || restarted != tc.wantRestart {
				t.Errorf("growth = %v, end %v (%v), restarted %v; want %v, %v (%v), %v", g, end, hasEnd, restarted,
					tc.wantG, tc.wantEnd, tc.wantHasEnd, tc.wantRestart)
			}
		})
	}
}

func TestRequestPoints(t *testing.T) {
	tests := []struct {
		r    Request
		want int64
	}{
		{Request{Start: 0, End: 86400, Step: 10}, 8641},
		{Request{Start: 100, End: 100 + 10999*10, Step: 10}, 11000},
		{Request{Start: 100, End: 105, Step: 10}, 1},
		{Request{Time: 100}, 0}, // instant
	}
	for _, tc := range tests {
		if got := tc.r.Points(); got != tc.want {
			t.Errorf("%+v: %d points, want %d", tc.r, got, tc.want)
		}
	}
}

// TestRecorder forwards a form-encoded range query (the way client_golang
// sends it) and records its range, status and answer size.
func TestRecorder(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("query") != "up" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Form.Get("step") == "2" { // as Prometheus answers a gzip-accepting client
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusUnprocessableEntity)
			zw := gzip.NewWriter(w)
			io.WriteString(zw, `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`)
			zw.Close()
			return
		}
		if r.Form.Get("step") == "1" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"status":"error","error":"query processing would load too many samples into memory in query execution"}`)
			return
		}
		io.WriteString(w, `{"status":"success"}`)
	}))
	defer upstream.Close()
	var log strings.Builder
	rec := &recorder{upstream: upstream.URL, enc: json.NewEncoder(&log)}
	proxy := httptest.NewServer(rec)
	defer proxy.Close()
	for _, step := range []string{"10", "1", "2"} {
		resp, err := http.PostForm(proxy.URL+"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"1000"}, "end": {"2000"}, "step": {step}})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("recorded %d lines: %q", len(lines), log.String())
	}
	var ok, refused Request
	if err := json.Unmarshal([]byte(lines[0]), &ok); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &refused); err != nil {
		t.Fatal(err)
	}
	if ok.Query != "up" || ok.Points() != 101 || ok.Status != 200 || ok.Bytes != int64(len(`{"status":"success"}`)) || ok.Refused {
		t.Errorf("recorded %+v", ok)
	}
	if refused.Status != http.StatusUnprocessableEntity || !refused.Refused || refused.Points() != 1001 {
		t.Errorf("refusal recorded as %+v", refused)
	}
	var zipped Request
	if err := json.Unmarshal([]byte(lines[2]), &zipped); err != nil {
		t.Fatal(err)
	}
	if !zipped.Refused || !strings.Contains(zipped.Error, "too many samples") {
		t.Errorf("gzip refusal recorded as %+v", zipped)
	}
}
