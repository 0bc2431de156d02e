package plugin

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
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
	s := summaryTable(t, e.one(t, c, map[string]any{"queryType": "summary"}))
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

// `Plugin id substrate-density-datasource, a backend datasource
// ("backend": true, "metrics": true, "annotations": true, "alerting": true)`.
func TestPluginJSON(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "src", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Type, ID, Executable                    string
		Backend, Metrics, Annotations, Alerting bool
		Info                                    struct {
			Links []struct{ Name, URL string }
		}
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.ID != "substrate-density-datasource" || p.Type != "datasource" || !p.Backend || !p.Metrics || !p.Annotations || !p.Alerting || p.Executable == "" {
		t.Errorf("plugin.json %+v", p)
	}
	// The catalog page links the documentation, the source and the issues
	// (the module path's repository).
	var names []string
	for _, l := range p.Info.Links {
		names = append(names, l.Name)
		if u, err := url.Parse(l.URL); err != nil || u.Scheme != "https" || !strings.HasPrefix(l.URL, "https://github.com/substrate/density") {
			t.Errorf("link %s %q", l.Name, l.URL)
		}
	}
	if strings.Join(names, ",") != "Documentation,Source,Issues" {
		t.Errorf("info.links %v, want Documentation, Source, Issues", names)
	}
}

// The runs table: "newest first; filter by test name / tag"; frontier with
// run range: "one row per run in range: a trend across runs".
func TestRunsOrderFiltersAndTrend(t *testing.T) {
	e := newEnv(t, "steady")
	e.jsonData["discoverRuns"] = false
	tr := e.truth
	copyRunAs := func(test string, start int64, tag string) string {
		dst := filepath.Join(e.storeRoot, "runs", test, "run_date="+time.Unix(start, 0).UTC().Format("2006-01-02"),
			"run_ts="+strconv.FormatInt(start, 10), "run_tag="+tag)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"stats_history.csv", "stats.csv", "status.json"} {
			b, err := os.ReadFile(filepath.Join(e.runDir(), f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return runs.StoreRunID(test, start, tag)
	}
	other := copyRunAs("other-test", tr.Start+100, "c0ffee1")
	newest := copyRunAs(tr.TestName, tr.Start+200, "deadbee")
	c := e.client(t)
	ids := func(model map[string]any) []string {
		t.Helper()
		f := summaryTable(t, e.one(t, c, model))
		var out []string
		for i := 0; i < f.Rows(); i++ {
			out = append(out, field(t, f, "id").At(i).(string))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		model map[string]any
		want  []string
	}{
		{"newest first", map[string]any{"queryType": "runs"}, []string{newest, other, e.runID}},
		{"by test name", map[string]any{"queryType": "runs", "testName": "other-test"}, []string{other}},
		{"by tag", map[string]any{"queryType": "runs", "tag": "deadbee"}, []string{newest}},
		{"by test name and tag", map[string]any{"queryType": "runs", "testName": tr.TestName, "tag": tr.Tag}, []string{e.runID}},
		{"frontier trend over the range", map[string]any{"queryType": "frontier"}, []string{newest, other, e.runID}},
		{"summary over the range", map[string]any{"queryType": "summary"}, []string{newest, other, e.runID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(tc.model); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ids %v, want %v", got, tc.want)
			}
		})
	}
}

// run "range" (the default) for a per-run type: the dashboard range is the
// run window and the steady window comes from the user-count series.
func TestRangeRunSteadyFromUserCount(t *testing.T) {
	e := newEnv(t, "steady")
	tr := e.truth
	r := e.query(t, e.client(t), q("A", tr.Start, tr.End, map[string]any{"queryType": "activeActors"}))["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	pc, err := promql.New(promql.Config{URL: e.prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	adhoc, err := runs.NewDiscovery(pc, "", 0).Range(ctx, tr.Start, tr.End)
	if err != nil {
		t.Fatal(err)
	}
	if !adhoc.SteadyFromSamples || adhoc.SteadyStart <= tr.Start || adhoc.SteadyEnd >= tr.End {
		t.Fatalf("the user-count series gives no proper steady window: %+v", adhoc)
	}
	want, _ := harvest.HarvestActiveActors(ctx, pc, harvest.Params{Start: tr.Start, End: tr.End, SteadyStart: adhoc.SteadyStart,
		SteadyEnd: adhoc.SteadyEnd, LagS: tr.LagS, Sel: harvest.DefaultSelectors()})
	checkSummary(t, r.Frames[1], want.Summary, unitNone)
	if hasNotice(r.Frames[0], "steady window = run window") {
		t.Errorf("a steady-window fallback notice on a run with user counts")
	}
}

// "Secrets never appear in logs, frames, notices, health messages or
// resource responses."
func TestSecretsNeverInResponses(t *testing.T) {
	const kubeSecret = "kube-t0ken-secret"
	syn := kubefake.Synthetic{Nodes: 2, WorkerNodes: 1, Pods: 4, Workers: 2, Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
	kube := kubefake.New(kubefake.Config{Token: kubeSecret, TLS: true, Pods: syn.PodSource(), Nodes: syn.NodeSource()})
	defer kube.Close()
	e := newEnv(t, "steady")
	e.jsonData["basicAuth"] = true
	e.jsonData["basicAuthUser"] = "grafana"
	e.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	e.secure = map[string]string{"basicAuthPassword": secretPassword, "bearerToken": secretToken, "httpHeaderValue1": secretTenant}
	e.kubeToken(kube.URL, kube.CACertPEM(), kubeSecret)
	e.now = time.Unix(e.truth.End+600, 0) // recent: the live cluster is read
	c := e.client(t)
	secrets := []string{secretPassword, secretToken, secretTenant, kubeSecret}
	check := func(what string, b []byte) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s shows a secret: %.300s", what, b)
			}
		}
	}
	qs := dashboard(e)
	qs = append(qs, q("Z", e.truth.Start-600, e.truth.End+600, map[string]any{"queryType": "clusterFacts", "run": "latest"}))
	for ref, r := range e.query(t, c, qs...) {
		b, err := json.Marshal(r.Frames)
		if err != nil {
			t.Fatal(err)
		}
		check("frames of "+ref, b)
		if r.Error != nil {
			check("error of "+ref, []byte(r.Error.Error()))
		}
	}
	for _, path := range []string{"runs", "runs/" + e.runID, "tests", "runs/nope/1/x"} {
		var got *backend.CallResourceResponse
		err := c.CallResource(context.Background(), &backend.CallResourceRequest{PluginContext: e.pluginContext(), Path: path, Method: "GET", URL: path},
			backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error { got = r; return nil }))
		if err != nil || got == nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		check("GET "+path, got.Body)
	}
	h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
	if err != nil {
		t.Fatal(err)
	}
	check("health", []byte(h.Message+string(h.JSONDetails)))
}

