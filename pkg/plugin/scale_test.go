package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
)

// TestScalePanelLatency measures the datasource on the scale run of
// scripts/bench-scale.sh (500 nodes, 5,000 worker pods; not part of CI):
// the run-overview panels' queries sent the way Grafana sends a dashboard
// load (one QueryData per panel, all at once, through the real gRPC plugin
// protocol), first on a cold instance and then again from the block cache,
// once per source of the run's numbers (scaleSources): stored with
// psi_series.json, stored without it, and not stored (harvested). Stored
// runs hold the artifacts the bench's `density export` wrote into
// DENSITY_SCALE_DIR/out; the trend is the Runs over time summary over 30
// stored copies of them. Prometheus requests are counted by a proxy in
// front of the Prometheus at DENSITY_SCALE_PROM.
//
// DENSITY_SCALE_DIR is the bench's work directory (truth.json, run/, out/);
// DENSITY_SCALE_SOURCES picks sources by name (comma-separated, default
// all, "trend" for the trend); DENSITY_SCALE_TIMEOUT, in seconds, sets the
// instance's timeoutSeconds (default: the 5 s / 8 s request timeouts); the
// tables go to DENSITY_SCALE_REPORT (and the test log).
func TestScalePanelLatency(t *testing.T) {
	dir, promURL := os.Getenv("DENSITY_SCALE_DIR"), os.Getenv("DENSITY_SCALE_PROM")
	if dir == "" || promURL == "" {
		t.Skip("a measurement run by scripts/bench-scale.sh (DENSITY_SCALE_DIR, DENSITY_SCALE_PROM)")
	}
	var truth scaleTruth
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("DENSITY_SCALE_SOURCES"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	proxy := newInFlightProxy(t, promURL)
	defer proxy.close()

	var rep strings.Builder
	timeouts := "default timeouts"
	if s := os.Getenv("DENSITY_SCALE_TIMEOUT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DENSITY_SCALE_TIMEOUT: %v", err)
		}
		truth.timeoutS = n
		timeouts = fmt.Sprintf("%d s timeouts", n)
	}
	fmt.Fprintf(&rep, "Datasource, %d nodes / %d worker pods / %d h run, %d panels loaded at once over gRPC (%s, 8 in flight, MaxDataPoints 1000):\n\n",
		truth.Nodes, truth.Pods, truth.Param.Hours, len(scalePanels("")), timeouts)
	var loads []scaleLoad
	for _, src := range scaleSources {
		if len(want) > 0 && !want[src.name] {
			continue
		}
		l := loadScaleDashboard(t, dir, proxy, truth, src)
		loads = append(loads, l)
		t.Logf("%s: cold %.2f s (%d requests), cached %.1f ms (%d requests)", src.name, l.coldAll.Seconds(), l.coldRequests,
			float64(l.cachedAll.Microseconds())/1000, l.cachedRequests)
	}
	fmt.Fprintf(&rep, "| source of the numbers | cold | Prometheus requests, cold | cached | requests, cached | values in frames | panels with a failed read |\n|---|---|---|---|---|---|---|\n")
	for _, l := range loads {
		values, failed := 0, 0
		for _, r := range l.cold {
			values += r.points
			if r.readFailed {
				failed++
			}
		}
		fmt.Fprintf(&rep, "| %s | **%.2f s** | %d | %.1f ms | %d | %d | %d |\n", l.source.title, l.coldAll.Seconds(), l.coldRequests,
			float64(l.cachedAll.Microseconds())/1000, l.cachedRequests, values, failed)
	}
	if len(want) == 0 || want["trend"] {
		tr := scaleTrend(t, dir, proxy, truth)
		fmt.Fprintf(&rep, "| Runs over time `summary`, %d stored runs | **%.2f s** | %d | %.1f ms | %d | %d | |\n", tr.runs, tr.cold.Seconds(), tr.coldRequests,
			float64(tr.cached.Microseconds())/1000, tr.cachedRequests, tr.values)
	}
	if len(loads) > 0 {
		fmt.Fprintf(&rep, "\nPer panel, cold / cached (values in frames, null numbers; \"read failed\": a notice says a Prometheus read failed):\n\n| panel query |")
		for _, l := range loads {
			fmt.Fprintf(&rep, " %s |", l.source.title)
		}
		fmt.Fprintf(&rep, "\n|---|%s\n", strings.Repeat("---|", len(loads)))
		for i, m := range scalePanels("") {
			fmt.Fprintf(&rep, "| %s |", panelName(m))
			for _, l := range loads {
				failed := ""
				if l.cold[i].readFailed {
					failed = ", read failed"
				}
				fmt.Fprintf(&rep, " %.2f s / %.1f ms (%d, %d%s) |", l.cold[i].took.Seconds(), float64(l.cached[i].took.Microseconds())/1000,
					l.cold[i].points, l.cold[i].nulls, failed)
			}
			rep.WriteString("\n")
		}
		fmt.Fprintf(&rep, "\nmost Prometheus requests in flight: %d\n", proxy.max.Load())
	}
	t.Log("\n" + rep.String())
	if f := os.Getenv("DENSITY_SCALE_REPORT"); f != "" {
		if err := os.WriteFile(f, []byte(rep.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range loads {
		for i, m := range scalePanels("") {
			if l.cold[i].status != "ok" || l.cached[i].status != "ok" {
				t.Errorf("%s, panel %v: cold %s, cached %s", l.source.name, m, l.cold[i].status, l.cached[i].status)
			}
		}
		if l.cachedRequests != 0 {
			t.Errorf("%s: the cached load sent %d Prometheus requests, want 0", l.source.name, l.cachedRequests)
		}
		if l.source.name == "stored" && l.coldRequests != 0 {
			t.Errorf("stored with %s: the cold load sent %d Prometheus requests, want 0", runs.FilePSISeries, l.coldRequests)
		}
	}
}

// scaleTruth is what the scale test reads of tsdbgen's truth.json.
type scaleTruth struct {
	Start int64 `json:"start_ts"`
	End   int64 `json:"end_ts"`
	Pods  int   `json:"pods"`
	Nodes int   `json:"nodes"`
	Param struct {
		Hours int   `json:"Hours"`
		LagS  int64 `json:"LagS"`
	} `json:"params"`
	timeoutS int // the instance's timeoutSeconds; 0: the defaults
}

// scaleSource is where a scale load's numbers come from: the export's
// artifacts put into the store with the run's Locust files.
type scaleSource struct {
	name, title string
	artifacts   []string // files of DENSITY_SCALE_DIR/out put into the store
}

var scaleSources = []scaleSource{
	{"stored", "stored, with psi_series.json", []string{runs.FileServerSummary, runs.FileStatsJSONL, runs.FilePSISeries}},
	{"stored-nopsi", "stored, without psi_series.json", []string{runs.FileServerSummary, runs.FileStatsJSONL}},
	{"harvested", "not stored (harvested)", nil},
}

// scalePanels are the run-overview dashboard's panel queries of run id.
func scalePanels(id string) []map[string]any {
	return []map[string]any{
		{"queryType": "packing", "run": id},
		{"queryType": "psi", "run": id, "scope": "node", "resource": "cpu"},
		{"queryType": "psi", "run": id, "scope": "node", "resource": "memory"},
		{"queryType": "psi", "run": id, "scope": "node", "resource": "io"},
		{"queryType": "psi", "run": id, "scope": "pod", "resource": "cpu"},
		{"queryType": "psi", "run": id, "scope": "pod", "resource": "memory"},
		{"queryType": "psi", "run": id, "scope": "pod", "resource": "io"},
		{"queryType": "snapshots", "run": id},
		{"queryType": "activeActors", "run": id},
		{"queryType": "workingSet", "run": id, "block": "node"},
		{"queryType": "workingSet", "run": id, "block": "worker"},
		{"queryType": "workingSet", "run": id, "block": "atelet"},
		{"queryType": "workingSet", "run": id, "block": "actor"},
		{"queryType": "workingSet", "run": id, "block": "per_actor"},
		{"queryType": "oomEvents", "run": id},
		{"queryType": "summary", "run": id},
	}
}

func panelName(m map[string]any) string {
	var parts []string
	for _, k := range []string{"scope", "resource", "block"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprint(v))
		}
	}
	name := m["queryType"].(string)
	if len(parts) > 0 {
		name += " (" + strings.Join(parts, " ") + ")"
	}
	return name
}

