package plugin

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// One query per failure kind, sent together with a good query: each gets
// its own downstream error with a 4xx/5xx status, and the good one is
// answered.
func TestQueryErrorsArePerQuery(t *testing.T) {
	e := newEnv(t, "steady")
	// A second stored run without any end information.
	broken := filepath.Join(e.storeRoot, "runs", "broken", "run_date=2024-03-12", "run_ts=1710237000", "run_tag=x")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "status.json"), []byte(`{"locust_exit_code": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	from, to := e.truth.Start-600, e.truth.End+600
	bad := func(ref string, raw string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: []byte(raw), TimeRange: backend.TimeRange{From: time.Unix(from, 0), To: time.Unix(to, 0)}}
	}
	tests := []struct {
		q      backend.DataQuery
		status backend.Status
		says   []string
	}{
		{bad("json", `{"queryType": "packing", "run": `), backend.StatusBadRequest, []string{"malformed query JSON"}},
		{bad("runtype", `{"queryType": "packing", "run": 5}`), backend.StatusBadRequest, []string{`"run" must be a string`}},
		{q("type", from, to, map[string]any{"queryType": "packingg"}), backend.StatusBadRequest, []string{`unknown queryType "packingg"`, "packing, psi"}},
		{q("notype", from, to, map[string]any{}), backend.StatusBadRequest, []string{"no queryType"}},
		{q("unknown", from, to, map[string]any{"queryType": "packing", "run": "actor-density/1710237601/c0ffee1"}), backend.StatusNotFound, []string{"run not found"}},
		{q("hostile", from, to, map[string]any{"queryType": "packing", "run": "../../etc"}), backend.StatusBadRequest, []string{"invalid run id"}},
		{q("escaped", from, to, map[string]any{"queryType": "snapshots", "run": "%2e%2e/1/x"}), backend.StatusBadRequest, []string{"invalid run id"}},
		{q("var", from, to, map[string]any{"queryType": "packing", "run": "$run"}), backend.StatusBadRequest, []string{"$run", "not resolved"}},
		{q("varbrace", from, to, map[string]any{"queryType": "runs", "testName": "${test:csv}"}), backend.StatusBadRequest, []string{"$test"}},
		{q("scope", from, to, map[string]any{"queryType": "psi", "run": e.runID, "scope": "cluster"}), backend.StatusBadRequest, []string{"scope", "cluster"}},
		{q("block", from, to, map[string]any{"queryType": "workingSet", "run": e.runID, "block": "pods"}), backend.StatusBadRequest, []string{"block"}},
		{q("noend", from, to, map[string]any{"queryType": "packing", "run": "broken/1710237000/x"}), backend.StatusBadRequest, []string{"no end time"}},
		{q("promid", from, to, map[string]any{"queryType": "packing", "run": "prom-1710237605"}), backend.StatusNotFound, []string{"run not found"}},
		{q("mixed", from, to, map[string]any{"queryType": "summary", "run": []string{"range", e.runID}}), backend.StatusBadRequest, []string{"cannot be mixed"}},
	}
	qs := []backend.DataQuery{q("good", from, to, map[string]any{"queryType": "packing", "run": e.runID})}
	for _, tc := range tests {
		qs = append(qs, tc.q)
	}
	resp := e.query(t, c, qs...)
	if g := resp["good"]; g.Error != nil || len(g.Frames) != 2 || g.Frames[0].Rows() == 0 {
		t.Fatalf("the good query failed next to bad ones: %v", g.Error)
	}
	for _, tc := range tests {
		r := resp[tc.q.RefID]
		if r.Error == nil {
			t.Errorf("%s: no error", tc.q.RefID)
			continue
		}
		if r.Status != tc.status || r.ErrorSource != backend.ErrorSourceDownstream {
			t.Errorf("%s: status %d source %q, want %d downstream (%v)", tc.q.RefID, r.Status, r.ErrorSource, tc.status, r.Error)
		}
		for _, s := range tc.says {
			if !strings.Contains(r.Error.Error(), s) {
				t.Errorf("%s: error %q does not say %q", tc.q.RefID, r.Error, s)
			}
		}
	}
}

// With Prometheus down, a block query is a downstream 502 naming it; the
// store still answers the runs table.
func TestPrometheusDownIsDownstream(t *testing.T) {
	e := newEnv(t, "steady")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e.promURL = "http://" + addr
	e.jsonData["timeoutSeconds"] = 2
	c := e.client(t)
	from, to := e.truth.Start-600, e.truth.End+600
	resp := e.query(t, c,
		q("packing", from, to, map[string]any{"queryType": "packing", "run": e.runID}),
		q("runs", from, to, map[string]any{"queryType": "runs"}))
	p := resp["packing"]
	if p.Error == nil || p.Status != backend.StatusBadGateway || p.ErrorSource != backend.ErrorSourceDownstream ||
		!strings.Contains(p.Error.Error(), "Prometheus at "+addr) {
		t.Fatalf("packing with Prometheus down: %v (status %d, source %s)", p.Error, p.Status, p.ErrorSource)
	}
	if r := resp["runs"]; r.Error != nil || r.Frames[0].Rows() != 1 {
		t.Fatalf("runs from the store failed with Prometheus down: %v", r.Error)
	}
}

// Invalid settings do not fail the instance: every query and the health
// check say which setting is wrong.
func TestInvalidSettingsAreReported(t *testing.T) {
	e := newEnv(t, "steady")
	e.jsonData["kubernetesAccess"] = "sometimes"
	c := e.client(t)
	r := e.query(t, c, q("A", 0, 1, map[string]any{"queryType": "runs"}))["A"]
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "kubernetesAccess") {
		t.Fatalf("query with invalid settings: %v (status %d)", r.Error, r.Status)
	}
	h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "kubernetesAccess") {
		t.Fatalf("health: %v %q", h.Status, h.Message)
	}
}

// A multi-value run variable (a list, or Grafana's {a,b} format) gives one
// set of frames per run, legends prefixed with the run.
func TestMultipleRuns(t *testing.T) {
	e := newEnv(t, "steady")
	// The same trial stored again under a second tag.
	src := e.runDir()
	dst := strings.Replace(src, "run_tag="+e.truth.Tag, "run_tag=deadbee", 1)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"stats_history.csv", "stats.csv", "status.json"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	second := strings.Replace(e.runID, e.truth.Tag, "deadbee", 1)
	c := e.client(t)
	for _, run := range []any{[]string{e.runID, second}, "{" + e.runID + "," + second + "}"} {
		r := e.one(t, c, map[string]any{"queryType": "activeActors", "run": run})
		if len(r.Frames) != 4 {
			t.Fatalf("run %v: %d frames, want 2 per run", run, len(r.Frames))
		}
		d0 := field(t, r.Frames[0], "active_actors").Config.DisplayNameFromDS
		d1 := field(t, r.Frames[2], "active_actors").Config.DisplayNameFromDS
		if d0 != "actor-density c0ffee1 Active actors" || d1 != "actor-density deadbee Active actors" {
			t.Fatalf("legends %q, %q", d0, d1)
		}
		if r.Frames[0].Rows() != r.Frames[2].Rows() {
			t.Fatalf("the same trial twice gave %d and %d points", r.Frames[0].Rows(), r.Frames[2].Rows())
		}
	}
	s := e.one(t, c, map[string]any{"queryType": "summary"}).Frames[0]
	if s.Rows() != 2 {
		t.Fatalf("summary over the range: %d rows, want 2", s.Rows())
	}
}

// GET /runs, /runs/{id} and /tests through the plugin protocol.
func TestResources(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	call := func(method, path string) (int, map[string]any) {
		t.Helper()
		var got *backend.CallResourceResponse
		u := path
		p, _, _ := strings.Cut(path, "?")
		err := c.CallResource(context.Background(), &backend.CallResourceRequest{PluginContext: e.pluginContext(), Path: p, Method: method, URL: u},
			backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error { got = r; return nil }))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(got.Body, &body); err != nil {
			t.Fatalf("%s %s: body %q", method, path, got.Body)
		}
		if ct := got.Headers["Content-Type"]; len(ct) == 0 || ct[0] != "application/json" {
			t.Errorf("%s %s: content type %v", method, path, ct)
		}
		return got.Status, body
	}
	// The frontend sends the dashboard range in milliseconds.
	ms := func(s int64) string { return strconv.FormatInt(s*1000, 10) }
	status, body := call("GET", "runs?from="+ms(e.truth.Start-60)+"&to="+ms(e.truth.End))
	if status != http.StatusOK {
		t.Fatalf("GET /runs: %d %v", status, body)
	}
	list, _ := body["runs"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != e.runID || list[0].(map[string]any)["start"] != float64(e.truth.Start) {
		t.Fatalf("GET /runs: %v", body)
	}
	for _, path := range []string{"runs/" + e.runID, "runs/" + strings.ReplaceAll(e.runID, "/", "%2F")} {
		status, body = call("GET", path)
		if status != http.StatusOK || body["id"] != e.runID || body["end"] != float64(e.truth.End) {
			t.Fatalf("GET %s: %d %v", path, status, body)
		}
		arts := body["artifacts"].(map[string]any)
		if arts["stats_history.csv"] != true || arts["server_summary.json"] != false {
			t.Fatalf("GET %s artifacts: %v", path, arts)
		}
	}
	for path, want := range map[string]int{
		"runs/../../etc":                     http.StatusBadRequest,
		"runs/..%2F..%2Fetc":                 http.StatusBadRequest,
		"runs/actor-density/1710237600/nope": http.StatusNotFound,
		"runs/range":                         http.StatusBadRequest,
		"runs?from=yesterday":                http.StatusBadRequest,
		"nope":                               http.StatusNotFound,
	} {
		if status, body := call("GET", path); status != want || body["error"] == nil {
			t.Errorf("GET %s: %d %v, want %d with an error", path, status, body, want)
		}
	}
	if status, _ := call("POST", "runs"); status != http.StatusMethodNotAllowed {
		t.Errorf("POST /runs: %d", status)
	}
	status, body = call("GET", "tests")
	if tests, _ := body["tests"].([]any); status != http.StatusOK || len(tests) != 1 || tests[0] != e.truth.TestName {
		t.Fatalf("GET /tests: %d %v", status, body)
	}
}