// The user info and query string of the Prometheus URL never reach an
// answer, a notice, a resource response or a log line when Prometheus is
// down (a closed port) or slow (no answer within timeoutSeconds): the
// HTTP client's error names the URL, and only its host may be shown.
func TestURLSecretsNeverInFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers only after the client gave up
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	secrets := []string{"hunter2", "TOPSECRET", "bob"}
	for _, tc := range []struct{ name, host string }{
		{"down", closed},
		{"slow", strings.TrimPrefix(slow.URL, "http://")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "steady")
			e.promURL = "http://bob:hunter2@" + tc.host + "/prom?access_token=TOPSECRET"
			e.jsonData["timeoutSeconds"] = 1
			stop := pluginLog.Record()
			c := e.client(t)
			from, to := e.truth.Start-600, e.truth.End+600
			resp := e.query(t, c,
				q("packing", from, to, map[string]any{"queryType": "packing", "run": "range"}),
				q("snapshots", from, to, map[string]any{"queryType": "snapshots", "run": "range"}),
				q("runs", from, to, map[string]any{"queryType": "runs"}),
				q("summary", from, to, map[string]any{"queryType": "summary"}))
			var shown strings.Builder
			failed := 0
			for ref, r := range resp {
				b, err := json.Marshal(r.Frames)
				if err != nil {
					t.Fatal(err)
				}
				shown.WriteString(ref + ": " + string(b) + "\n")
				if r.Error != nil {
					failed++
					shown.WriteString(ref + " error: " + r.Error.Error() + "\n")
				}
			}
			if failed == 0 {
				t.Fatalf("no query failed with Prometheus %s: the test sees no failure", tc.name)
			}
			var got *backend.CallResourceResponse
			err := c.CallResource(context.Background(), &backend.CallResourceRequest{PluginContext: e.pluginContext(), Path: "runs", Method: "GET", URL: "runs?from=0"},
				backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error { got = r; return nil }))
			if err != nil || got == nil {
				t.Fatalf("GET /runs: %v", err)
			}
			shown.WriteString("GET /runs: " + string(got.Body) + "\n")
			h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
			if err != nil {
				t.Fatal(err)
			}
			shown.WriteString("health: " + h.Message + string(h.JSONDetails) + "\n")
			if !strings.Contains(shown.String(), tc.host) {
				t.Errorf("no answer names the Prometheus host %s:\n%s", tc.host, shown.String())
			}
			logged := stop()
			for _, s := range secrets {
				if n := strings.Count(shown.String(), s); n > 0 {
					t.Errorf("the answers show %q %d times:\n%s", s, n, shown.String())
				}
				if n := strings.Count(logged, s); n > 0 {
					t.Errorf("the log shows %q %d times:\n%s", s, n, logged)
				}
			}
		})
	}
}

