package plugin

// The fault matrix of the datasource path: the faults of the
// export's matrix (pkg/export/faults_test.go) injected into a datasource
// served over Grafana's plugin gRPC protocol. For every row and every query
// of a dashboard load the answer must be either a downstream error naming
// the cause (never a plugin error, never a panic) or frames in which what
// the fault touches is null and a notice names the cause; and CheckHealth
// must name the fault where a health probe can see it.
//
// With -reliability-doc (or RELIABILITY_DOC=1) the rows and their observed
// outcomes are written to the datasource section of docs/reliability.md.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
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
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/damage"
	"github.com/substrate/density/internal/faultdoc"
	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/runs"
)

var reliabilityDoc = flag.Bool("reliability-doc", false, "write the fault matrix outcomes to docs/reliability.md (also RELIABILITY_DOC=1)")

// faultKubeToken is the only bearer token the fake API servers accept.
const faultKubeToken = "k8s-t0ken"

// faultCluster is the synthetic cluster of the Kubernetes rows, with more
// worker pods than a list page (500) so that listing paginates.
var faultCluster = kubefake.Synthetic{Nodes: 4, WorkerNodes: 2, Pods: 1400, Workers: 1100,
	Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}

// dsQuery is one query of the dashboard load each row sends, and whether
// its answer depends on the faulty part.
type dsQuery struct {
	model    map[string]any
	affected bool
}

// dsFault is one row of the datasource matrix.
type dsFault struct {
	fault string
	// setup injects the fault into a healthy env.
	setup func(t *testing.T, e *env)
	// queries is the dashboard load (default: promQueries).
	queries func(e *env) []dsQuery
	// cause: every affected query's error or notices contain one of these.
	cause []string
	// health is the expected status; healthSays must all be in the message.
	health     backend.HealthStatus
	healthSays []string
	// how says how the fault was produced, for the doc.
	how string
	// healthNote explains the health outcome, for the doc.
	healthNote string
	// keepsValues: affected answers keep (flagged) numbers; otherwise only
	// the series counts (nodes, pods, atelets, count) may stay non-null.
	keepsValues bool
}

// seriesCounts are the frame fields that count series seen, which a fault
// that nulls every sample leaves measured.
var seriesCounts = []string{"nodes", "pods", "atelets", "count"}

// promQueries is a dashboard load over the stored run: every per-run
// query type reads Prometheus; runs lists the store.
func promQueries(e *env) []dsQuery {
	id := e.runID
	return []dsQuery{
		{map[string]any{"queryType": "packing", "run": id}, true},
		{map[string]any{"queryType": "psi", "run": id, "scope": "node", "resource": "cpu"}, true},
		{map[string]any{"queryType": "psi", "run": id, "scope": "pod", "resource": "memory"}, true},
		{map[string]any{"queryType": "snapshots", "run": id}, true},
		{map[string]any{"queryType": "activeActors", "run": id}, true},
		{map[string]any{"queryType": "workingSet", "run": id, "block": "node"}, true},
		{map[string]any{"queryType": "oomEvents", "run": id}, true},
		{map[string]any{"queryType": "summary", "run": id}, true},
		{map[string]any{"queryType": "runs"}, false},
		{map[string]any{"queryType": "frontier", "run": id}, false},
	}
}

// TestDatasourceFaultMatrix runs every row; see the file comment.
func TestDatasourceFaultMatrix(t *testing.T) {
	var (
		mu   sync.Mutex
		rows []faultRow
	)
	for _, row := range datasourceFaults() {
		t.Run(row.fault, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "steady")
			e.jsonData["discoverRuns"] = false
			if row.setup != nil {
				row.setup(t, e)
			}
			qs := promQueries
			if row.queries != nil {
				qs = row.queries
			}
			query, health := checkDatasourceRow(t, e, row, qs(e))
			how := ""
			if row.how != "" {
				how = " (" + row.how + ")"
			}
			mu.Lock()
			rows = append(rows, faultRow{row.fault, "datasource QueryData", query + how}, faultRow{row.fault, "datasource CheckHealth", health})
			mu.Unlock()
		})
	}
	t.Cleanup(func() {
		if !faultdoc.Requested(*reliabilityDoc) {
			return
		}
		if t.Failed() {
			t.Log("docs/reliability.md not written: a row failed")
			return
		}
		order := map[string]int{}
		for i, r := range datasourceFaults() {
			order[r.fault] = i
		}
		slices.SortStableFunc(rows, func(a, b faultRow) int { return order[a.fault] - order[b.fault] })
		faultdoc.WriteTable(t, "datasource", datasourceDocIntro, docRows(rows))
	})
}

