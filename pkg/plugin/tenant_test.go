package plugin

import (
	"context"
	"fmt"
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

// The datasource's basic auth, bearer token and tenant header go only to
// the origin of its URL: a 307 to another port is not followed by a query
// or the health check (each fails naming both origins; the other server
// gets no request), while a redirect within the origin is followed.
func TestRedirectsStayOnTheOrigin(t *testing.T) {
	e := newEnv(t, "steady")
	e.jsonData["basicAuth"] = true
	e.jsonData["basicAuthUser"] = "grafana"
	e.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	e.secure = map[string]string{"basicAuthPassword": secretPassword, "bearerToken": secretToken, "httpHeaderValue1": secretTenant}
	from, to := e.truth.Start-600, e.truth.End+600
	packing := q("packing", from, to, map[string]any{"queryType": "packing", "run": "range"})

	t.Run("another origin", func(t *testing.T) {
		other := promfake.New(t, promfake.Empty(0))
		r := promfake.NewRedirector(t, other.URL, other.URL)
		e := *e
		e.uid += "-cross"
		e.promURL = r.URL + promfake.MovedPrefix
		c := e.client(t)
		p := e.query(t, c, packing)["packing"]
		h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
		if err != nil {
			t.Fatal(err)
		}
		if n := other.Count(); n != 0 {
			t.Fatalf("the other origin got %d requests (headers of the first: %v)", n, other.Requests()[0].Header)
		}
		host := strings.TrimPrefix(r.URL, "http://")
		for what, msg := range map[string]string{"packing": fmt.Sprint(p.Error), "health": h.Message} {
			if !strings.Contains(msg, "Prometheus at "+host+" redirected to "+other.URL+": not followed") {
				t.Errorf("%s: %q does not name both origins", what, msg)
			}
			for _, s := range []string{secretPassword, secretToken, secretTenant} {
				if strings.Contains(msg, s) {
					t.Errorf("%s: %q shows a secret", what, msg)
				}
			}
		}
		if p.Status != backend.StatusBadGateway || p.ErrorSource != backend.ErrorSourceDownstream {
			t.Errorf("packing: status %d, source %s; want a downstream 502", p.Status, p.ErrorSource)
		}
	})

	t.Run("same origin", func(t *testing.T) {
		g := promfake.NewGateway(t, e.prom.URL)
		r := promfake.NewRedirector(t, g.URL+"/prometheus", "")
		e := *e
		e.uid += "-same"
		e.promURL = r.URL + promfake.MovedPrefix
		c := e.client(t)
		if p := e.query(t, c, packing)["packing"]; p.Error != nil {
			t.Fatalf("packing through a same-origin redirect: %v", p.Error)
		}
		h, err := c.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != backend.HealthStatusOk {
			t.Errorf("health through a same-origin redirect: %v %s", h.Status, h.Message)
		}
		seen := g.Requests()
		if len(seen) == 0 {
			t.Fatal("no request behind the redirect")
		}
		for _, r := range seen {
			if r.Tenant != secretTenant || r.Auth != "Bearer "+secretToken {
				t.Errorf("%s: X-Scope-OrgID %q, Authorization %q", r.Path, r.Tenant, r.Auth)
			}
		}
	})
}