// maxRangeDays bounds every Prometheus read the dashboard range drives,
// counted behind a proxy: an ad hoc run over 54 years is a 400 naming the
// cap before any request; run discovery over that range covers only the
// newest maxRangeDays, with a notice. maxRunsPerQuery bounds the stored
// runs a listing reads (the newest are kept, with a notice).
func TestDashboardRangeIsBounded(t *testing.T) {
	e := newEnv(t, "steady")
	g := promfake.NewGateway(t, e.prom.URL)
	e.promURL = g.URL + "/prometheus"
	// Two older copies of the stored run: three stored runs in all.
	for _, days := range []int64{3, 4} {
		ts := e.truth.Start - days*86400
		dir := filepath.Join(e.storeRoot, "runs", e.truth.TestName, "run_date="+time.Unix(ts, 0).UTC().Format("2006-01-02"),
			"run_ts="+strconv.FormatInt(ts, 10), "run_tag="+e.truth.Tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		copyLocustFiles(t, e.runDir(), dir)
	}
	e.jsonData["maxRunsPerQuery"] = 2
	c := e.client(t)
	to := e.truth.End + 600 // 2024-03-12: a 54-year range
	count := func(f func()) int {
		n := len(g.Requests())
		f()
		return len(g.Requests()) - n
	}

	var p backend.DataResponse
	sent := count(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		resp, err := c.QueryData(ctx, &backend.QueryDataRequest{PluginContext: e.pluginContext(),
			Queries: []backend.DataQuery{q("packing", 0, to, map[string]any{"queryType": "packing", "run": "range"})}})
		if err != nil {
			p.Error = err
			return
		}
		p = resp.Responses["packing"]
	})
	t.Logf("packing over [0, %d]: %d Prometheus requests, %v", to, sent, p.Error)
	if sent != 0 || p.Status != backend.StatusBadRequest || p.ErrorSource != backend.ErrorSourceDownstream ||
		p.Error == nil || !strings.Contains(p.Error.Error(), "maxRangeDays") {
		t.Errorf("packing over 54 years: %d requests, status %d, source %s, error %v; want 0 and a downstream 400 naming maxRangeDays",
			sent, p.Status, p.ErrorSource, p.Error)
	}

	var r backend.DataResponse
	sent = count(func() { r = e.query(t, c, q("runs", 0, to, map[string]any{"queryType": "runs"}))["runs"] })
	t.Logf("runs over [0, %d]: %d Prometheus requests", to, sent)
	if r.Error != nil {
		t.Fatalf("runs over 54 years: %v", r.Error)
	}
	text := strings.Join(notices(r.Frames), "\n")
	if rows := r.Frames[0].Rows(); rows != 2 {
		t.Errorf("runs over 54 years: %d rows, want the newest 2 (maxRunsPerQuery)", rows)
	}
	for _, want := range []string{"newest 31 days", "maxRangeDays", "newest 2 of 3", "maxRunsPerQuery"} {
		if !strings.Contains(text, want) {
			t.Errorf("runs over 54 years: no notice says %q:\n%s", want, text)
		}
	}
	// The same bound on run discovery, whatever the range: a month at most.
	if sent > 200 {
		t.Errorf("runs over 54 years sent %d Prometheus requests", sent)
	}

	var got *backend.CallResourceResponse
	sent = count(func() {
		err := c.CallResource(context.Background(), &backend.CallResourceRequest{PluginContext: e.pluginContext(), Path: "runs", Method: "GET", URL: "runs?from=0"},
			backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error { got = r; return nil }))
		if err != nil || got == nil {
			t.Fatalf("GET /runs?from=0: %v", err)
		}
	})
	t.Logf("GET /runs?from=0: %d Prometheus requests", sent)
	if got.Status != http.StatusOK || !strings.Contains(string(got.Body), "maxRangeDays") || sent > 200 {
		t.Errorf("GET /runs?from=0: %d requests, status %d, body %.500s", sent, got.Status, got.Body)
	}
}

