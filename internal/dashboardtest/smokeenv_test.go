package dashboardtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/datasourcetest"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/plugin"
	"github.com/substrate/density/pkg/runs"
)

// smokeEnv is the demo run behind a plugin served over gRPC.
type smokeEnv struct {
	truth  *simrun.Truth
	now    time.Time
	runID  string
	client *datasourcetest.TestPluginClient
	pc     backend.PluginContext
	// serverKeys are the demo run's stats.jsonl server_summary measurements
	// as the export wrote them (the oracle of the all-keys table).
	serverKeys map[string]*string
	trialKeys  map[string]*string
}

// newSmokeEnv loads a simulated run (the demo run; the ladder scenario for
// the Ladder dashboard) into Prometheus, runs the export on it (`mage
// demo`) and lays the result out as a results-store run, as
// docker-compose's demo-init does; then starts the plugin with the
// provisioned settings pointed at them.
func newSmokeEnv(t *testing.T, prov map[string]provDatasource, scenario string) *smokeEnv {
	t.Helper()
	r, srv := promCache.Prometheus(t, scenario)
	tr := r.Truth
	root, dir := storeRun(t, r)
	// The export's artifacts (server_summary.json, stats.jsonl), written
	// into the store run the way `mage demo` writes them into ./demo-run.
	var stdout, stderr bytes.Buffer
	args := []string{
		"--run-dir", dir, "--prometheus-url", srv.URL, "--test-name", tr.TestName, "--tag", tr.Tag,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10),
		"--atelet-lag-s", strconv.FormatInt(tr.LagS, 10), "--no-cluster-facts", "--timeout", "30s",
	}
	if tr.Phases != nil {
		args = append(args, "--phase-logs", filepath.Join(r.Dir, simrun.PhaseLogDir))
	}
	o, err := export.ParseFlags(args, &stderr)
	if err != nil {
		t.Fatalf("export flags: %v", err)
	}
	now := time.Unix(tr.End+3600, 0)
	env := export.DefaultEnv(&stdout, &stderr)
	env.Getenv = func(string) string { return "" }
	env.Now = func() time.Time { return now }
	if _, code := export.Execute(context.Background(), o, env); code != cli.ExitOK {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}

	e := &smokeEnv{truth: tr, now: now, runID: runs.StoreRunID(tr.TestName, tr.Start, tr.Tag)}
	e.serverKeys, e.trialKeys = readStatsJSONL(t, filepath.Join(dir, runs.FileStatsJSONL))

	s := provisionedSettings(t, prov, 1, srv.URL, root)
	e.pc = backend.PluginContext{OrgID: 1, PluginID: dashPluginID, DataSourceInstanceSettings: s}

	// The SDK registers its gRPC metrics globally, so the test binary has
	// one plugin server (main_test.go).
	e.client = pluginClient
	return e
}

// provisionedSettings is the provisioned datasource pointed at the
// Prometheus at promURL and the file:// store at storeDir, with a longer
// timeout than the default (the race detector on two shared cores slows
// the harvest, not Prometheus). A fresh Updated time makes the SDK build a
// new instance: it reuses a cached one while Updated is unchanged, and a
// repeated run (-count=N) has a new store directory.
func provisionedSettings(t *testing.T, prov map[string]provDatasource, id int64, promURL, storeDir string) *backend.DataSourceInstanceSettings {
	t.Helper()
	p := prov["substrate-density"]
	jd := map[string]any{}
	for k, v := range p.JSONData {
		jd[k] = v
	}
	jd["resultsStore"] = "file://" + storeDir
	jd["timeoutSeconds"] = 30
	jb, err := json.Marshal(jd)
	if err != nil {
		t.Fatal(err)
	}
	s := backend.DataSourceInstanceSettings{ID: id, UID: p.UID, Name: p.Name, Type: p.Type, URL: promURL, JSONData: jb, Updated: time.Now()}
	if _, err := plugin.LoadSettings(s); err != nil {
		t.Fatalf("the provisioned jsonData is not valid settings: %v", err)
	}
	return &s
}

