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
// against the Prometheus at DENSITY_SCALE_PROM with the instance's default
// timeouts. DENSITY_SCALE_DIR is the bench's work directory (truth.json and
// run/); the table goes to DENSITY_SCALE_REPORT (and the test log).
func TestScalePanelLatency(t *testing.T) {
	dir, promURL := os.Getenv("DENSITY_SCALE_DIR"), os.Getenv("DENSITY_SCALE_PROM")
	if dir == "" || promURL == "" {
		t.Skip("a measurement run by scripts/bench-scale.sh (DENSITY_SCALE_DIR, DENSITY_SCALE_PROM)")
	}
	var truth struct {
		Start int64 `json:"start_ts"`
		End   int64 `json:"end_ts"`
		Pods  int   `json:"pods"`
		Nodes int   `json:"nodes"`
		Param struct {
			Hours int   `json:"Hours"`
			LagS  int64 `json:"LagS"`
		} `json:"params"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	const testName, tag = "scale", "bench"
	root := t.TempDir()
	runDir := filepath.Join(root, "runs", testName, "run_date="+time.Unix(truth.Start, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(truth.Start, 10), "run_tag="+tag)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"stats_history.csv", "stats.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, "run", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(runDir, runs.FileStatus), []byte(`{"locust_exit_code": 0, "stats_generated": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	proxy := newInFlightProxy(t, promURL)
	defer proxy.close()
	e := &env{
		name: "scale", promURL: proxy.URL, storeRoot: root,
		runID: runs.StoreRunID(testName, truth.Start, tag),
		now:   time.Unix(truth.End+3600, 0),
		// Defaults otherwise: 5 s / 8 s timeouts, 8 requests in flight.
		jsonData: map[string]any{"resultsStore": "file://" + root, "discoverRuns": false, "ateletLagSeconds": truth.Param.LagS},
		uid:      fmt.Sprintf("ds-scale-%d", envSeq.Add(1)),
	}
	c := e.client(t)

	id := e.runID
	panels := []map[string]any{
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
	type result struct {
		took          time.Duration
		status        string
		points, nulls int
	}
	load := func() ([]result, time.Duration) {
		out := make([]result, len(panels))
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
	before := proxy.total.Load()
	cold, coldAll := load()
	coldRequests := proxy.total.Load() - before
	cached, cachedAll := load()
	cachedRequests := proxy.total.Load() - before - coldRequests

	var rep strings.Builder
	fmt.Fprintf(&rep, "Datasource, %d nodes / %d worker pods / %d h run, %d panels loaded at once over gRPC (default timeouts, 8 in flight):\n\n",
		truth.Nodes, truth.Pods, truth.Param.Hours, len(panels))
	fmt.Fprintf(&rep, "| panel query | cold | cached | values in frames | null numbers | outcome |\n|---|---|---|---|---|---|\n")
	for i, m := range panels {
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
		fmt.Fprintf(&rep, "| %s | %.2f s | %.1f ms | %d | %d | %s |\n", name, cold[i].took.Seconds(),
			float64(cached[i].took.Microseconds())/1000, cold[i].points, cold[i].nulls, cold[i].status)
	}
	fmt.Fprintf(&rep, "| **whole dashboard** | **%.2f s**, %d Prometheus requests | **%.1f ms**, %d requests | | | |\n",
		coldAll.Seconds(), coldRequests, float64(cachedAll.Microseconds())/1000, cachedRequests)
	fmt.Fprintf(&rep, "\nmost Prometheus requests in flight: %d\n", proxy.max.Load())
	t.Log("\n" + rep.String())
	if f := os.Getenv("DENSITY_SCALE_REPORT"); f != "" {
		if err := os.WriteFile(f, []byte(rep.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range panels {
		if cold[i].status != "ok" || cached[i].status != "ok" {
			t.Errorf("panel %v: cold %s, cached %s", panels[i], cold[i].status, cached[i].status)
		}
	}
	if cachedRequests != 0 {
		t.Errorf("the cached load sent %d Prometheus requests, want 0", cachedRequests)
	}
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
