package dashboardtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/dataplane/sdata/numeric"
	"github.com/grafana/dataplane/sdata/reader"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"sigs.k8s.io/yaml"

	"github.com/substrate/density/internal/demo"
)

// alertRuleFile is Grafana's file provisioning format for alert rules, the
// fields provisioning/alerting uses (read strictly).
type alertRuleFile struct {
	APIVersion int `json:"apiVersion"`
	Groups     []struct {
		OrgID    int         `json:"orgId"`
		Name     string      `json:"name"`
		Folder   string      `json:"folder"`
		Interval string      `json:"interval"`
		Rules    []alertRule `json:"rules"`
	} `json:"groups"`
}

type alertRule struct {
	UID          string            `json:"uid"`
	Title        string            `json:"title"`
	Condition    string            `json:"condition"`
	Data         []alertQuery      `json:"data"`
	NoDataState  string            `json:"noDataState"`
	ExecErrState string            `json:"execErrState"`
	For          string            `json:"for"`
	Annotations  map[string]string `json:"annotations"`
	Labels       map[string]string `json:"labels"`
}

type alertQuery struct {
	RefID             string `json:"refId"`
	RelativeTimeRange *struct {
		From int64 `json:"from"`
		To   int64 `json:"to"`
	} `json:"relativeTimeRange,omitempty"`
	DatasourceUID string         `json:"datasourceUid"`
	Model         map[string]any `json:"model"`
}

// exprUID is the datasource uid of Grafana's server-side expressions.
const exprUID = "__expr__"