const datasourceDocIntro = "## Faults: the datasource\n\n" +
	"Path `datasource`: the plugin served over Grafana's plugin gRPC protocol " +
	"(`experimental/datasourcetest`), one datasource instance per row over the simulator's \"steady\" run " +
	"(real Prometheus 2.42, a file:// results store laid out as the orchestrator uploads runs). " +
	"`QueryData` sends a dashboard load (packing, PSI node and pod, snapshots, active actors, working set, OOM events, " +
	"summary, runs, frontier; clusterFacts and frontier for the Kubernetes rows); the test asserts that no answer is a " +
	"plugin error or a panic, that every query the fault touches is either a downstream error naming the cause or frames " +
	"whose numbers are null with a notice naming the cause, and that the others are answered. `CheckHealth` must name " +
	"the fault where a probe can see it."

// faultRow is one recorded outcome.
type faultRow struct{ fault, path, outcome string }

// checkDatasourceRow sends the load and the health check and asserts the
// row; it returns the two outcome texts.
func checkDatasourceRow(t *testing.T, e *env, row dsFault, qs []dsQuery) (string, string) {
	t.Helper()
	c := e.client(t)
	from, to := e.truth.Start-600, e.truth.End+600
	var dqs []backend.DataQuery
	for i, dq := range qs {
		dqs = append(dqs, q(fmt.Sprintf("Q%02d", i), from, to, dq.model))
	}
	resp, err := c.QueryData(context.Background(), &backend.QueryDataRequest{PluginContext: e.pluginContext(), Queries: dqs})
	if err != nil {
		t.Fatalf("QueryData failed as a whole: %v", err)
	}
	var errs, noticed, answered []string
	for i, dq := range qs {
		ref := fmt.Sprintf("Q%02d", i)
		r, ok := resp.Responses[ref]
		name := queryName(dq.model)
		if !ok {
			t.Errorf("%s: no response", name)
			continue
		}
		if r.Error != nil {
			t.Logf("%s: error %v (status %d, source %s)", name, r.Error, r.Status, r.ErrorSource)
		} else {
			t.Logf("%s: %d frames, non-null numbers in %v, notices: %s", name, len(r.Frames), nonNullNumbers(r.Frames), strings.Join(notices(r.Frames), " | "))
		}
		if r.Error != nil && (r.ErrorSource != backend.ErrorSourceDownstream || r.Status == backend.StatusInternal || r.Status == 0) {
			t.Errorf("%s: a plugin error (status %d, source %q): %v", name, r.Status, r.ErrorSource, r.Error)
			continue
		}
		switch {
		case !dq.affected:
			if r.Error != nil {
				t.Errorf("%s does not depend on the faulty part but failed: %v", name, r.Error)
			}
			answered = append(answered, name)
		case r.Error != nil:
			if !containsAny(r.Error.Error(), row.cause) {
				t.Errorf("%s: error %q does not name the cause (%v)", name, r.Error, row.cause)
			}
			errs = append(errs, fmt.Sprintf("%s %d", name, r.Status))
		default:
			if len(r.Frames) == 0 {
				t.Errorf("%s: no error and no frames", name)
			}
			if !containsAny(strings.Join(notices(r.Frames), "\n"), row.cause) {
				t.Errorf("%s: no notice names the cause %v; notices: %q", name, row.cause, notices(r.Frames))
			}
			if !row.keepsValues {
				for _, f := range nonNullNumbers(r.Frames) {
					if !slices.Contains(seriesCounts, f) {
						t.Errorf("%s: %s is not null under the fault", name, f)
					}
				}
			}
			noticed = append(noticed, name)
		}
	}
	h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
	if err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	t.Logf("health %v:\n%s", h.Status, h.Message)
	if h.Status != row.health {
		t.Errorf("health %v, want %v:\n%s", h.Status, row.health, h.Message)
	}
	for _, s := range row.healthSays {
		if !strings.Contains(h.Message, s) {
			t.Errorf("health does not say %q:\n%s", s, h.Message)
		}
	}
	var parts []string
	if len(errs) > 0 {
		parts = append(parts, "downstream error naming the cause: "+strings.Join(errs, ", "))
	}
	if len(noticed) > 0 {
		what := "frames with nulls and a notice naming the cause: "
		if row.keepsValues {
			what = "frames with a notice naming the cause: "
		}
		parts = append(parts, what+strings.Join(noticed, ", "))
	}
	if len(answered) > 0 {
		parts = append(parts, "answered: "+strings.Join(answered, ", "))
	}
	return "no plugin error, no panic; " + strings.Join(parts, "; "), healthOutcome(h, row)
}

