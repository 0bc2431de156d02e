package export

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordingProxy is a Mimir-style gateway in front of the real Prometheus:
// it serves the API under /prometheus and records the tenant header and
// the Authorization header of every request it forwards.
type recordingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct{ path, tenant, auth string }

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &recordingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, seenRequest{r.URL.Path, r.Header.Get("X-Scope-OrgID"), r.Header.Get("Authorization")})
		p.mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, "/prometheus/") {
			http.NotFound(w, r)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/prometheus")
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *recordingProxy) requests() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.seen...)
}

// TestTenantAndTokenReachEveryRequest: the export's --header tenant id and
// bearer token (from --bearer-token-file, and from PROMETHEUS_BEARER_TOKEN)
// are on every request that reaches the backend, through a /prometheus
// path prefix as Mimir and Cortex serve the API.
func TestTenantAndTokenReachEveryRequest(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("file-t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantToken string
	}{
		{"token file", []string{"--bearer-token-file", tokenFile}, nil, "Bearer file-t0ken"},
		{"token from the environment", nil, map[string]string{"PROMETHEUS_BEARER_TOKEN": "env-t0ken"}, "Bearer env-t0ken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newRecordingProxy(t, prom.URL)
			dir := copyRun(t, run)
			e := newEnv(nil, tc.env)
			args := append([]string{"--run-dir", dir, "--prometheus-url", p.URL + "/prometheus", "--no-cluster-facts", "--no-wait",
				"--atelet-lag-s", itoa(run.Truth.LagS), "--header", "X-Scope-OrgID: tenant-a"}, tc.args...)
			if code := Main(context.Background(), args, e.Env); code != ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			seen := p.requests()
			if len(seen) < 20 {
				t.Fatalf("only %d requests reached the backend", len(seen))
			}
			for _, r := range seen {
				if r.tenant != "tenant-a" || r.auth != tc.wantToken {
					t.Errorf("%s: X-Scope-OrgID %q, Authorization %q; want tenant-a and %q", r.path, r.tenant, r.auth, tc.wantToken)
				}
			}
			m := readRows(t, filepath.Join(dir, "stats.jsonl"))[0]["measurements"].(map[string]any)
			if m["cluster_packing_p50"] == nil || m["checkpoints_in_window"] == nil {
				t.Errorf("the export through the gateway measured nothing: %v", m)
			}
			if strings.Contains(e.out.String(), "t0ken") {
				t.Errorf("the token is printed: %s", e.out.String())
			}
			t.Logf("%d requests, every one with the tenant and the token", len(seen))
		})
	}
}