// loadAlertRules reads provisioning/alerting/*.yml strictly and checks the
// rules' structure: unique uids, a condition naming one of the rule's
// queries, datasources that are provisioned or expressions, expressions
// reading earlier queries.
func loadAlertRules(t *testing.T, prov map[string]provDatasource) []alertRule {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dashRepo, "provisioning", "alerting", "*.y*ml"))
	if len(paths) == 0 {
		t.Fatal("no provisioning/alerting/*.yml")
	}
	var out []alertRule
	uids := map[string]bool{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f alertRuleFile
		if err := yaml.UnmarshalStrict(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.APIVersion != 1 || len(f.Groups) == 0 {
			t.Fatalf("%s: apiVersion %d, %d groups", p, f.APIVersion, len(f.Groups))
		}
		for _, g := range f.Groups {
			if g.Name == "" || g.Folder == "" || g.Interval == "" || g.OrgID != 1 {
				t.Errorf("%s: group %+v lacks name, folder, interval or orgId 1", p, g.Name)
			}
			for _, r := range g.Rules {
				if r.UID == "" || uids[r.UID] {
					t.Errorf("%s: rule %q: missing or duplicate uid", p, r.Title)
				}
				uids[r.UID] = true
				var refs []string
				for _, d := range r.Data {
					if d.Model["refId"] != d.RefID {
						t.Errorf("rule %s: query %s has model refId %v", r.UID, d.RefID, d.Model["refId"])
					}
					switch d.DatasourceUID {
					case exprUID:
						typ, _ := d.Model["type"].(string)
						expr, _ := d.Model["expression"].(string)
						if !slices.Contains([]string{"reduce", "threshold", "math"}, typ) || (typ != "math" && !slices.Contains(refs, expr)) {
							t.Errorf("rule %s: expression %s (%s) reads %q, not an earlier query", r.UID, d.RefID, typ, expr)
						}
					default:
						ds, ok := prov[d.DatasourceUID]
						if !ok || ds.Type != dashPluginID {
							t.Errorf("rule %s: query %s: datasource uid %q is not the provisioned density datasource", r.UID, d.RefID, d.DatasourceUID)
						}
						if d.RelativeTimeRange == nil {
							t.Errorf("rule %s: query %s has no relativeTimeRange", r.UID, d.RefID)
						}
					}
					refs = append(refs, d.RefID)
				}
				if !slices.Contains(refs, r.Condition) {
					t.Errorf("rule %s: condition %q is not one of its queries %v", r.UID, r.Condition, refs)
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// threshold is a rule's threshold expression: the evaluator and its bound.
func (r alertRule) threshold(t *testing.T) (string, float64) {
	t.Helper()
	for _, d := range r.Data {
		if d.Model["type"] != "threshold" {
			continue
		}
		conds, _ := d.Model["conditions"].([]any)
		if len(conds) != 1 {
			t.Fatalf("rule %s: %d threshold conditions", r.UID, len(conds))
		}
		ev, _ := conds[0].(map[string]any)["evaluator"].(map[string]any)
		params, _ := ev["params"].([]any)
		typ, _ := ev["type"].(string)
		if len(params) < 1 || (typ != "gt" && typ != "lt") {
			t.Fatalf("rule %s: evaluator %v", r.UID, ev)
		}
		return typ, params[0].(float64)
	}
	t.Fatalf("rule %s has no threshold", r.UID)
	return "", 0
}

// alertSeries is one series of a rule's query as Grafana's dataplane
// reader gives it, and whether the rule's threshold fires on it.
type alertSeries struct {
	name   string
	labels data.Labels
	value  *float64
	firing bool
}

func (s alertSeries) String() string {
	v, state := "null", "NoData"
	if s.value != nil {
		v, state = fmt.Sprint(*s.value), "Normal"
		if s.firing {
			state = "Alerting"
		}
	}
	return fmt.Sprintf("%s{%s} = %s → %s", s.name, s.labels, v, state)
}

// runAlertQuery sends a rule's density query as Grafana's alerting does (no
// frontend, the FromAlert header, the relative range resolved at now) over
// gRPC and reads the answer with Grafana's dataplane reader: the first
// frame must be a numeric kind, the collection must read without warning,
// and no two series may share name and labels (a rule would fail).
func runAlertQuery(t *testing.T, pc backend.PluginContext, r alertRule, d alertQuery, now time.Time) (data.FrameType, []alertSeries) {
	t.Helper()
	model := map[string]any{"datasource": map[string]any{"type": dashPluginID, "uid": d.DatasourceUID}, "intervalMs": 1000, "maxDataPoints": 43200}
	for k, v := range d.Model {
		model[k] = v
	}
	b, _ := json.Marshal(model)
	qt, _ := model["queryType"].(string)
	req := &backend.QueryDataRequest{PluginContext: pc, Headers: map[string]string{"FromAlert": "true", "X-Rule-Uid": r.UID},
		Queries: []backend.DataQuery{{RefID: d.RefID, QueryType: qt, JSON: b, Interval: time.Second, MaxDataPoints: 43200,
			TimeRange: backend.TimeRange{From: now.Add(-time.Duration(d.RelativeTimeRange.From) * time.Second), To: now.Add(-time.Duration(d.RelativeTimeRange.To) * time.Second)}}}}
	resp, err := pluginClient.QueryData(context.Background(), req)
	if err != nil {
		t.Fatalf("QueryData over gRPC: %v", err)
	}
	res := resp.Responses[d.RefID]
	if res.Error != nil {
		t.Fatalf("rule %s query %s: %v (status %d)", r.UID, d.RefID, res.Error, res.Status)
	}
	kind, err := reader.CanReadBasedOnMeta(res.Frames)
	if err != nil || (kind != data.FrameTypeNumericMulti && kind != data.FrameTypeNumericWide) {
		t.Fatalf("rule %s: Grafana's dataplane reader: kind %q, %v: not alertable numbers", r.UID, kind, err)
	}
	cr, err := numeric.CollectionReaderFromFrames(res.Frames)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cr.GetCollection(false)
	if err != nil || c.Warning != nil {
		t.Fatalf("rule %s: numeric collection: %v (warning %v)", r.UID, err, c.Warning)
	}
	typ, bound := r.threshold(t)
	seen := map[string]bool{}
	var out []alertSeries
	for _, ref := range c.Refs {
		v, _, err := ref.NullableFloat64Value()
		if err != nil {
			t.Fatal(err)
		}
		s := alertSeries{name: ref.GetMetricName(), labels: ref.GetLabels(), value: v}
		if v != nil {
			s.firing = typ == "gt" && *v > bound || typ == "lt" && *v < bound
		}
		id := s.name + s.labels.String()
		if seen[id] {
			t.Errorf("rule %s: series %s twice: Grafana fails a rule on duplicate labels", r.UID, id)
		}
		seen[id] = true
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].labels.String() < out[j].labels.String() })
	return kind, out
}

// alertExpect is what each provisioned rule's query must give: its one
// series name and the labels every series carries.
var alertExpect = map[string]struct {
	name   string
	labels []string
}{
	"density-gate-failed":  {"gates_failed", []string{"test_name"}},
	"density-no-nightly":   {"hours_since_last_run", []string{"test_name"}},
	"density-packing-low":  {"cluster_packing_p50", []string{"test_name", "key"}},
	"density-restore-slow": {"restore_p99_s", []string{"test_name", "key"}},
}

// TestAlertRulesOnDemo runs the density query of every provisioned alert
// rule through the plugin over gRPC, as Grafana's alerting sends it, on
// the demo run (a store holding it alone, as the compose stack's demo-init
// lays it out, evaluated an hour after it ended) and on the demo store's
// month of nightly runs (`mage demoStore`, evaluated now): each answer must
// be numbers Grafana's dataplane reader accepts, one series kind, with the
// stable labels (test name, cohort) and no run label. On the nightly
// history the planted gVisor restore regression makes the restore rule
// fire for that cohort alone; the nightlies are fresh.
func TestAlertRulesOnDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Prometheus with the demo run")
	}
	prov := loadProvisioning(t)
	rules := loadAlertRules(t, prov)
	for _, r := range rules {
		if _, ok := alertExpect[r.UID]; !ok {
			t.Errorf("rule %s has no expectation in alertExpect", r.UID)
		}
	}

	demoEnv := newSmokeEnv(t, prov, "demo")
	tmp := t.TempDir()
	var msg, errOut bytes.Buffer
	if code := demo.DemoStore(context.Background(), filepath.Join(tmp, "demo-run"), filepath.Join(tmp, "demo-store"), &msg, &errOut); code != 0 {
		t.Fatalf("DemoStore: exit %d\n%s\n%s", code, msg.String(), errOut.String())
	}
	_, srv := promCache.Prometheus(t, demo.Scenario)
	storePC := backend.PluginContext{OrgID: 1, PluginID: dashPluginID, DataSourceInstanceSettings: provisionedSettings(t, prov, 3, srv.URL, filepath.Join(tmp, "demo-store"))}

	type place struct {
		name string
		pc   backend.PluginContext
		now  time.Time
	}
	var log []string
	results := map[string]map[string][]alertSeries{}
	for _, p := range []place{{"demo run", demoEnv.pc, demoEnv.now}, {"demo store", storePC, time.Now()}} {
		results[p.name] = map[string][]alertSeries{}
		for _, r := range rules {
			want := alertExpect[r.UID]
			for _, d := range r.Data {
				if d.DatasourceUID == exprUID {
					continue
				}
				kind, ss := runAlertQuery(t, p.pc, r, d, p.now)
				results[p.name][r.UID] = ss
				if len(ss) == 0 {
					t.Errorf("%s: rule %s: no series", p.name, r.UID)
				}
				for _, s := range ss {
					if s.name != want.name {
						t.Errorf("%s: rule %s: series %s, want %s alone (one threshold, one kind)", p.name, r.UID, s.name, want.name)
					}
					for _, l := range want.labels {
						if s.labels[l] == "" {
							t.Errorf("%s: rule %s: series %s%s lacks label %s", p.name, r.UID, s.name, s.labels, l)
						}
					}
					if _, ok := s.labels["run"]; ok {
						t.Errorf("%s: rule %s: series %s carries a run label (a new alert instance each night)", p.name, r.UID, s.labels)
					}
					if s.value == nil {
						t.Errorf("%s: rule %s: series %s%s is null", p.name, r.UID, s.name, s.labels)
					}
				}
				var lines []string
				for _, s := range ss {
					lines = append(lines, "    "+s.String())
				}
				log = append(log, fmt.Sprintf("%s, rule %s (%s, %s):\n%s", p.name, r.UID, r.Title, kind, strings.Join(lines, "\n")))
			}
		}
	}
	t.Logf("alert rule queries:\n%s", strings.Join(log, "\n"))

	// The nightly history: the planted gVisor restore regression fires the
	// restore rule for the gVisor cohort of actor-density alone; each
	// cohort of each test is its own instance. The demo store's newest
	// nightlies start at 02:00–04:00 UTC of the day before it was written,
	// so their age is under two days (whether over 25 h depends on the
	// hour the test runs).
	st := results["demo store"]
	for _, s := range st["density-restore-slow"] {
		want := s.labels["test_name"] == demo.StoreTest && s.labels["sandbox_class"] == "gvisor"
		if s.firing != want {
			t.Errorf("demo store: restore rule on %s firing %v, want %v", s, s.firing, want)
		}
	}
	if n := len(st["density-restore-slow"]); n != 3 {
		t.Errorf("demo store: restore rule has %d instances, want 3 (two actor-density cohorts, one snapshot-churn)", n)
	}
	nightly := 0
	for _, s := range st["density-no-nightly"] {
		if s.labels["test_name"] != demo.StoreTest && s.labels["test_name"] != demo.StoreChurnTest {
			continue // the demo and ladder runs are old single runs
		}
		if s.labels["sandbox_class"] == "gvisor,microvm" || s.labels["sandbox_class"] == "" {
			continue // the demo run (both classes) and the ladder run (no facts)
		}
		if s.value == nil || *s.value <= 0 || *s.value > 48 {
			t.Errorf("demo store: freshness %s: a nightly cohort's newest run ended within two days", s)
		}
		nightly++
	}
	if nightly != 3 {
		t.Errorf("demo store: %d nightly cohorts in freshness, want 3", nightly)
	}
}