// healthOutcome is the health part that names the fault.
func healthOutcome(h *backend.CheckHealthResult, row dsFault) string {
	status := "OK"
	if h.Status == backend.HealthStatusError {
		status = "Error"
	}
	line := ""
	for _, l := range strings.Split(h.Message, "\n") {
		if len(row.healthSays) > 0 && strings.Contains(l, row.healthSays[0]) {
			line = l
			break
		}
	}
	out := status
	if line != "" {
		out = fmt.Sprintf("%s: %q", status, stableLine(line))
	}
	if row.healthNote != "" {
		out += " (" + row.healthNote + ")"
	}
	return out
}

func queryName(m map[string]any) string {
	name, _ := m["queryType"].(string)
	for _, k := range []string{"scope", "resource", "block"} {
		if v, ok := m[k].(string); ok {
			name += " " + v
		}
	}
	return name
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func notices(frames data.Frames) []string {
	var out []string
	for _, f := range frames {
		if f.Meta == nil {
			continue
		}
		for _, n := range f.Meta.Notices {
			out = append(out, n.Text)
		}
	}
	return out
}

// nonNullNumbers names the numeric fields of frames holding a non-null
// cell.
func nonNullNumbers(frames data.Frames) []string {
	var out []string
	for _, f := range frames {
		for _, fld := range f.Fields {
			if !fld.Type().Numeric() {
				continue
			}
			for i := 0; i < fld.Len(); i++ {
				if _, ok := fld.ConcreteAt(i); ok {
					out = append(out, fld.Name)
					break
				}
			}
		}
	}
	return out
}

// datasourceFaults is the matrix.
func datasourceFaults() []dsFault {
	okVector := promfake.Success("vector", "[]")
	return []dsFault{
		{fault: "Prometheus: connection refused",
			setup: func(t *testing.T, e *env) { e.promURL = promfake.ClosedURL(t) },
			cause: []string{"connection refused"}, health: backend.HealthStatusError, healthSays: []string{"connection refused"}},
		{fault: "Prometheus: DNS failure (.invalid host)",
			setup: func(t *testing.T, e *env) { e.promURL = "http://prometheus.invalid:9090" },
			cause: []string{"no such host"}, health: backend.HealthStatusError, healthSays: []string{`"prometheus.invalid" could not be resolved`}},
		{fault: "Prometheus: slower than the timeout",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, promfake.Always(promfake.Reply{Delay: 15 * time.Second, Body: okVector})).URL
				e.jsonData["timeoutSeconds"] = 1
			},
			cause: []string{"timeout"}, health: backend.HealthStatusError, healthSays: []string{"no answer within"}},
		{fault: "Prometheus: HTTP 502 HTML page (every attempt)",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, promfake.Always(promfake.HTML(http.StatusBadGateway))).URL
			},
			cause: []string{"502"}, health: backend.HealthStatusError, healthSays: []string{"502"}},
		{fault: "Prometheus: HTTP 503 HTML page (every attempt)",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, promfake.Always(promfake.HTML(http.StatusServiceUnavailable))).URL
			},
			cause: []string{"503"}, health: backend.HealthStatusError, healthSays: []string{"503"}},
		{fault: "Prometheus: 429 with Retry-After: 120 (beyond the 2 s retry cap)",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, promfake.Always(promfake.TooManyRequests("120"))).URL
			},
			cause: []string{"429"}, health: backend.HealthStatusError, healthSays: []string{"429"}},
		{fault: "Prometheus: truncated JSON",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, promfake.Always(promfake.Truncated(promfake.Success("matrix", `[{"metric":{"a":"b"},"values":[[1700000000,"1"]]}]`)))).URL
			},
			cause: []string{"unexpected end of JSON input"}, health: backend.HealthStatusError, healthSays: []string{"not the Prometheus API"}},
		{fault: "Prometheus: status error with errorType",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, promfake.Always(promfake.APIError("execution", "expanding series: store gateway unavailable"))).URL
			},
			cause: []string{"store gateway unavailable"}, health: backend.HealthStatusError, healthSays: []string{"store gateway unavailable"}},
		{fault: "Prometheus: wrong result type",
			setup: func(t *testing.T, e *env) {
				e.promURL = promfake.New(t, func(r promfake.Request) promfake.Reply {
					if strings.HasSuffix(r.Path, "/query_range") {
						return promfake.OK(promfake.Success("vector", "[]"))
					}
					return promfake.OK(promfake.Success("string", promfake.Scalar(promfake.Point{T: 1700000000, V: "surprise"})))
				}).URL
			},
			cause: []string{"unexpected result type", `unexpected value type "string"`}, health: backend.HealthStatusError,
			healthSays: []string{`result type "string"`}},
		{fault: "Prometheus: NaN and ±Inf values",
			setup: func(t *testing.T, e *env) {
				p := newRewritingProxy(t, e.prom.URL, promfake.NonFinite)
				e.promURL = p.URL
			},
			how:   "a proxy replaces every sample value of the real answers with NaN, +Inf or -Inf",
			cause: []string{"no sample", "nothing was measured", "no atelet reported", "no timestamp"}, health: backend.HealthStatusOk,
			healthNote: "NaN and ±Inf are valid sample values: the probes succeed and the metric families exist; the panels say nothing finite was measured"},
		{fault: "Prometheus: partial data with warnings (Thanos/Mimir)",
			setup: func(t *testing.T, e *env) {
				p := newRewritingProxy(t, e.prom.URL, promfake.AddWarning("partial response: store 10.0.0.3:10901 unavailable"))
				e.promURL = p.URL
			},
			how: "values are kept as answered and flagged", keepsValues: true,
			cause: []string{"partial response: store 10.0.0.3:10901 unavailable"}, health: backend.HealthStatusOk,
			healthNote: "partial data is not a connectivity fault; the panels carry the warning"},
		{fault: "Prometheus: answer larger than the response-size limit",
			setup: func(t *testing.T, e *env) {
				e.jsonData["maxResponseBytes"] = 1 << 20
				e.promURL = promfake.OversizedServer(t, 2<<20)
			},
			how:   "maxResponseBytes 1 MiB, answers of 2 MiB",
			cause: []string{"1048576"}, health: backend.HealthStatusError, healthSays: []string{"1048576"}},

		// Kubernetes: a run outside the store (found by Prometheus run
		// discovery) that ended 10 minutes ago is described by the live
		// cluster.
		kubeFault("Kubernetes: 401 Unauthorized", kubefake.Config{Token: "another-token"}, nil,
			[]string{"401 Unauthorized"}, backend.HealthStatusError, "401 Unauthorized"),
		kubeFault("Kubernetes: 403 Forbidden", kubefake.Config{Token: faultKubeToken, Faults: map[string]kubefake.Fault{
			kubefake.Pods: {Status: http.StatusForbidden}, kubefake.Nodes: {Status: http.StatusForbidden}, kubefake.Events: {Status: http.StatusForbidden}}}, nil,
			[]string{"403 Forbidden"}, backend.HealthStatusError, "forbidden"),
		kubeFault("Kubernetes: timeout", kubefake.Config{Token: faultKubeToken, Faults: map[string]kubefake.Fault{
			kubefake.Pods: {Delay: time.Minute}, kubefake.Nodes: {Delay: time.Minute}, kubefake.Events: {Delay: time.Minute}}},
			func(e *env) { e.jsonData["timeoutSeconds"] = 2 },
			[]string{"timed out", "Timeout"}, backend.HealthStatusError, "timed out"),
		func() dsFault {
			f := kubeFault("Kubernetes: continue token expires (410) twice mid-pagination", kubefake.Config{Token: faultKubeToken,
				Faults: map[string]kubefake.Fault{kubefake.Pods: {ExpireContinue: 2}}}, nil,
				[]string{"410 Expired"}, backend.HealthStatusOk, "Kubernetes")
			f.healthNote = "the RBAC probe lists one item, so no continue token; the expiry is named by the queries that paginate"
			return f
		}(),

		// Results store: the stored run as `density export` leaves it
		// (Locust files, status.json, server_summary.json, stats.jsonl).
		storeFault("Results store: the store does not exist", func(t *testing.T, e *env) {
			e.jsonData["resultsStore"] = "file:///nonexistent/results"
		}, []string{"results store"}, []string{"packing", "oomEvents", "clusterFacts", "frontier", "summary"}, backend.HealthStatusError, "could not be opened", "", ""),
		storeFault("Results store: missing object (stats.jsonl not uploaded)", func(t *testing.T, e *env) {
			damage.Remove(t, filepath.Join(e.runDir(), runs.FileStatsJSONL))
		}, []string{"no trial_summary row"}, []string{"clusterFacts", "frontier", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote, ""),
		storeFault("Results store: permission denied (stats.jsonl)", func(t *testing.T, e *env) {
			damage.DenyRead(t, filepath.Join(e.runDir(), runs.FileStatsJSONL))
		}, []string{"stats.jsonl"}, []string{"clusterFacts", "frontier", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote,
			"chmod 000; as root, which ignores file modes, a directory in place of the file"),
		storeFault("Results store: corrupt stats_history.csv line", func(t *testing.T, e *env) {
			damage.InsertLine(t, filepath.Join(e.runDir(), runs.FileStatsHistory), "\x00\xff\xfe garbage \xc3\x28\n")
		}, []string{"stats_history.csv", "invalid UTF-8"}, []string{"packing", "oomEvents", "clusterFacts", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote, ""),
		storeFault("Results store: corrupt stats.csv line", func(t *testing.T, e *env) {
			damage.InsertLine(t, filepath.Join(e.runDir(), runs.FileStats), "grpc,Resume,12x,oops,1,1\n")
		}, nil, nil, backend.HealthStatusOk, "listable", storeHealthNote, "the datasource never reads stats.csv: failure ratios come from the stored trial_summary row"),
		storeFault("Results store: corrupt stats.jsonl line (the trial_summary row)", func(t *testing.T, e *env) {
			corruptLastLine(t, filepath.Join(e.runDir(), runs.FileStatsJSONL), true)
		}, []string{"no trial_summary row"}, []string{"clusterFacts", "frontier", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote, ""),
		storeFault("Results store: half-written stats_history.csv (upload cut mid-line)", func(t *testing.T, e *env) {
			damage.Cut(t, filepath.Join(e.runDir(), runs.FileStatsHistory), 0.6)
		}, []string{"half-written"}, []string{"packing", "oomEvents", "clusterFacts", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote, ""),
		storeFault("Results store: half-written server_summary.json", func(t *testing.T, e *env) {
			damage.Cut(t, filepath.Join(e.runDir(), runs.FileServerSummary), 0.5)
		}, []string{"server_summary.json"}, []string{"packing", "oomEvents", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote, ""),
		storeFault("Results store: half-written stats.jsonl (last line cut)", func(t *testing.T, e *env) {
			corruptLastLine(t, filepath.Join(e.runDir(), runs.FileStatsJSONL), false)
		}, []string{"no trial_summary row"}, []string{"clusterFacts", "frontier", "summary"}, backend.HealthStatusOk, "listable", storeHealthNote, ""),
	}
}

// kubeFault is a Kubernetes row: the datasource reads the live cluster
// (a fake API server holding faultCluster) for a run outside the store.
func kubeFault(name string, cfg kubefake.Config, tune func(*env), cause []string, health backend.HealthStatus, healthSays string) dsFault {
	return dsFault{
		fault: name,
		setup: func(t *testing.T, e *env) {
			cfg.Pods, cfg.Nodes = faultCluster.PodSource(), faultCluster.NodeSource()
			cfg.TLS = true // token mode needs https://
			srv := kubefake.New(cfg)
			t.Cleanup(srv.Close)
			delete(e.jsonData, "resultsStore")
			e.jsonData["discoverRuns"] = true
			e.kubeToken(srv.URL, srv.CACertPEM(), faultKubeToken)
			e.now = time.Unix(e.truth.End+600, 0)
			if tune != nil {
				tune(e)
			}
		},
		queries: func(e *env) []dsQuery {
			return []dsQuery{
				{map[string]any{"queryType": "clusterFacts", "run": "latest"}, true},
				{map[string]any{"queryType": "frontier", "run": "latest"}, true},
				{map[string]any{"queryType": "packing", "run": "latest"}, false},
				{map[string]any{"queryType": "runs"}, false},
			}
		},
		cause: cause, health: health, healthSays: []string{healthSays},
		how: fmt.Sprintf("%d worker pods, listed in pages of 500", faultCluster.Workers),
	}
}

// storeQueries are the queries of the store rows; a row names those its
// fault touches.
var storeQueries = []string{"runs", "packing", "oomEvents", "clusterFacts", "frontier", "summary"}

// storeFault is a results-store row over the exported stored run; affected
// names the queries whose answer must name the cause.
func storeFault(name string, damage func(*testing.T, *env), cause []string, affected []string, health backend.HealthStatus, healthSays, healthNote, how string) dsFault {
	return dsFault{
		fault: name,
		setup: func(t *testing.T, e *env) {
			e.storeExport(t)
			damage(t, e)
		},
		queries: func(e *env) []dsQuery {
			var out []dsQuery
			for _, qt := range storeQueries {
				m := map[string]any{"queryType": qt}
				if qt != "runs" {
					m["run"] = e.runID
				}
				out = append(out, dsQuery{m, slices.Contains(affected, qt)})
			}
			return out
		},
		cause: cause, health: health, healthSays: []string{healthSays}, keepsValues: true, healthNote: healthNote, how: how,
	}
}

// storeHealthNote explains the health outcome of the per-file store rows.
const storeHealthNote = "the health check lists the store; a damaged file of one run is named by the queries that read it"

// corruptLastLine cuts the last line of a JSONL file in half, keeping its
// newline (a corrupt line) or not (a half-written file).
func corruptLastLine(t *testing.T, path string, terminated bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	start := bytes.LastIndexByte(b, '\n') + 1
	out := b[:start+(len(b)-start)/2]
	if terminated {
		out = append(out, '\n')
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRewritingProxy is a reverse proxy in front of the real Prometheus that
// rewrites every answer body.
func newRewritingProxy(t *testing.T, target string, rewrite func([]byte) []byte) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	director := rp.Director
	rp.Director = func(r *http.Request) {
		director(r)
		r.Header.Del("Accept-Encoding") // rewrite plain JSON
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = rewrite(b)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	s := httptest.NewServer(rp)
	t.Cleanup(s.Close)
	return s
}

func docRows(rows []faultRow) []faultdoc.Row {
	out := make([]faultdoc.Row, len(rows))
	for i, r := range rows {
		out[i] = faultdoc.Row{Fault: r.fault, Path: r.path, Outcome: r.outcome}
	}
	return out
}

// stableLine is one health message for the doc: stable text, one line, short.
func stableLine(s string) string {
	s = faultdoc.Stable(strings.Join(strings.Fields(s), " "))
	if len(s) > 180 {
		s = s[:177] + "..."
	}
	return s
}
