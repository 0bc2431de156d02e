package promfake

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Gateway is a Mimir/Cortex-style gateway in front of a real Prometheus: it
// serves the API under /prometheus and records the tenant and Authorization
// headers of every request, so tests can check they reach every read.
type Gateway struct {
	*httptest.Server
	mu   sync.Mutex
	seen []GatewayRequest
}

// GatewayRequest is what the gateway saw of one request.
type GatewayRequest struct{ Path, Tenant, Auth string }

// NewGateway starts a gateway to target; it is closed by t.Cleanup. Its API
// base URL is URL + "/prometheus".
func NewGateway(t testing.TB, target string) *Gateway {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	g := &Gateway{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.seen = append(g.seen, GatewayRequest{r.URL.Path, r.Header.Get("X-Scope-OrgID"), r.Header.Get("Authorization")})
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

// Requests returns a copy of what the gateway saw, in arrival order.
func (g *Gateway) Requests() []GatewayRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.seen)
}
