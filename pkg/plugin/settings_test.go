package plugin

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"github.com/substrate/density/pkg/promql"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/substrate/density/internal/promfake"
)

func TestLoadSettings(t *testing.T) {
	base := func(jd string, secure map[string]string) backend.DataSourceInstanceSettings {
		return backend.DataSourceInstanceSettings{URL: "http://prom:9090", JSONData: json.RawMessage(jd), DecryptedSecureJSONData: secure}
	}
	t.Run("defaults", func(t *testing.T) {
		s, err := LoadSettings(base(`{}`, nil))
		if err != nil {
			t.Fatal(err)
		}
		want := Settings{PrometheusURL: "http://prom:9090", MaxConcurrentQueries: 8, DiscoverRuns: true, UserCountQuery: "sum(locust_users)",
			RunGapSeconds: 120, AteletLagSeconds: 70, WorkerPool: "benchmark-ateom", WorkerNamespace: "benchmark-workloads",
			WorkerContainer: "ateom", WorkerPodRegex: "benchmark-ateom.*", AteletNamespace: "ate-system", AteletContainer: "atelet",
			Kube: Kube{Access: "off"}, LiveFactsMaxAgeSeconds: 3600, CacheEntries: 256, MaxResponseBytes: 64 << 20,
			MaxRangeDays: 31, MaxRunsPerQuery: 2000, StoredRunCacheMiB: 256, PreferStored: true, MaxSeries: 50, TopSeries: 10}
		if s != want {
			t.Fatalf("defaults\n got %+v\nwant %+v", s, want)
		}
	})
	t.Run("every key", func(t *testing.T) {
		s, err := LoadSettings(base(`{"resultsStore": "gs://bucket/bench", "discoverRuns": false, "userCountQuery": "sum(users)",
			"runGapSeconds": "300", "ateletLagSeconds": 90, "timeoutSeconds": 12, "maxConcurrentQueries": 3,
			"workerPool": "p", "workerNamespace": "ns", "workerContainer": "c", "workerPodRegex": "w-.*",
			"ateletNamespace": "an", "ateletContainer": "ac", "kubernetesAccess": "token", "kubernetesURL": "https://k8s:6443",
			"liveFactsMaxAgeSeconds": 60, "cacheEntries": 0, "maxResponseBytes": 1048576, "maxRangeDays": "7", "maxRunsPerQuery": 100,
			"storedRunCacheMiB": "16", "preferStored": false, "maxSeries": "20", "topSeries": 5}`,
			map[string]string{"kubernetesToken": "tok", "kubernetesCACert": "PEM"}))
		if err != nil {
			t.Fatal(err)
		}
		want := Settings{PrometheusURL: "http://prom:9090", Timeout: 12 * time.Second, MaxConcurrentQueries: 3, ResultsStore: "gs://bucket/bench",
			UserCountQuery: "sum(users)", RunGapSeconds: 300, AteletLagSeconds: 90, WorkerPool: "p", WorkerNamespace: "ns",
			WorkerContainer: "c", WorkerPodRegex: "w-.*", AteletNamespace: "an", AteletContainer: "ac",
			Kube: Kube{Access: "token", URL: "https://k8s:6443", Token: "tok", CACert: "PEM"}, LiveFactsMaxAgeSeconds: 60,
			CacheEntries: 0, MaxResponseBytes: 1 << 20, MaxRangeDays: 7, MaxRunsPerQuery: 100, StoredRunCacheMiB: 16, MaxSeries: 20, TopSeries: 5}
		if s != want {
			t.Fatalf("\n got %+v\nwant %+v", s, want)
		}
	})
	bad := []struct {
		name, url, jd string
		secure        map[string]string
		want          error
		says          string
	}{
		{"not json", "http://p", `{`, nil, ErrInvalidJSONData, ""},
		{"no url", "", `{}`, nil, ErrMissingURL, ""},
		{"ftp url", "ftp://p", `{}`, nil, ErrInvalidURL, ""},
		{"url with credentials redacted", "ftp://user:pw@p/x", `{}`, nil, ErrInvalidURL, "ftp://p/x"},
		{"store scheme", "http://p", `{"resultsStore": "http://bucket"}`, nil, ErrInvalidStoreURL, ""},
		{"relative store", "http://p", `{"resultsStore": "results"}`, nil, ErrInvalidStoreURL, ""},
		{"negative number", "http://p", `{"runGapSeconds": -1}`, nil, ErrInvalidNumber, "runGapSeconds"},
		{"fraction", "http://p", `{"ateletLagSeconds": 1.5}`, nil, ErrInvalidNumber, "ateletLagSeconds"},
		{"word", "http://p", `{"timeoutSeconds": "soon"}`, nil, ErrInvalidNumber, "timeoutSeconds"},
		{"range days", "http://p", `{"maxRangeDays": -3}`, nil, ErrInvalidNumber, "maxRangeDays"},
		{"runs per query", "http://p", `{"maxRunsPerQuery": 2.5}`, nil, ErrInvalidNumber, "maxRunsPerQuery"},
		{"stored-run cache", "http://p", `{"storedRunCacheMiB": -1}`, nil, ErrInvalidNumber, "storedRunCacheMiB"},
		{"regex", "http://p", `{"workerPodRegex": "("}`, nil, ErrInvalidPodRegex, ""},
		{"access", "http://p", `{"kubernetesAccess": "always"}`, nil, ErrInvalidKubeAccess, "always"},
		{"kubeconfig without source", "http://p", `{"kubernetesAccess": "kubeconfig"}`, nil, ErrMissingKubeconfig, ""},
		{"token without token", "http://p", `{"kubernetesAccess": "token", "kubernetesURL": "https://k"}`, nil, ErrMissingKubeToken, ""},
		{"token bad url", "http://p", `{"kubernetesAccess": "token", "kubernetesURL": "k8s"}`, map[string]string{"kubernetesToken": "x"}, ErrKubeURLNotHTTPS, ""},
		{"token over http", "http://p", `{"kubernetesAccess": "token", "kubernetesURL": "http://k8s:6443"}`, map[string]string{"kubernetesToken": "x"}, ErrKubeURLNotHTTPS, "http://k8s:6443"},
		{"token over http, user info redacted", "http://p", `{"kubernetesAccess": "token", "kubernetesURL": "http://u:pw@k8s"}`, map[string]string{"kubernetesToken": "x"}, ErrKubeURLNotHTTPS, "http://k8s"},
		{"acks syntax names the line", "http://p", `{"acks": "- key: restore_p99_s\n  run: a/1/b\n- key: [\n"}`, nil, ErrInvalidAcks, "line 3"},
		{"acks tab names the line", "http://p", `{"acks": "- key: restore_p99_s\n\trun: a/1/b\n"}`, nil, ErrInvalidAcks, "line 2"},
		{"acks unknown field", "http://p", `{"acks": "- key: k\n  run: a/1/b\n  why: x\n"}`, nil, ErrInvalidAcks, `"why"`},
		{"acks entry without run", "http://p", `{"acks": "- key: k\n- key: j\n  run: a/1/b\n"}`, nil, ErrInvalidAcks, "entry 1"},
		{"acks not a list", "http://p", `{"acks": "key: k\nrun: a/1/b\n"}`, nil, ErrInvalidAcks, ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			s := base(tc.jd, tc.secure)
			s.URL = tc.url
			_, err := LoadSettings(s)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if tc.says != "" && !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %q does not say %q", err, tc.says)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
	// An acks list is kept as text; blank text is no acks.
	for _, acks := range []string{"- key: restore_p99_s\n  run: nightly/1710237601/c12\n  reason: known\n", "  \n"} {
		jd, _ := json.Marshal(map[string]string{"acks": acks})
		if s, err := LoadSettings(base(string(jd), nil)); err != nil || s.Acks != acks {
			t.Fatalf("acks %q: %v %q", acks, err, s.Acks)
		}
	}
	// A pasted kubeconfig is enough for kubeconfig mode.
	if _, err := LoadSettings(base(`{"kubernetesAccess": "kubeconfig"}`, map[string]string{"kubeconfig": "apiVersion: v1"})); err != nil {
		t.Fatalf("pasted kubeconfig: %v", err)
	}
}

// The SDK client applies basic auth, the bearer token and custom headers,
// and maxResponseBytes bounds what one answer can make us read.
func TestHTTPClient(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = w.Write([]byte(strings.Repeat("x", 4096)))
	}))
	defer srv.Close()
	s := backend.DataSourceInstanceSettings{URL: srv.URL, JSONData: json.RawMessage(`{"httpHeaderName1": "X-Scope-OrgID", "maxResponseBytes": 1024}`),
		DecryptedSecureJSONData: map[string]string{"httpHeaderValue1": "tenant-a", "bearerToken": "tok"}}
	cfg, err := LoadSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := HTTPClient(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	// The limit is the promql client's, over this HTTP client, as the
	// datasource builds it.
	pc, err := promql.New(promql.Config{URL: srv.URL, HTTPClient: c, MaxResponseBytes: cfg.MaxResponseBytes, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, readErr := pc.Instant(context.Background(), "1", 1)
	if got.Get("X-Scope-OrgID") != "tenant-a" || got.Get("Authorization") != "Bearer tok" {
		t.Fatalf("headers %v", got)
	}
	var tooLarge *promql.ResponseTooLargeError
	if !errors.As(readErr, &tooLarge) {
		t.Fatalf("a 4 KiB answer passed a 1 KiB response limit: %v", readErr)
	}
	s.BasicAuthEnabled, s.BasicAuthUser = true, "u"
	s.DecryptedSecureJSONData = map[string]string{"basicAuthPassword": "p"}
	c, _ = HTTPClient(context.Background(), s)
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if u, p, ok := (&http.Request{Header: got}).BasicAuth(); !ok || u != "u" || p != "p" {
		t.Fatalf("basic auth %v %q %q", ok, u, p)
	}
}

func TestRunRefAndVariables(t *testing.T) {
	tests := []struct {
		json string
		want []string
	}{
		{`{}`, []string{"range"}},
		{`{"run": null}`, []string{"range"}},
		{`{"run": ""}`, []string{"range"}},
		{`{"run": "latest"}`, []string{"latest"}},
		{`{"run": ["a/1/b", "c/2/d", "a/1/b"]}`, []string{"a/1/b", "c/2/d"}},
		{`{"run": "{a/1/b,c/2/d}"}`, []string{"a/1/b", "c/2/d"}},
		{`{"run": ["{a/1/b,c/2/d}", "e/3/f"]}`, []string{"a/1/b", "c/2/d", "e/3/f"}},
	}
	for _, tc := range tests {
		m, err := parseQuery(backend.DataQuery{RefID: "A", JSON: json.RawMessage(tc.json)})
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if got := m.Run.ids(); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: ids %v, want %v", tc.json, got, tc.want)
		}
	}
	vars := map[string]string{"$run": "run", "${run}": "run", "${run:csv}": "run", "[[run]]": "run", "x-$tag-y": "tag", "a%24b/1/c": ""}
	for s, want := range vars {
		got, ok := unresolvedVariable(s)
		if ok != (want != "") || got != want {
			t.Errorf("unresolvedVariable(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
}

// Kubernetes access: kubeconfig path + context (jsonData kubeconfigPath,
// kubeContext) reach the client configuration.
func TestKubeconfigSettings(t *testing.T) {
	s, err := LoadSettings(backend.DataSourceInstanceSettings{URL: "http://prom:9090",
		JSONData: json.RawMessage(`{"kubernetesAccess": "kubeconfig", "kubeconfigPath": "/etc/kube/config", "kubeContext": "lab", "timeoutSeconds": 7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Kube.Access != "kubeconfig" || s.Kube.ConfigPath != "/etc/kube/config" || s.Kube.Context != "lab" {
		t.Fatalf("kube settings %+v", s.Kube)
	}
	a := s.Kube.access(s.Timeout)
	if a.Mode != "kubeconfig" || a.KubeconfigPath != "/etc/kube/config" || a.Context != "lab" || a.Timeout != 7*time.Second {
		t.Errorf("cluster access %+v", a)
	}
	// inCluster needs nothing else.
	if s, err := LoadSettings(backend.DataSourceInstanceSettings{URL: "http://p", JSONData: json.RawMessage(`{"kubernetesAccess": "inCluster"}`)}); err != nil || s.Kube.Access != "inCluster" {
		t.Errorf("inCluster: %+v %v", s.Kube, err)
	}
}

// TLS options come from the SDK's HTTP client options: a Prometheus behind
// a private CA is reachable with tlsAuthWithCACert + the tlsCACert secret,
// and not without.
func TestTLSSettings(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	get := func(jd string, secure map[string]string) error {
		s := backend.DataSourceInstanceSettings{URL: srv.URL, JSONData: json.RawMessage(jd), DecryptedSecureJSONData: secure}
		if _, err := LoadSettings(s); err != nil {
			return err
		}
		c, err := HTTPClient(context.Background(), s)
		if err != nil {
			return err
		}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	if err := get(`{}`, nil); err == nil {
		t.Error("a private CA was trusted without tlsCACert")
	}
	if err := get(`{"tlsAuthWithCACert": true}`, map[string]string{"tlsCACert": ca}); err != nil {
		t.Errorf("with the CA: %v", err)
	}
	if err := get(`{"tlsSkipVerify": true}`, nil); err != nil {
		t.Errorf("tlsSkipVerify: %v", err)
	}
}

// timeoutSeconds overrides both request timeouts (default 5 s instant, 8 s
// range); maxConcurrentQueries bounds the requests in flight.
func TestTimeoutAndConcurrencySettings(t *testing.T) {
	const from, to = 1710237600, 1710240600
	for _, c := range []struct {
		name             string
		jd               map[string]any
		instant, rng     string
		maxInFlight, min int
	}{
		{"defaults", map[string]any{}, "5s", "8s", 8, 3},
		{"timeoutSeconds 3, maxConcurrentQueries 2", map[string]any{"timeoutSeconds": 3, "maxConcurrentQueries": 2}, "3s", "3s", 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := promfake.New(t, promfake.Empty(40*time.Millisecond))
			d := fakeDatasource(t, srv.URL, c.jd)
			resp := directQuery(t, d,
				q("A", from, to, map[string]any{"queryType": "snapshots"}),
				q("B", from, to, map[string]any{"queryType": "workingSet", "block": "node"}),
				q("C", from, to, map[string]any{"queryType": "psi", "scope": "pod", "resource": "io"}))
			for ref, r := range resp {
				if r.Error != nil {
					t.Fatalf("%s: %v", ref, r.Error)
				}
			}
			kinds := map[string]bool{}
			for _, r := range srv.Requests() {
				want := c.instant
				if strings.HasSuffix(r.Path, "query_range") {
					want = c.rng
				}
				kinds[r.Path] = true
				if got := r.Form.Get("timeout"); got != want {
					t.Errorf("%s timeout %q, want %q", r.Path, got, want)
				}
			}
			if len(kinds) != 2 {
				t.Errorf("paths %v: want instant and range reads", kinds)
			}
			if got := srv.MaxInFlight(); got > c.maxInFlight || got < c.min {
				t.Errorf("max in flight %d, want between %d and %d", got, c.min, c.maxInFlight)
			}
			// The ad hoc run had no user samples: the fallback says so.
			if !hasNotice(resp["A"].Frames[0], "steady window = run window") {
				t.Errorf("no steady-window fallback notice: %+v", resp["A"].Frames[0].Meta)
			}
		})
	}
}