// A malformed or hostile run id, test name, tag or baseline ("..", "/",
// control characters, over 255 bytes) is a 400 in every query type and
// resource; a well-formed id that no catalog knows is a 404.
func TestHostileValuesAre400UnknownIDs404(t *testing.T) {
	e := newEnv(t, "steady")
	e.jsonData["gates"] = "gates:\n  - key: cluster_packing_p50\n    min: 0.5\n"
	good := storeNightly(t, e.storeRoot, 2, 2, e.now.Unix()) // stored runs with rows
	c := e.client(t)
	long := strings.Repeat("a", 256)
	unknown := "nope/1710000000/x"
	from, to := e.truth.Start-600, e.truth.End+600
	for _, tc := range []struct {
		name  string
		model map[string]any
		want  backend.Status
	}{
		{"changePoints testName ..", map[string]any{"queryType": "changePoints", "testName": ".."}, 400},
		{"changePoints testName with /", map[string]any{"queryType": "changePoints", "testName": "a/b"}, 400},
		{"changePoints testName with a control character", map[string]any{"queryType": "changePoints", "testName": "t\x01x"}, 400},
		{"changePoints testName of 256 bytes", map[string]any{"queryType": "changePoints", "testName": long}, 400},
		{"runs testName ..", map[string]any{"queryType": "runs", "testName": ".."}, 400},
		{"summary tag with /", map[string]any{"queryType": "summary", "tag": "../x"}, 400},
		{"compare baseline ../../x", map[string]any{"queryType": "compare", "baseline": "../../x", "candidate": good[0]}, 400},
		{"compare candidate tag ..", map[string]any{"queryType": "compare", "baseline": good[0], "candidate": "t/1710000000/.."}, 400},
		{"compare baseline not a stored id", map[string]any{"queryType": "compare", "baseline": "prom-1710000000", "candidate": good[0]}, 400},
		{"compare baseline unknown", map[string]any{"queryType": "compare", "baseline": unknown, "candidate": good[0]}, 404},
		{"gates run ../../x", map[string]any{"queryType": "gates", "run": "../../x"}, 400},
		{"gates baseline with a control character", map[string]any{"queryType": "gates", "run": good[0], "baseline": "t/1/\x7f"}, 400},
		{"gates run unknown", map[string]any{"queryType": "gates", "run": unknown}, 404},
		{"gates baseline unknown", map[string]any{"queryType": "gates", "run": good[0], "baseline": unknown}, 404},
		{"packing run ../../x", map[string]any{"queryType": "packing", "run": "../../x"}, 400},
		{"packing run unknown", map[string]any{"queryType": "packing", "run": unknown}, 404},
	} {
		r := e.query(t, c, q("A", from, to, tc.model))["A"]
		if r.Status != tc.want || r.Error == nil || r.ErrorSource != backend.ErrorSourceDownstream {
			t.Errorf("%s: status %d, source %s, error %v; want a downstream %d", tc.name, r.Status, r.ErrorSource, r.Error, tc.want)
		}
	}
	for _, tc := range []struct {
		path string
		want int
	}{
		{"runs?testName=..", 400},
		{"runs?tag=a%2Fb", 400},
		{"runs?testName=" + long, 400},
		{"runs/..%2F..%2Fx", 400},
		{"runs/latest?testName=..", 400},
		{"runs/" + unknown, 404},
	} {
		var got *backend.CallResourceResponse
		p, _, _ := strings.Cut(tc.path, "?")
		err := c.CallResource(context.Background(), &backend.CallResourceRequest{PluginContext: e.pluginContext(), Path: p, Method: "GET", URL: tc.path},
			backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error { got = r; return nil }))
		if err != nil || got == nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		if got.Status != tc.want {
			t.Errorf("GET %s: %d %s; want %d", tc.path, got.Status, got.Body, tc.want)
		}
	}
}

// "a bug is a plugin error. One failing query never fails its neighbours."
func TestBugIsPluginError(t *testing.T) {
	e := newEnv(t, "steady")
	d, err := newDatasource(context.Background(), e.settings(), func() time.Time { return e.now })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Dispose()
	d.handlers["boom"] = func(context.Context, backend.PluginContext, backend.DataQuery) backend.DataResponse {
		panic("a bug")
	}
	from, to := e.truth.Start-600, e.truth.End+600
	resp := directQuery(t, d, q("bad", from, to, map[string]any{"queryType": "boom"}), q("good", from, to, map[string]any{"queryType": "runs"}))
	bad := resp["bad"]
	if bad.Error == nil || bad.ErrorSource != backend.ErrorSourcePlugin || bad.Status != backend.StatusInternal || !strings.Contains(bad.Error.Error(), "a bug") {
		t.Errorf("panicking handler: %v (source %s, status %d)", bad.Error, bad.ErrorSource, bad.Status)
	}
	if g := resp["good"]; g.Error != nil || len(g.Frames) != 1 || g.Frames[0].Rows() != 1 {
		t.Errorf("the neighbour failed: %v", g.Error)
	}
}
