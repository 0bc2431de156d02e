package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/internal/promfake"
)

// TestTenantAndTokenReachEveryRequest: the datasource's custom header
// (httpHeaderName1/httpHeaderValue1, the tenant) and bearerToken secret are
// on every request to the backend — a dashboard load, run discovery and
// the health check's probes — through a /prometheus path prefix.
func TestTenantAndTokenReachEveryRequest(t *testing.T) {
	e := newEnv(t, "steady")
	g := promfake.NewGateway(t, e.prom.URL)
	e.promURL = g.URL + "/prometheus"
	e.jsonData["discoverRuns"] = true
	e.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	e.secure = map[string]string{"httpHeaderValue1": "tenant-b", "bearerToken": "ds-t0ken"}
	c := e.client(t)
	for ref, r := range e.query(t, c, dashboard(e)...) {
		if r.Error != nil {
			t.Fatalf("query %s through the gateway: %v", ref, r.Error)
		}
	}
	h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != backend.HealthStatusOk || strings.Contains(h.Message, "ds-t0ken") || strings.Contains(h.Message, "tenant-b") {
		t.Fatalf("health through the gateway: %v %s", h.Status, h.Message)
	}
	seen := g.Requests()
	paths := map[string]int{}
	for _, r := range seen {
		paths[r.Path]++
		if r.Tenant != "tenant-b" || r.Auth != "Bearer ds-t0ken" {
			t.Errorf("%s: X-Scope-OrgID %q, Authorization %q; want tenant-b and the bearer token", r.Path, r.Tenant, r.Auth)
		}
	}
	for _, p := range []string{"/prometheus/api/v1/query", "/prometheus/api/v1/query_range", "/prometheus/api/v1/label/__name__/values"} {
		if paths[p] == 0 {
			t.Errorf("no request to %s (queries, discovery and health should all go through): %v", p, paths)
		}
	}
	t.Logf("%d requests (%v), every one with the tenant and the token", len(seen), paths)
}
