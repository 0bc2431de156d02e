package plugin

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/internal/kubefake"
)

// Secrets used by the health and auth tests; none may ever show in a
// message.
const (
	secretPassword = "hunter2-pw"
	secretToken    = "s3cr3t-bearer"
	secretTenant   = "tenant-secret-a"
)

// authProxy is a reverse proxy in front of Prometheus that answers 401
// unless the request carries the basic auth, the bearer token is absent
// (basic auth wins) and the tenant header is set, as a Mimir gateway would.
type authProxy struct {
	*httptest.Server
	requests atomic.Int64
	rejected atomic.Int64
}

func newAuthProxy(t testing.TB, target string) *authProxy {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &authProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		user, pass, ok := r.BasicAuth()
		if !ok || user != "grafana" || pass != secretPassword || r.Header.Get("X-Scope-OrgID") != secretTenant {
			p.rejected.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func health(t *testing.T, e *env) *backend.CheckHealthResult {
	t.Helper()
	h, err := e.client(t).CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: e.pluginContext()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secretPassword, secretToken, secretTenant} {
		if strings.Contains(h.Message, s) || strings.Contains(string(h.JSONDetails), s) {
			t.Fatalf("health leaks a secret: %q %s", h.Message, h.JSONDetails)
		}
	}
	return h
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestHealth(t *testing.T) {
	down := closedPort(t)
	forbidden := kubefake.New(kubefake.Config{Token: "t0ken", TLS: true, Faults: map[string]kubefake.Fault{
		kubefake.Nodes: {Status: http.StatusForbidden}, kubefake.Pods: {Status: http.StatusForbidden}, kubefake.Events: {Status: http.StatusForbidden}}})
	defer forbidden.Close()
	syn := kubefake.Synthetic{Nodes: 2, WorkerNodes: 1, Pods: 4, Workers: 2, Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
	allowed := kubefake.New(kubefake.Config{Token: "t0ken", TLS: true, Pods: syn.PodSource(), Nodes: syn.NodeSource(),
		PodLogNamespaces: []string{"ate-system", "benchmark-workloads"}})
	defer allowed.Close()
	noLogs := kubefake.New(kubefake.Config{Token: "t0ken", TLS: true, Pods: syn.PodSource(), Nodes: syn.NodeSource(),
		PodLogNamespaces: []string{"benchmark-workloads"}})
	defer noLogs.Close()

	tests := []struct {
		name     string
		scenario string
		setup    func(t *testing.T, e *env)
		status   backend.HealthStatus
		says     []string
	}{
		{"all parts ok", "steady", nil, backend.HealthStatusOk, []string{
			": OK — PromQL answers; every Substrate metric family has data in the last day", "Run discovery: OK",
			"Results store (file://", "listable; 1 test name(s)", "Kubernetes: off"}},
		{"off parts", "steady", func(t *testing.T, e *env) {
			delete(e.jsonData, "resultsStore")
			e.jsonData["discoverRuns"] = false
		}, backend.HealthStatusOk, []string{"Results store: off", "Run discovery: off", "Kubernetes: off"}},
		{"prometheus down", "steady", func(t *testing.T, e *env) { e.promURL = "http://" + down },
			backend.HealthStatusError, []string{"Prometheus (" + down + "): FAILED — not reachable: connection refused", "Results store (file://"}},
		{"wrong url path", "steady", func(t *testing.T, e *env) { e.promURL += "/graph" },
			backend.HealthStatusError, []string{"FAILED — HTTP 404 Not Found for /api/v1/query: the URL path is probably wrong"}},
		{"401 from a proxy", "steady", func(t *testing.T, e *env) {
			p := newAuthProxy(t, e.prom.URL)
			e.promURL = p.URL
			e.secure = map[string]string{"bearerToken": secretToken}
		}, backend.HealthStatusError, []string{"FAILED — the credentials were rejected (HTTP 401 Unauthorized)"}},
		{"proxy with basic auth and tenant header", "steady", func(t *testing.T, e *env) {
			p := newAuthProxy(t, e.prom.URL)
			e.promURL = p.URL
			e.jsonData["basicAuth"] = true
			e.jsonData["basicAuthUser"] = "grafana"
			e.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
			e.secure = map[string]string{"basicAuthPassword": secretPassword, "httpHeaderValue1": secretTenant}
			t.Cleanup(func() {
				if p.requests.Load() == 0 || p.rejected.Load() != 0 {
					t.Errorf("proxy saw %d requests, rejected %d", p.requests.Load(), p.rejected.Load())
				}
			})
		}, backend.HealthStatusOk, []string{"every Substrate metric family has data"}},
		{"store missing", "steady", func(t *testing.T, e *env) { e.jsonData["resultsStore"] = "file:///nonexistent/results" },
			backend.HealthStatusError, []string{"Results store (file:///nonexistent/results): FAILED — could not be opened", "Run discovery: OK"}},
		{"kubernetes forbidden", "steady", func(t *testing.T, e *env) {
			e.kubeToken(forbidden.URL, forbidden.CACertPEM(), "t0ken")
		}, backend.HealthStatusError, []string{"Kubernetes (" + strings.TrimPrefix(forbidden.URL, "https://") + "): FAILED", "list nodes", "forbidden"}},
		{"kubernetes allowed", "steady", func(t *testing.T, e *env) {
			e.kubeToken(allowed.URL, allowed.CACertPEM(), "t0ken")
		}, backend.HealthStatusOk, []string{"Kubernetes (" + strings.TrimPrefix(allowed.URL, "https://") + "): OK — can list nodes",
			"can read pods/log in ate-system and benchmark-workloads"}},
		{"kubernetes without pods/log", "steady", func(t *testing.T, e *env) {
			e.kubeToken(noLogs.URL, noLogs.CACertPEM(), "t0ken")
		}, backend.HealthStatusOk, []string{"Kubernetes (" + strings.TrimPrefix(noLogs.URL, "https://") + "): OK — can list nodes",
			"pods/log is not readable in ate-system: the phase breakdown"}},
		{"substrate metrics absent", "no-atelet", nil, backend.HealthStatusOk, []string{
			"PromQL answers, but these Substrate metric families have no data in the last day: packing (ate_workerpool_workers); snapshot histograms"}},
		{"bad user-count query", "steady", func(t *testing.T, e *env) { e.jsonData["userCountQuery"] = "sum(locust_users" },
			backend.HealthStatusError, []string{"Run discovery: FAILED — user-count query"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.scenario)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			h := health(t, e)
			t.Logf("%s", h.Message)
			if h.Status != tc.status {
				t.Errorf("status %v, want %v: %s", h.Status, tc.status, h.Message)
			}
			for _, s := range tc.says {
				if !strings.Contains(h.Message, s) {
					t.Errorf("message does not say %q:\n%s", s, h.Message)
				}
			}
		})
	}
}

// A kubeconfig whose user runs an exec credential plugin is refused by the
// datasource whether it is pasted or named by kubeconfigPath: the plugin
// never runs (no file appears) and the API server is never called.
func TestHealthKubeconfigRunsNoProgram(t *testing.T) {
	kube := kubefake.New(kubefake.Config{Token: "t0ken", TLS: true})
	defer kube.Close()
	for _, how := range []string{"by path", "pasted"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			pwned := filepath.Join(dir, "PWNED")
			kc := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "` + kube.URL + `", insecure-skip-tls-verify: true}
users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: /bin/sh, args: ["-c", "touch ` + pwned + `"]}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
			e := newEnv(t, "steady")
			e.jsonData["kubernetesAccess"] = "kubeconfig"
			if how == "by path" {
				path := filepath.Join(dir, "kc.yaml")
				if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
					t.Fatal(err)
				}
				e.jsonData["kubeconfigPath"] = path
			} else {
				e.secure = map[string]string{"kubeconfig": kc}
			}
			h := health(t, e)
			if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "Kubernetes (kubeconfig): FAILED") ||
				!strings.Contains(h.Message, "exec credential plugin, which is not allowed here") {
				t.Errorf("health %v, want the exec plugin refused:\n%s", h.Status, h.Message)
			}
			if _, err := os.Stat(pwned); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the exec plugin ran on the Grafana host: stat %s: %v", pwned, err)
			}
		})
	}
	if n := kube.Requests(""); n != 0 {
		t.Errorf("the API server got %d requests, want 0", n)
	}
}