// scalePanel is one panel query's answer as the tables report it.
type scalePanel struct {
	took          time.Duration
	status        string
	points, nulls int
	readFailed    bool // a notice says a read failed (the frames are partial)
}

// scaleLoad is one source's cold and cached dashboard load.
type scaleLoad struct {
	source                       scaleSource
	cold, cached                 []scalePanel
	coldAll, cachedAll           time.Duration
	coldRequests, cachedRequests int64
}

const scaleTest, scaleTag = "scale", "bench"

// scaleStoreRun lays the scale run out in a new file:// store at run_ts
// start: its Locust files, status.json and the given export artifacts.
func scaleStoreRun(t *testing.T, dir string, start int64, artifacts []string) (root, runDir string) {
	t.Helper()
	root = t.TempDir()
	runDir = filepath.Join(root, "runs", scaleTest, "run_date="+time.Unix(start, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(start, 10), "run_tag="+scaleTag)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile := func(from string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runDir, filepath.Base(from)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"stats_history.csv", "stats.csv"} {
		copyFile(filepath.Join(dir, "run", f))
	}
	for _, f := range artifacts {
		copyFile(filepath.Join(dir, "out", f))
	}
	if err := os.WriteFile(filepath.Join(runDir, runs.FileStatus), []byte(`{"locust_exit_code": 0, "stats_generated": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, runDir
}

// scaleEnv is a new datasource instance (cold caches) over a store.
func scaleEnv(proxy *inFlightProxy, truth scaleTruth, root, name string) *env {
	e := &env{
		name: name, promURL: proxy.URL, storeRoot: root,
		runID: runs.StoreRunID(scaleTest, truth.Start, scaleTag),
		now:   time.Unix(truth.End+3600, 0),
		// Defaults otherwise: 5 s / 8 s timeouts, 8 requests in flight.
		jsonData: map[string]any{"resultsStore": "file://" + root, "discoverRuns": false, "ateletLagSeconds": truth.Param.LagS},
		uid:      fmt.Sprintf("ds-%s-%d", name, envSeq.Add(1)),
	}
	if truth.timeoutS > 0 {
		e.jsonData["timeoutSeconds"] = truth.timeoutS
	}
	return e
}

func loadScaleDashboard(t *testing.T, dir string, proxy *inFlightProxy, truth scaleTruth, src scaleSource) scaleLoad {
	t.Helper()
	root, _ := scaleStoreRun(t, dir, truth.Start, src.artifacts)
	e := scaleEnv(proxy, truth, root, "scale-"+src.name)
	c := e.client(t)
	panels := scalePanels(e.runID)
	load := func() ([]scalePanel, time.Duration) {
		out := make([]scalePanel, len(panels))
		var wg sync.WaitGroup
		began := time.Now()
		for i, m := range panels {
			model := map[string]any{}
			for k, v := range m {
				model[k] = v
			}
			wg.Go(func() {
				t0 := time.Now()
				resp, err := c.QueryData(context.Background(), &backend.QueryDataRequest{PluginContext: e.pluginContext(),
					Queries: []backend.DataQuery{q("A", truth.Start-600, truth.End+600, model)}})
				out[i].took = time.Since(t0)
				switch {
				case err != nil:
					out[i].status = "gRPC error: " + err.Error()
				case resp.Responses["A"].Error != nil:
					out[i].status = fmt.Sprintf("error %d: %.80s", resp.Responses["A"].Status, resp.Responses["A"].Error)
				default:
					out[i].status = "ok"
					out[i].readFailed = strings.Contains(noticeTexts(resp.Responses["A"]), "failed")
					for _, f := range resp.Responses["A"].Frames {
						out[i].points += f.Rows() * max(len(f.Fields)-1, 1)
						out[i].nulls += nullNumbers(f)
					}
				}
			})
		}
		wg.Wait()
		return out, time.Since(began)
	}
	l := scaleLoad{source: src}
	before := proxy.total.Load()
	l.cold, l.coldAll = load()
	l.coldRequests = proxy.total.Load() - before
	l.cached, l.cachedAll = load()
	l.cachedRequests = proxy.total.Load() - before - l.coldRequests
	return l
}

// scaleTrendResult is the Runs over time summary over stored scale runs.
type scaleTrendResult struct {
	runs, values                 int
	cold, cached                 time.Duration
	coldRequests, cachedRequests int64
}

// scaleTrend stores the scale run's server_summary.json and stats.jsonl as
// 30 nightly runs (times shifted by whole days, storeShifted) and loads the
// Runs over time summary over them, cold and cached.
func scaleTrend(t *testing.T, dir string, proxy *inFlightProxy, truth scaleTruth) scaleTrendResult {
	t.Helper()
	const nights = 30
	root, runDir := scaleStoreRun(t, dir, truth.Start, []string{runs.FileServerSummary, runs.FileStatsJSONL})
	e := scaleEnv(proxy, truth, root, "scale-trend")
	for k := int64(1); k <= nights; k++ {
		storeShifted(t, e, runDir, k)
	}
	if err := os.RemoveAll(filepath.Dir(runDir)); err != nil { // the unshifted run
		t.Fatal(err)
	}
	e.now = time.Unix(truth.End+(nights+10)*day, 0)
	c := e.client(t)
	qs := q("A", truth.Start+day-600, truth.Start+nights*day+600, map[string]any{"queryType": "summary", "run": "range"})
	r := scaleTrendResult{runs: nights}
	load := func() time.Duration {
		t0 := time.Now()
		resp := e.query(t, c, qs)["A"]
		took := time.Since(t0)
		if resp.Error != nil {
			t.Fatalf("trend: %v", resp.Error)
		}
		if n := resp.Frames[0].Rows(); n != nights {
			t.Fatalf("trend: %d rows, want %d", n, nights)
		}
		r.values = resp.Frames[0].Rows() * len(resp.Frames[0].Fields)
		return took
	}
	before := proxy.total.Load()
	r.cold = load()
	r.coldRequests = proxy.total.Load() - before
	r.cached = load()
	r.cachedRequests = proxy.total.Load() - before - r.coldRequests
	if r.coldRequests != 0 || r.cachedRequests != 0 {
		t.Errorf("trend over %d stored runs: %d Prometheus requests cold, %d cached, want 0", nights, r.coldRequests, r.cachedRequests)
	}
	return r
}

// nullNumbers counts null values in a frame's numeric fields.
func nullNumbers(f *data.Frame) int {
	n := 0
	for _, fld := range f.Fields {
		if !fld.Nullable() || fld.Type() == data.FieldTypeNullableTime {
			continue
		}
		for i := range fld.Len() {
			if fld.At(i) == nil || fmt.Sprint(fld.At(i)) == "<nil>" {
				n++
			}
		}
	}
	return n
}