func readStatsJSONL(t *testing.T, path string) (server, trial map[string]*string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var row struct {
			Metric       string             `json:"metric"`
			Measurements map[string]*string `json:"measurements"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		switch row.Metric {
		case "server_summary":
			server = row.Measurements
		case "trial_summary":
			trial = row.Measurements
		}
	}
	if len(server) != 80 {
		t.Fatalf("stats.jsonl server_summary has %d keys, want 80", len(server))
	}
	return server, trial
}

// query sends one panel's queries in one request, as Grafana does, and
// returns the frames with their refIds (Grafana sets them from the
// response keys) and the notices.
func (e *smokeEnv) query(t *testing.T, targets []densityQuery, vars dashVars, from, to int64) ([]*data.Frame, []string, error) {
	t.Helper()
	req := &backend.QueryDataRequest{PluginContext: e.pc}
	for _, q := range targets {
		if q.Hide {
			continue
		}
		m := applyTemplateVariables(q, vars)
		m["intervalMs"] = 10000
		m["maxDataPoints"] = 1000
		b, _ := json.Marshal(m)
		req.Queries = append(req.Queries, backend.DataQuery{RefID: q.RefID, QueryType: q.QueryType, JSON: b,
			TimeRange: backend.TimeRange{From: time.Unix(from, 0), To: time.Unix(to, 0)}, Interval: 10 * time.Second, MaxDataPoints: 1000})
	}
	resp, err := e.client.QueryData(context.Background(), req)
	if err != nil {
		t.Fatalf("QueryData over gRPC: %v", err)
	}
	var (
		frames  []*data.Frame
		notices []string
	)
	for _, q := range req.Queries {
		r, ok := resp.Responses[q.RefID]
		if !ok {
			return nil, nil, fmt.Errorf("no response for refId %s", q.RefID)
		}
		if r.Error != nil {
			return nil, nil, fmt.Errorf("refId %s (%s): %v (status %d, source %s)", q.RefID, q.QueryType, r.Error, r.Status, r.ErrorSource)
		}
		for _, f := range r.Frames {
			f.RefID = q.RefID
			if f.Meta != nil {
				for _, n := range f.Meta.Notices {
					notices = append(notices, n.Text)
				}
			}
			frames = append(frames, f)
		}
	}
	return frames, notices, nil
}

// applyTemplateVariables is the frontend's (src/datasource.ts): run is
// interpolated, a multi-value becoming a list of ids; testName and tag in
// csv format; the datasource reference resolved.
func applyTemplateVariables(q densityQuery, vars dashVars) map[string]any {
	m := map[string]any{"refId": q.RefID, "queryType": q.QueryType}
	if q.Datasource != nil {
		m["datasource"] = map[string]string{"type": q.Datasource.Type, "uid": vars.interpolate(q.Datasource.UID, ",")}
	}
	refs, _ := q.runs()
	var ids []string
	for _, r := range refs {
		for _, id := range strings.Split(vars.interpolate(r, "\x00"), "\x00") {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	switch {
	case len(ids) == 1 && len(q.Run) > 0 && q.Run[0] == '"':
		m["run"] = ids[0]
	case len(ids) > 0:
		m["run"] = ids
	}
	for k, v := range map[string]string{"scope": q.Scope, "resource": q.Resource, "block": q.Block, "op": q.Op, "layer": q.Layer} {
		if v != "" {
			m[k] = v
		}
	}
	if q.TestName != "" {
		m["testName"] = vars.interpolate(q.TestName, ",")
	}
	if q.Tag != "" {
		m["tag"] = vars.interpolate(q.Tag, ",")
	}
	if q.LadderSteps {
		m["ladderSteps"] = true
	}
	if q.ChangePoints {
		m["changePoints"] = true
	}
	if q.Align != "" {
		m["align"] = q.Align
	}
	// baseline and candidate take one run each (a multi-value variable
	// gives its first value).
	for k, v := range map[string]string{"baseline": q.Baseline, "candidate": q.Candidate} {
		if v != "" {
			m[k] = strings.Split(vars.interpolate(v, "\x00"), "\x00")[0]
		}
	}
	if len(q.Keys) > 0 {
		var keys any
		_ = json.Unmarshal(q.Keys, &keys)
		m["keys"] = keys
	}
	return m
}

// resolveVariables does what Grafana does on dashboard load: the
// datasource variable takes its saved value; each query variable runs its
// query (runs / tests through the plugin) and keeps its saved value, All,
// or the first option.
func (e *smokeEnv) resolveVariables(t *testing.T, d dashDoc, from, to int64) (dashVars, []string) {
	t.Helper()
	vars := dashVars{}
	var log []string
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			vars[v.Name] = currentValues(t, v)
		case "query":
			vq, err := decodeVariableQuery(v.Query)
			if err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			q := densityQuery{RefID: "variable", QueryType: vq.QueryType, Run: json.RawMessage(`"range"`),
				TestName: vq.TestName, Tag: vq.Tag, Datasource: v.DS}
			frames, _, err := e.query(t, []densityQuery{q}, vars, from, to)
			if err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			opts := metricFindValues(frames, vq.QueryType)
			if len(opts) == 0 {
				t.Fatalf("variable %s offers no value over the demo run's range", v.Name)
			}
			cur := currentValues(t, v)
			switch {
			case v.IncludeAll && slices.Equal(cur, []string{"$__all"}):
				vars[v.Name] = opts
			case len(cur) > 0 && !slices.ContainsFunc(cur, func(c string) bool { return !slices.Contains(opts, c) }):
				vars[v.Name] = cur
			default:
				vars[v.Name] = opts[:1]
			}
		default:
			t.Fatalf("variable %s: type %q is not resolved by the smoke test", v.Name, v.Type)
		}
		log = append(log, fmt.Sprintf("$%s = %v", v.Name, vars[v.Name]))
	}
	return vars, log
}

// metricFindValues is the frontend's framesToMetricFindValues: run ids
// from a runs table, else the first string field.
func metricFindValues(frames []*data.Frame, kind string) []string {
	var out []string
	for _, fr := range frames {
		var col *data.Field
		for _, f := range fr.Fields {
			if kind == plugin.QueryRuns && f.Name == "id" {
				col = f
				break
			}
			if col == nil && f.Type() == data.FieldTypeString {
				col = f
			}
		}
		if col == nil {
			continue
		}
		for i := 0; i < col.Len(); i++ {
			if v, ok := col.ConcreteAt(i); ok {
				if s := fmt.Sprint(v); s != "" && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