// Token mode over plain http:// is refused when the settings load: the
// health check and a query name the setting, and the token is never sent
// (the capture server counts no request).
func TestTokenModeRequiresHTTPS(t *testing.T) {
	syn := kubefake.Synthetic{Nodes: 2, WorkerNodes: 1, Pods: 4, Workers: 2, Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
	kube := kubefake.New(kubefake.Config{Token: "t0ken", Pods: syn.PodSource(), Nodes: syn.NodeSource()})
	defer kube.Close()
	e := newEnv(t, "steady")
	delete(e.jsonData, "resultsStore")
	e.kubeToken(kube.URL, nil, "t0ken")   // a plain http:// server
	e.now = time.Unix(e.truth.End+600, 0) // recent: facts would come from the live cluster
	const says = "kubernetesURL must be an https:// URL"
	h := health(t, e)
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "Settings: FAILED") || !strings.Contains(h.Message, says) {
		t.Errorf("health %v, want the settings refused saying %q:\n%s", h.Status, says, h.Message)
	}
	r := e.query(t, e.client(t), q("A", e.truth.Start-600, e.truth.End+600, map[string]any{"queryType": "clusterFacts", "run": "latest"}))["A"]
	if r.Status != backend.StatusBadRequest || r.Error == nil || !strings.Contains(r.Error.Error(), says) {
		t.Errorf("query: status %d, error %v; want 400 saying %q", r.Status, r.Error, says)
	}
	if n := kube.Requests(""); n != 0 {
		t.Errorf("the token went to http:// in %d requests, want 0", n)
	}
}

