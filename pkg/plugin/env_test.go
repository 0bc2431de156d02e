package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/datasourcetest"

	"github.com/substrate/density/internal/plugintest"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// promCache generates each simulator scenario once and backfills it into
// one real Prometheus for the whole test binary.
var promCache *promtest.Cache

// The SDK registers its gRPC metrics globally, so one plugin server serves
// the whole test binary; each env is its own datasource instance (UID) with
// its own clock.
var (
	pluginClient *datasourcetest.TestPluginClient
	pluginLog    *plugintest.Log // what the plugin and the SDK log
	clocks       sync.Map        // datasource UID -> time.Time
	instances    sync.Map        // datasource UID -> *Datasource, the newest instance
)

func TestMain(m *testing.M) {
	flag.Parse()
	promCache = promtest.NewCache()
	tp, err := servePlugin()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the plugin:", err)
		os.Exit(1)
	}
	pluginClient = tp.Client
	code := m.Run()
	_ = tp.Shutdown()
	_ = promCache.Close()
	os.Exit(code)
}

// servePlugin serves the datasource over Grafana's real plugin gRPC
// protocol; instances take their clock from clocks.
func servePlugin() (datasourcetest.TestPlugin, error) {
	tp, l, err := plugintest.ServeLogged(func(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
		uid := s.UID
		now := func() time.Time {
			if v, ok := clocks.Load(uid); ok {
				return v.(time.Time)
			}
			return time.Now()
		}
		d, err := newDatasource(ctx, s, now)
		if err == nil {
			instances.Store(uid, d)
		}
		return d, err
	})
	pluginLog = l
	return tp, err
}

// scenarios are the simulator scenarios every query type is checked on:
// "steady" (one ateapi, a clean run) and "ladder" (step-ladder load, lag
// 90 s, atelet restart, duplicate replica, scrape gap, stale markers).
var scenarios = []string{"steady", "ladder"}

// env is one scenario loaded into Prometheus and laid out in a file://
// results store the way the orchestrator uploads it.
type env struct {
	name      string
	truth     *simrun.Truth
	prom      *promtest.Server
	storeRoot string
	runID     string
	now       time.Time
	jsonData  map[string]any
	secure    map[string]string
	promURL   string
	uid       string
}

var envSeq atomic.Int64

