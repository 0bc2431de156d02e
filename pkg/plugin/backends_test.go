package plugin

import (
	"context"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// TestVictoriaMetricsDatasource points the datasource at VictoriaMetrics
// (loaded with the same samples as Prometheus, through its /prometheus
// path): the health check accepts it, and the panels whose numbers the
// engines compute alike (gauges on a regular scrape, counter growth and
// window quantiles; docs/backends.md) are identical to Prometheus's.
func TestVictoriaMetricsDatasource(t *testing.T) {
	p := newEnv(t, "steady")
	v := newEnv(t, "steady")
	_, vm := promCache.VictoriaMetrics(t, "steady")
	v.promURL = vm.URL + "/prometheus"
	for _, e := range []*env{p, v} {
		e.jsonData["discoverRuns"] = false
	}
	h, err := v.client(t).CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: v.pluginContext()})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != backend.HealthStatusOk {
		t.Fatalf("health against VictoriaMetrics: %s", h.Message)
	}
	t.Logf("health:\n%s", h.Message)
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
