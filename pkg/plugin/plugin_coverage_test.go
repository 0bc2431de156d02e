package plugin

// datasource.md rules that the other tests of this package pin only
// through the package's own constants (units, field names) or not at all:
// plugin.json, TLS and Kubernetes settings, the timeout and concurrency
// settings as requests see them, runs ordering and filters, run "range" for
// per-run types, frontier trends, secrets in responses, plugin errors and
// the cache key.

import (
	"context"
	"encoding/json"
	"encoding/pem"
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
	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// `Plugin id substrate-density-datasource, a backend datasource
// ("backend": true, "metrics": true, "annotations": true, "alerting": true)`.
func TestCoveragePluginJSON(t *testing.T) {
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

// The Grafana unit ids of the spec: percentunit for ratios, percent for
// stall %, gbytes for GiB, mbytes for MiB, MiBs for MiB/s, s for seconds.
func TestCoverageUnitIDs(t *testing.T) {
	for got, want := range map[string]string{unitRatio: "percentunit", unitPercent: "percent", unitGiB: "gbytes", unitMiB: "mbytes", unitMiBs: "MiBs", unitSeconds: "s"} {
		if got != want {
			t.Errorf("unit %q, spec %q", got, want)
		}
	}
}

// snapshots: "one-row table whose fields are named exactly as the 18
// snapshot keys (units s, MiB, MiB/s)", checked against the spec's table.
func TestCoverageSnapshotsFrameNamesAndUnits(t *testing.T) {
	e := newEnv(t, "steady")
	f := e.one(t, e.client(t), map[string]any{"queryType": "snapshots", "run": e.runID}).Frames[0]
	want := [][2]string{
		{"size_p50_mb", "mbytes"}, {"size_p90_mb", "mbytes"}, {"size_p95_mb", "mbytes"}, {"size_p99_mb", "mbytes"}, {"size_avg_mb", "mbytes"},
		{"checkpoints_in_window", "none"}, {"checkpoints_cumulative", "none"},
		{"restore_p50_s", "s"}, {"restore_p90_s", "s"}, {"restore_p95_s", "s"}, {"restore_p99_s", "s"}, {"restore_mean_s", "s"},
		{"checkpoint_p50_s", "s"}, {"checkpoint_p90_s", "s"}, {"checkpoint_p95_s", "s"}, {"checkpoint_p99_s", "s"}, {"checkpoint_mean_s", "s"},
		{"checkpoint_mb_s", "MiBs"},
	}
	if f.Rows() != 1 || len(f.Fields) != len(want) {
		t.Fatalf("%d rows, %d fields; want one row of %d", f.Rows(), len(f.Fields), len(want))
	}
	for i, w := range want {
		fld := f.Fields[i]
		if fld.Name != w[0] || fld.Config == nil || fld.Config.Unit != w[1] {
			t.Errorf("field %d: %s unit %v, want %s %s", i, fld.Name, fld.Config, w[0], w[1])
		}
	}
}

// Kubernetes access: kubeconfig path + context (jsonData kubeconfigPath,
// kubeContext) reach the client configuration.
func TestCoverageKubeconfigSettings(t *testing.T) {
	s, err := LoadSettings(backend.DataSourceInstanceSettings{URL: "http://prom:9090",
		JSONData: json.RawMessage(`{"kubernetesAccess": "kubeconfig", "kubeconfigPath": "/etc/kube/config", "kubeContext": "lab", "timeoutSeconds": 7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Kube.Access != "kubeconfig" || s.Kube.ConfigPath != "/etc/kube/config" || s.Kube.Context != "lab" {
		t.Fatalf("kube settings %+v", s.Kube)
	}
	a := s.Kube.access(s.Timeout)
	if a.Mode != "kubeconfig" || a.KubeconfigPath != "/etc/kube/config" || a.Context != "lab" || a.Timeout != 7*time.Second {
		t.Errorf("cluster access %+v", a)
	}
	// inCluster needs nothing else.
	if s, err := LoadSettings(backend.DataSourceInstanceSettings{URL: "http://p", JSONData: json.RawMessage(`{"kubernetesAccess": "inCluster"}`)}); err != nil || s.Kube.Access != "inCluster" {
		t.Errorf("inCluster: %+v %v", s.Kube, err)
	}
}

// TLS options come from the SDK's HTTP client options: a Prometheus behind
// a private CA is reachable with tlsAuthWithCACert + the tlsCACert secret,
// and not without.
func TestCoverageTLSSettings(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	get := func(jd string, secure map[string]string) error {
		s := backend.DataSourceInstanceSettings{URL: srv.URL, JSONData: json.RawMessage(jd), DecryptedSecureJSONData: secure}
		cfg, err := LoadSettings(s)
		if err != nil {
			return err
		}
		c, err := HTTPClient(context.Background(), s, cfg)
		if err != nil {
			return err
		}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	if err := get(`{}`, nil); err == nil {
		t.Error("a private CA was trusted without tlsCACert")
	}
	if err := get(`{"tlsAuthWithCACert": true}`, map[string]string{"tlsCACert": ca}); err != nil {
		t.Errorf("with the CA: %v", err)
	}
	if err := get(`{"tlsSkipVerify": true}`, nil); err != nil {
		t.Errorf("tlsSkipVerify: %v", err)
	}
}

// fakeDatasource is an instance whose Prometheus is a fake, with no store
// and discovery on (the ad hoc run's user counts come from the fake).
func fakeDatasource(t *testing.T, url string, jd map[string]any) *Datasource {
	t.Helper()
	b, _ := json.Marshal(jd)
	d, err := newDatasource(context.Background(), backend.DataSourceInstanceSettings{UID: "fake", URL: url, JSONData: b},
		func() time.Time { return time.Unix(1710330000, 0) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Dispose)
	return d
}

func fakeEmpty(delay time.Duration) promfake.Handler {
	return func(r promfake.Request) promfake.Reply {
		body := promfake.Success("vector", "[]")
		if strings.HasSuffix(r.Path, "query_range") {
			body = promfake.Success("matrix", "[]")
		}
		return promfake.Reply{Body: body, Delay: delay}
	}
}

func directQuery(t *testing.T, d *Datasource, qs ...backend.DataQuery) backend.Responses {
	t.Helper()
	resp, err := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: qs})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Responses
}

// timeoutSeconds overrides both request timeouts (default 5 s instant, 8 s
// range); maxConcurrentQueries bounds the requests in flight.
func TestCoverageTimeoutAndConcurrencySettings(t *testing.T) {
	const from, to = 1710237600, 1710240600
	for _, c := range []struct {
		name             string
		jd               map[string]any
		instant, rng     string
		maxInFlight, min int
	}{
		{"defaults", map[string]any{}, "5s", "8s", 8, 3},
		{"timeoutSeconds 3, maxConcurrentQueries 2", map[string]any{"timeoutSeconds": 3, "maxConcurrentQueries": 2}, "3s", "3s", 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := promfake.New(t, fakeEmpty(40*time.Millisecond))
			d := fakeDatasource(t, srv.URL, c.jd)
			resp := directQuery(t, d,
				q("A", from, to, map[string]any{"queryType": "snapshots"}),
				q("B", from, to, map[string]any{"queryType": "workingSet", "block": "node"}),
				q("C", from, to, map[string]any{"queryType": "psi", "scope": "pod", "resource": "io"}))
			for ref, r := range resp {
				if r.Error != nil {
					t.Fatalf("%s: %v", ref, r.Error)
				}
			}
			kinds := map[string]bool{}
			for _, r := range srv.Requests() {
				want := c.instant
				if strings.HasSuffix(r.Path, "query_range") {
					want = c.rng
				}
				kinds[r.Path] = true
				if got := r.Form.Get("timeout"); got != want {
					t.Errorf("%s timeout %q, want %q", r.Path, got, want)
				}
			}
			if len(kinds) != 2 {
				t.Errorf("paths %v: want instant and range reads", kinds)
			}
			if got := srv.MaxInFlight(); got > c.maxInFlight || got < c.min {
				t.Errorf("max in flight %d, want between %d and %d", got, c.min, c.maxInFlight)
			}
			// The ad hoc run had no user samples: the fallback says so.
			if !hasNotice(resp["A"].Frames[0], "steady window = run window") {
				t.Errorf("no steady-window fallback notice: %+v", resp["A"].Frames[0].Meta)
			}
		})
	}
}

// The runs table: "newest first; filter by test name / tag"; frontier with
// run range: "one row per run in range: a trend across runs".
func TestCoverageRunsOrderFiltersAndTrend(t *testing.T) {
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
		f := e.one(t, c, model).Frames[0]
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
func TestCoverageRangeRunSteadyFromUserCount(t *testing.T) {
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
func TestCoverageSecretsNeverInResponses(t *testing.T) {
	const kubeSecret = "kube-t0ken-secret"
	syn := kubefake.Synthetic{Nodes: 2, WorkerNodes: 1, Pods: 4, Workers: 2, Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
	kube := kubefake.New(kubefake.Config{Token: kubeSecret, Pods: syn.PodSource(), Nodes: syn.NodeSource()})
	defer kube.Close()
	e := newEnv(t, "steady")
	e.jsonData["basicAuth"] = true
	e.jsonData["basicAuthUser"] = "grafana"
	e.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	e.jsonData["kubernetesAccess"] = "token"
	e.jsonData["kubernetesURL"] = kube.URL
	e.secure = map[string]string{"basicAuthPassword": secretPassword, "bearerToken": secretToken, "httpHeaderValue1": secretTenant, "kubernetesToken": kubeSecret}
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

// "a bug is a plugin error. One failing query never fails its neighbours."
func TestCoverageBugIsPluginError(t *testing.T) {
	e := newEnv(t, "steady")
	d, err := newDatasource(context.Background(), e.settings(), func() time.Time { return e.now })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Dispose()
	real := d.mux
	m := datasource.NewQueryTypeMux()
	m.Handle("boom", backend.QueryDataHandlerFunc(func(context.Context, *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
		panic("a bug")
	}))
	m.Handle("", real)
	d.mux = m
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

// Caching: blocks are keyed by run and "settings that change the result":
// another window of the same id, another steady window, lag or selector is
// another entry.
func TestCoverageCacheKey(t *testing.T) {
	srv := promfake.New(t, fakeEmpty(0))
	base := runs.Entry{Run: runs.Run{ID: "range", Start: 100, End: 200, SteadyStart: 120, SteadyEnd: 180}}
	d := fakeDatasource(t, srv.URL, map[string]any{})
	k := d.blockKey(base, harvest.BlockPacking)
	if d.blockKey(base, harvest.BlockPacking) != k {
		t.Fatal("the key is not stable")
	}
	variants := map[string]func(e *runs.Entry){
		"end":          func(e *runs.Entry) { e.End = 210 },
		"steady start": func(e *runs.Entry) { e.SteadyStart = 121 },
		"steady end":   func(e *runs.Entry) { e.SteadyEnd = 181 },
	}
	for name, mod := range variants {
		v := base
		mod(&v)
		if d.blockKey(v, harvest.BlockPacking) == k {
			t.Errorf("%s: same cache key", name)
		}
	}
	if d.blockKey(base, harvest.BlockSnapshots) == k {
		t.Error("two blocks share a key")
	}
	for _, jd := range []map[string]any{{"ateletLagSeconds": 90}, {"workerPool": "other"}, {"workerPodRegex": "w-.*"}} {
		if fakeDatasource(t, srv.URL, jd).blockKey(base, harvest.BlockPacking) == k {
			t.Errorf("settings %v: same cache key", jd)
		}
	}
}

// summary: "numeric ones as numbers (strings only for text facts such as
// machine_type)".
func TestCoverageSummaryFieldTypes(t *testing.T) {
	e := newEnv(t, "ladder")
	e.storeExport(t)
	f := e.one(t, e.client(t), map[string]any{"queryType": "summary", "run": e.runID}).Frames[0]
	for _, k := range []string{"machine_type", "kubernetes_version", "worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class", "multi_actor_worker"} {
		if _, ok := field(t, f, k).At(0).(*string); !ok {
			t.Errorf("%s is %T, want a string", k, field(t, f, k).At(0))
		}
	}
	for _, k := range []string{"cluster_packing_p50", "oom_events_node", "checkpoints_in_window", "node_count", "allocatable_cores", "worker_pod_count",
		"run_start", "run_end", "actors_per_node", "actors_per_pod_p50", "aggregate_failure_ratio"} {
		if _, ok := field(t, f, k).At(0).(*float64); !ok {
			t.Errorf("%s is %T, want a number", k, field(t, f, k).At(0))
		}
	}
}