// newEnv loads a scenario. now is an hour after the run ended: the run is
// finished and past the atelet lag.
func newEnv(t testing.TB, name string) *env {
	t.Helper()
	r, srv := promCache.Prometheus(t, name)
	tr := r.Truth
	root, dir := storeRun(t, r)
	if err := os.WriteFile(filepath.Join(dir, runs.FileStatus), []byte(`{"locust_exit_code": 0, "stats_generated": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{
		name: name, truth: tr, prom: srv, storeRoot: root, promURL: srv.URL,
		runID: runs.StoreRunID(tr.TestName, tr.Start, tr.Tag),
		now:   time.Unix(tr.End+3600, 0),
		jsonData: map[string]any{
			"resultsStore":     "file://" + root,
			"discoverRuns":     true,
			"ateletLagSeconds": tr.LagS,
			"timeoutSeconds":   30,
		},
		uid: fmt.Sprintf("ds-%s-%d", name, envSeq.Add(1)),
	}
	return e
}

// kubeToken sets token mode against a Kubernetes API server served over TLS:
// its https:// URL, the bearer token, and its CA as kubernetesCACert.
func (e *env) kubeToken(url string, caPEM []byte, token string) {
	e.jsonData["kubernetesAccess"] = "token"
	e.jsonData["kubernetesURL"] = url
	if e.secure == nil {
		e.secure = map[string]string{}
	}
	e.secure["kubernetesToken"] = token
	e.secure["kubernetesCACert"] = string(caPEM)
}

// runDir is the stored run's directory.
func (e *env) runDir() string {
	tr := e.truth
	return filepath.Join(e.storeRoot, "runs", tr.TestName, "run_date="+time.Unix(tr.Start, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(tr.Start, 10), "run_tag="+tr.Tag)
}

func (e *env) settings() backend.DataSourceInstanceSettings {
	jd, _ := json.Marshal(e.jsonData)
	return backend.DataSourceInstanceSettings{
		ID: envSeq.Load(), UID: e.uid, Name: "density " + e.name, Type: "substrate-density-datasource",
		URL: e.promURL, JSONData: jd, DecryptedSecureJSONData: e.secure, Updated: time.Unix(1, 0),
	}
}

func (e *env) pluginContext() backend.PluginContext {
	s := e.settings()
	return backend.PluginContext{OrgID: 1, PluginID: "substrate-density-datasource", DataSourceInstanceSettings: &s}
}

// client returns the plugin's gRPC client for this env's datasource, whose
// clock reads e.now (call again after changing e.now to move the clock). Settings changed after the first query need a new
// UID (Grafana would send a new Updated time).
func (e *env) client(t testing.TB) *datasourcetest.TestPluginClient {
	t.Helper()
	clocks.Store(e.uid, e.now)
	return pluginClient
}

// q builds one query of a request.
func q(refID string, from, to int64, model map[string]any) backend.DataQuery {
	if _, ok := model["refId"]; !ok {
		model["refId"] = refID
	}
	b, _ := json.Marshal(model)
	qt, _ := model["queryType"].(string)
	return backend.DataQuery{RefID: refID, QueryType: qt, JSON: b,
		TimeRange: backend.TimeRange{From: time.Unix(from, 0), To: time.Unix(to, 0)}, Interval: 10 * time.Second, MaxDataPoints: 1000}
}

// query sends queries through gRPC and returns the responses.
func (e *env) query(t testing.TB, c *datasourcetest.TestPluginClient, qs ...backend.DataQuery) backend.Responses {
	t.Helper()
	resp, err := c.QueryData(context.Background(), &backend.QueryDataRequest{PluginContext: e.pluginContext(), Queries: qs})
	if err != nil {
		t.Fatalf("QueryData: %v", err)
	}
	return resp.Responses
}

// one sends one query and fails on an error response.
func (e *env) one(t testing.TB, c *datasourcetest.TestPluginClient, model map[string]any) backend.DataResponse {
	t.Helper()
	r := e.query(t, c, q("A", e.truth.Start-600, e.truth.End+600, model))["A"]
	if r.Error != nil {
		t.Fatalf("query %v: %v (status %d, source %s)", model, r.Error, r.Status, r.ErrorSource)
	}
	return r
}

// params is the harvest of the run as `density export` would run it for
// this run: the window and steady window of the simulator's ground truth.
func (e *env) params() harvest.Params {
	tr := e.truth
	return harvest.Params{Start: tr.Start, End: tr.End, SteadyStart: tr.SteadyStart, SteadyEnd: tr.SteadyEnd,
		LagS: tr.LagS, Sel: harvest.DefaultSelectors()}
}

// expected harvests the run directly with the engine (no plugin).
func (e *env) expected(t testing.TB) *harvest.Result {
	t.Helper()
	c, err := promql.New(promql.Config{URL: e.prom.URL, InstantTimeout: 30 * time.Second, RangeTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return harvest.Harvest(context.Background(), c, e.params())
}

// field returns the frame's field by name.
func field(t testing.TB, f *data.Frame, name string) *data.Field {
	t.Helper()
	fld, i := f.FieldByName(name)
	if i < 0 {
		var names []string
		for _, x := range f.Fields {
			names = append(names, x.Name)
		}
		t.Fatalf("frame %q has no field %q (has %v)", f.Name, name, names)
	}
	return fld
}

// num reads a numeric cell as *float64 (nil for null).
func num(t testing.TB, f *data.Field, i int) *float64 {
	t.Helper()
	var v float64
	switch x := f.At(i).(type) {
	case float64:
		v = x
	case *float64:
		if x == nil {
			return nil
		}
		v = *x
	case int64:
		v = float64(x)
	case *int64:
		if x == nil {
			return nil
		}
		v = float64(*x)
	case int32:
		v = float64(x)
	default:
		t.Fatalf("field %s: %T is not a number", f.Name, x)
	}
	return &v
}

// eqPtr compares nullable numbers exactly (null only equals null).
func eqPtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b || (math.IsNaN(*a) && math.IsNaN(*b))
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func i2f(p *int) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

func i64f(p *int64) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

func timeAt(t testing.TB, f *data.Field, i int) time.Time {
	t.Helper()
	switch x := f.At(i).(type) {
	case time.Time:
		return x
	case *time.Time:
		if x == nil {
			t.Fatalf("field %s row %d: null time", f.Name, i)
		}
		return *x
	}
	t.Fatalf("field %s: %T is not a time", f.Name, f.At(i))
	return time.Time{}
}

// storeRun lays a scenario's Locust files out as one run of a results store
// in the orchestrator's layout; it returns the store root and the run's
// directory.
func storeRun(t testing.TB, r *promtest.Run) (root, dir string) {
	t.Helper()
	tr := r.Truth
	root = t.TempDir()
	dir = filepath.Join(root, "runs", tr.TestName, "run_date="+time.Unix(tr.Start, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(tr.Start, 10), "run_tag="+tr.Tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyLocustFiles(t, r.Dir, dir)
	return root, dir
}

// copyLocustFiles copies a simulated run's Locust files into dir, and its
// logs.txt when it has one (a ladder run).
func copyLocustFiles(t testing.TB, from, dir string) {
	t.Helper()
	for _, f := range []string{simrun.HistoryFile, simrun.StatsFile, simrun.LogsFile} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if f == simrun.LogsFile && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
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

func directQuery(t *testing.T, d *Datasource, qs ...backend.DataQuery) backend.Responses {
	t.Helper()
	resp, err := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: qs})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Responses
}