// Basic auth, the tenant header and the bearer token reach Prometheus on
// queries too (the SDK client is handed to the promql layer).
func TestQueriesCarryAuthAndHeaders(t *testing.T) {
	e := newEnv(t, "steady")
	p := newAuthProxy(t, e.prom.URL)
	e.promURL = p.URL
	e.jsonData["basicAuth"] = true
	e.jsonData["basicAuthUser"] = "grafana"
	e.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	e.secure = map[string]string{"basicAuthPassword": secretPassword, "httpHeaderValue1": secretTenant}
	r := e.one(t, e.client(t), map[string]any{"queryType": "packing", "run": e.runID})
	if r.Frames[0].Rows() == 0 || p.requests.Load() == 0 || p.rejected.Load() != 0 {
		t.Fatalf("rows %d, proxy requests %d rejected %d", r.Frames[0].Rows(), p.requests.Load(), p.rejected.Load())
	}
	// Without the password: a downstream error naming Prometheus, no secret.
	e2 := newEnv(t, "steady")
	e2.promURL = p.URL
	e2.jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	e2.secure = map[string]string{"httpHeaderValue1": secretTenant, "bearerToken": secretToken}
	bad := e2.query(t, e2.client(t), q("A", e.truth.Start, e.truth.End, map[string]any{"queryType": "packing", "run": e2.runID}))["A"]
	if bad.Error == nil || bad.ErrorSource != backend.ErrorSourceDownstream || !strings.Contains(bad.Error.Error(), "Prometheus at ") {
		t.Fatalf("rejected query: %v", bad.Error)
	}
	for _, s := range []string{secretPassword, secretToken, secretTenant} {
		if strings.Contains(bad.Error.Error(), s) {
			t.Fatalf("error leaks a secret: %v", bad.Error)
		}
	}
}
