package plugin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// tenantGateway is a Mimir-style gateway in front of the real Prometheus:
// the API under /prometheus, every request's tenant and Authorization
// headers recorded.
type tenantGateway struct {
	*httptest.Server
	mu   sync.Mutex
	seen []gatewayRequest
}

type gatewayRequest struct{ path, tenant, auth string }

func newTenantGateway(t *testing.T, target string) *tenantGateway {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	g := &tenantGateway{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.seen = append(g.seen, gatewayRequest{r.URL.Path, r.Header.Get("X-Scope-OrgID"), r.Header.Get("Authorization")})
		g.mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, "/prometheus/") {
			http.NotFound(w, r)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/prometheus")
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// TestTenantAndTokenReachEveryRequest: the datasource's custom header
// (httpHeaderName1/httpHeaderValue1, the tenant) and bearerToken secret are
// on every request to the backend — a dashboard load, run discovery and
// the health check's probes — through a /prometheus path prefix.
func TestTenantAndTokenReachEveryRequest(t *testing.T) {
	e := newEnv(t, "steady")
	g := newTenantGateway(t, e.prom.URL)
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
	g.mu.Lock()
	seen := slices.Clone(g.seen)
	g.mu.Unlock()
	paths := map[string]int{}
	for _, r := range seen {
		paths[r.path]++
		if r.tenant != "tenant-b" || r.auth != "Bearer ds-t0ken" {
			t.Errorf("%s: X-Scope-OrgID %q, Authorization %q; want tenant-b and the bearer token", r.path, r.tenant, r.auth)
		}
	}
	for _, p := range []string{"/prometheus/api/v1/query", "/prometheus/api/v1/query_range", "/prometheus/api/v1/label/__name__/values"} {
		if paths[p] == 0 {
			t.Errorf("no request to %s (queries, discovery and health should all go through): %v", p, paths)
		}
	}
	t.Logf("%d requests (%v), every one with the tenant and the token", len(seen), paths)
}
