package plugin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/internal/thanostest"
)

// TestVictoriaMetricsDatasource points the datasource at VictoriaMetrics
// (loaded with the same samples as Prometheus, through its /prometheus
// path): the health check accepts it, and the panels whose numbers the
// engines compute alike (gauges on a regular scrape, counter growth and
// window quantiles; docs/backends.md) are identical to Prometheus's.
func TestVictoriaMetricsDatasource(t *testing.T) {
	_, vm := promCache.VictoriaMetrics(t, "steady")
	p, v := twinEnvs(t, "steady", vm.URL+"/prometheus", "VictoriaMetrics")
	for _, m := range []map[string]any{
		{"queryType": "packing", "run": p.runID},
		{"queryType": "activeActors", "run": p.runID},
		{"queryType": "workingSet", "run": p.runID, "block": "node"},
		{"queryType": "workingSet", "run": p.runID, "block": "per_actor"},
		{"queryType": "snapshots", "run": p.runID},
		{"queryType": "oomEvents", "run": p.runID},
	} {
		want := answerOf(t, p, m, "prometheus")
		got := answerOf(t, v, m, "victoria-metrics")
		if got != want {
			t.Errorf("%v differs between VictoriaMetrics and Prometheus:\n vm   %.800s\n prom %.800s", m, got, want)
		}
	}
}

// TestThanosDatasource points the datasource at Thanos Query over two
// replicas of the same run (internal/thanostest), deduplicated by the
// replica label, for each scenario: every panel is identical to a single
// Prometheus's but the PSI rates, which Thanos's Prometheus 3 engine
// computes over left-open ranges (docs/backends.md); for the steady run
// again with one sidecar stopped.
func TestThanosDatasource(t *testing.T) {
	for _, sc := range []string{"steady", "redeploy", "ladder-steps"} {
		t.Run(sc, func(t *testing.T) { thanosDatasource(t, sc) })
	}
}

func thanosDatasource(t *testing.T, scenario string) {
	stack := thanostest.Start(t, promCache.Generated(t, scenario).OM)
	p, th := twinEnvs(t, scenario, stack.URL, "Thanos Query")
	models := []map[string]any{
		{"queryType": "packing", "run": p.runID},
		{"queryType": "psi", "run": p.runID, "scope": "node", "resource": "cpu"},
		{"queryType": "psi", "run": p.runID, "scope": "pod", "resource": "memory"},
		{"queryType": "activeActors", "run": p.runID},
		{"queryType": "workingSet", "run": p.runID, "block": "node"},
		{"queryType": "workingSet", "run": p.runID, "block": "per_actor"},
		{"queryType": "snapshots", "run": p.runID},
		{"queryType": "oomEvents", "run": p.runID},
		{"queryType": "summary", "run": p.runID},
	}
	// PSI rates and the summary built on them differ from Prometheus's in
	// a few values (docs/backends.md): compared within 1 %, with at most
	// this share of a panel's values beyond it.
	approx := map[string]float64{"psi": 0.05, "summary": 0}
	compare := func(label string) {
		for _, m := range models {
			want := answerOf(t, p, m, "prometheus")
			got := answerOf(t, th, m, "thanos "+label)
			if got == want {
				continue
			}
			allowed, ok := approx[m["queryType"].(string)]
			if !ok {
				t.Errorf("%s: %v differs between Thanos and Prometheus:\n thanos %.800s\n prom   %.800s", label, m, got, want)
				continue
			}
			far, numbers := 0, 0
			wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
			if len(wl) != len(gl) {
				t.Errorf("%s: %v: %d frames from Thanos, %d from Prometheus", label, m, len(gl), len(wl))
				continue
			}
			for i := range wl {
				var a, b any
				if err := json.Unmarshal([]byte(wl[i]), &a); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(gl[i]), &b); err != nil {
					t.Fatal(err)
				}
				f, n := thanostest.FarValues(a, b, 0.01)
				far, numbers = far+f, numbers+n
			}
			t.Logf("%s: %v: %d of %d values differ from Prometheus by more than 1 %%", label, m, far, numbers)
			if float64(far) > allowed*float64(numbers) {
				t.Errorf("%s: %v: %d of %d values differ from Prometheus by more than 1 %%", label, m, far, numbers)
			}
		}
	}
	compare("both replicas")
	if scenario != "steady" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stack.StopSidecar(ctx, 0); err != nil {
		t.Fatal(err)
	}
	th.uid += "-one-replica" // a new instance: nothing cached
	compare("one replica")
}

// twinEnvs are two datasource instances over the same stored scenario (run
// discovery off): one on the real Prometheus and one on the backend at url,
// which must pass the health check.
func twinEnvs(t *testing.T, scenario, url, backendName string) (prom, other *env) {
	t.Helper()
	prom, other = newEnv(t, scenario), newEnv(t, scenario)
	other.promURL = url
	for _, e := range []*env{prom, other} {
		e.jsonData["discoverRuns"] = false
	}
	h, err := other.client(t).CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: other.pluginContext()})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != backend.HealthStatusOk {
		t.Fatalf("health against %s: %s", backendName, h.Message)
	}
	t.Logf("health:\n%s", h.Message)
	return prom, other
}
