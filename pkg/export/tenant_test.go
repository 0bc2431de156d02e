package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/cli"
)

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
			p := promfake.NewGateway(t, prom.URL)
			dir := copyRun(t, run)
			e := newEnv(nil, tc.env)
			args := append([]string{"--run-dir", dir, "--prometheus-url", p.URL + "/prometheus", "--no-cluster-facts", "--no-wait",
				"--atelet-lag-s", itoa(run.Truth.LagS), "--header", "X-Scope-OrgID: tenant-a"}, tc.args...)
			if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			seen := p.Requests()
			if len(seen) < 20 {
				t.Fatalf("only %d requests reached the backend", len(seen))
			}
			for _, r := range seen {
				if r.Tenant != "tenant-a" || r.Auth != tc.wantToken {
					t.Errorf("%s: X-Scope-OrgID %q, Authorization %q; want tenant-a and %q", r.Path, r.Tenant, r.Auth, tc.wantToken)
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
