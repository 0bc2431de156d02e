package plugin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/promql"
)

// healthTimeout bounds each health probe.
const healthTimeout = 10 * time.Second

// substrateFamilies are the metric families the health check looks for in
// the last day, grouped as the user thinks of them.
var substrateFamilies = []struct {
	what  string
	names []string
}{
	{"packing", []string{"ate_workerpool_workers"}},
	{"PSI", []string{"container_pressure_cpu_waiting_seconds_total", "container_pressure_memory_waiting_seconds_total", "container_pressure_io_waiting_seconds_total"}},
	{"snapshot histograms", []string{"atelet_snapshot_size_bytes_bucket", "ate_actor_restore_duration_seconds_bucket", "ate_actor_checkpoint_duration_seconds_bucket"}},
	{"sampled actors", []string{"ate_actor_stats_sampled_actors", "ate_actor_stats_memory_working_set_bytes"}},
	{"cAdvisor", []string{"container_memory_working_set_bytes", "container_cpu_usage_seconds_total", "container_oom_events_total"}},
}

// Part statuses in the health details.
const (
	partOK    = "ok"
	partError = "error"
	partOff   = "off"
	partNote  = "warning"
)

// healthPart is one configured part's outcome.
type healthPart struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func (p healthPart) line() string {
	switch p.Status {
	case partOff:
		return p.Name + ": off"
	case partOK:
		return p.Name + ": OK" + prefixed(" — ", p.Message)
	case partNote:
		return p.Name + ": OK — " + p.Message
	}
	return p.Name + ": FAILED — " + p.Message
}

func prefixed(pre, s string) string {
	if s == "" {
		return ""
	}
	return pre + s
}

// CheckHealth checks each configured part separately (settings,
// Prometheus and its Substrate metrics, the results store, Kubernetes
// RBAC) and names the failing one with the host and a plain reason, never
// a credential. Parts switched off are reported as off.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	var parts []healthPart
	if d.settingsErr != nil {
		parts = append(parts, healthPart{"Settings", partError, d.settingsErr.Error()})
	} else {
		parts = append(parts, d.checkPrometheus(ctx)...)
		parts = append(parts, d.checkStore(ctx), d.checkKubernetes(ctx))
	}
	status := backend.HealthStatusOk
	lines := make([]string, len(parts))
	for i, p := range parts {
		lines[i] = p.line()
		if p.Status == partError {
			status = backend.HealthStatusError
		}
	}
	details, _ := json.Marshal(map[string]any{"parts": parts, "verboseMessage": strings.Join(lines, "\n")})
	return &backend.CheckHealthResult{Status: status, Message: strings.Join(lines, "\n"), JSONDetails: details}, nil
}

// checkPrometheus probes the URL with the instance's own HTTP client (so
// auth, TLS and headers are exercised), then PromQL, then the Substrate
// metric families of the last day and the user-count query.
func (d *Datasource) checkPrometheus(ctx context.Context) []healthPart {
	host := URLHost(d.settings.PrometheusURL)
	name := "Prometheus (" + host + ")"
	if d.promErr != nil || d.httpc == nil {
		return []healthPart{{name, partError, fmt.Sprintf("the client could not be built: %v", d.promErr)}}
	}
	now := d.now()
	if err := d.probePromQL(ctx, now); err != nil {
		return []healthPart{{name, partError, err.Error()}}
	}
	families := d.checkFamilies(ctx, name, now)
	return []healthPart{families, d.checkDiscovery(ctx, now)}
}

// probePromQL asks PromQL for `1` at now: an error says why the answer is
// not one the harvest can read.
func (d *Datasource) probePromQL(ctx context.Context, now time.Time) error {
	q := url.Values{"query": {"1"}, "time": {strconv.FormatInt(now.Unix(), 10)}}
	probe, err := d.promGet(ctx, "/api/v1/query", q)
	if err != nil {
		return err
	}
	// `1` is a scalar (Prometheus, Thanos, Mimir) or a one-sample vector
	// (VictoriaMetrics); anything else is not a PromQL API the harvest can
	// read, even though the envelope said success.
	var pr struct {
		Data struct {
			ResultType string `json:"resultType"`
		} `json:"data"`
	}
	if json.Unmarshal(probe, &pr) != nil || (pr.Data.ResultType != "scalar" && pr.Data.ResultType != "vector") {
		return fmt.Errorf("PromQL answered the query 1 with result type %q, not a scalar: this is not a Prometheus-compatible query API", pr.Data.ResultType)
	}
	return nil
}

// checkFamilies is the Prometheus part (name) saying which Substrate
// metric families have no data in the day before now.
func (d *Datasource) checkFamilies(ctx context.Context, name string, now time.Time) healthPart {
	present, err := d.presentMetrics(ctx, now)
	if err != nil {
		return healthPart{name, partNote, "PromQL answers, but the metric names could not be listed: " + err.Error()}
	}
	var missing []string
	for _, f := range substrateFamilies {
		var absent []string
		for _, n := range f.names {
			if !present[n] {
				absent = append(absent, n)
			}
		}
		if len(absent) > 0 {
			missing = append(missing, f.what+" ("+strings.Join(absent, ", ")+")")
		}
	}
	if len(missing) == 0 {
		return healthPart{name, partOK, "PromQL answers; every Substrate metric family has data in the last day"}
	}
	return healthPart{name, partNote, "PromQL answers, but these Substrate metric families have no data in the last day: " + strings.Join(missing, "; ")}
}

// presentMetrics are the Substrate metric names that have data in the day
// before now (label values with a match[] selector read only the index);
// an answer that does not parse names none.
func (d *Datasource) presentMetrics(ctx context.Context, now time.Time) (map[string]bool, error) {
	var names []string
	for _, f := range substrateFamilies {
		names = append(names, f.names...)
	}
	lv := url.Values{
		"match[]": {`{__name__=~"` + strings.Join(names, "|") + `"}`},
		"start":   {strconv.FormatInt(now.Add(-24*time.Hour).Unix(), 10)},
		"end":     {strconv.FormatInt(now.Unix(), 10)},
	}
	body, err := d.promGet(ctx, "/api/v1/label/__name__/values", lv)
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	var r struct{ Data []string }
	if json.Unmarshal(body, &r) == nil {
		for _, n := range r.Data {
			present[n] = true
		}
	}
	return present, nil
}

// checkDiscovery is the run discovery part: its user-count query checked
// at now, or off.
func (d *Datasource) checkDiscovery(ctx context.Context, now time.Time) healthPart {
	if !d.settings.DiscoverRuns || d.catalogs.Discovery == nil {
		return healthPart{"Run discovery", partOff, ""}
	}
	cctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	if err := d.catalogs.Discovery.Check(cctx, now.Unix()); err != nil {
		return healthPart{"Run discovery", partError, err.Error()}
	}
	return healthPart{"Run discovery", partOK, d.settings.UserCountQuery}
}

// healthMaxRead is the most of a probe's answer promGet reads; a longer one
// is cut there (and then fails to parse). A smaller maxResponseBytes makes a
// longer answer an error naming that limit, as for the queries.
const healthMaxRead = 8 << 20

// promGet GETs an API path under the Prometheus URL and returns the body of
// a successful Prometheus answer, or an error in plain words.
func (d *Datasource) promGet(ctx context.Context, path string, q url.Values) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	u := strings.TrimSuffix(d.settings.PrometheusURL, "/") + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errors.New("the URL is not valid")
	}
	resp, err := d.httpc.Do(req)
	if err != nil {
		return nil, describeNetError(err)
	}
	defer resp.Body.Close()
	// A maxResponseBytes below healthMaxRead fails the read as for the
	// queries; otherwise the read is cut at healthMaxRead.
	var body []byte
	if limit := d.settings.MaxResponseBytes; limit > 0 && limit < healthMaxRead {
		body, err = io.ReadAll(promql.LimitBody(resp.Body, limit))
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, healthMaxRead))
	}
	var tooLarge *promql.ResponseTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("the answer could not be read: %w", err)
	case err != nil:
		return nil, fmt.Errorf("the answer could not be read: %v", describeNetError(err))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("the credentials were rejected (HTTP %d %s): check basic auth, the bearer token and custom headers", resp.StatusCode, http.StatusText(resp.StatusCode))
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("HTTP 404 Not Found for %s: the URL path is probably wrong (use the Prometheus base URL, e.g. http://host:9090, or the prefix your proxy serves it under)", path)
	case resp.StatusCode >= 300 && !isPromJSON(body):
		return nil, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	var pr struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(body, &pr); err != nil || pr.Status == "" {
		return nil, fmt.Errorf("the answer to %s is not the Prometheus API (HTTP %d, %s): the URL path is probably wrong", path, resp.StatusCode, contentKind(resp))
	}
	if pr.Status != "success" {
		return nil, fmt.Errorf("PromQL failed: %s", pr.Error)
	}
	return body, nil
}

func isPromJSON(b []byte) bool {
	var pr struct {
		Status string `json:"status"`
	}
	return json.Unmarshal(b, &pr) == nil && pr.Status != ""
}

func contentKind(resp *http.Response) string {
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		return ct
	}
	return "no content type"
}

// describeNetError says in plain words why a request got no answer. It
// never returns the request URL (which could carry credentials).
func describeNetError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var (
		redirect *endpoint.RedirectError
		dnsErr   *net.DNSError
		cert     *tls.CertificateVerificationError
		unk      x509.UnknownAuthorityError
		host     x509.HostnameError
	)
	switch {
	case errors.As(err, &redirect):
		return redirect
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("not reachable: connection refused (is it running, and is the port right?)")
	case errors.As(err, &dnsErr):
		return fmt.Errorf("not reachable: the host name %q could not be resolved", dnsErr.Name)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("no answer within %s", healthTimeout)
	case errors.As(err, &cert), errors.As(err, &unk), errors.As(err, &host):
		return fmt.Errorf("TLS certificate not accepted: %v (set the CA certificate, or skip verification)", err)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the connection was closed without an answer (a TLS/plain HTTP mismatch?)")
	}
	return fmt.Errorf("not reachable: %v", err)
}

// checkStore lists the store's runs/ prefix.
func (d *Datasource) checkStore(ctx context.Context) healthPart {
	if d.settings.ResultsStore == "" {
		return healthPart{"Results store", partOff, ""}
	}
	name := "Results store (" + endpoint.Redact(d.settings.ResultsStore) + ")"
	if d.storeErr != nil {
		return healthPart{name, partError, "could not be opened: " + d.storeErr.Error()}
	}
	cctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	if err := d.catalogs.Store.Check(cctx); err != nil {
		return healthPart{name, partError, "not listable: " + err.Error()}
	}
	tests, err := d.catalogs.Store.Tests(cctx)
	if err != nil {
		return healthPart{name, partError, "not listable: " + err.Error()}
	}
	if len(tests) == 0 {
		return healthPart{name, partNote, "listable, but it holds no runs/<test_name>/ prefix yet"}
	}
	return healthPart{name, partOK, fmt.Sprintf("listable; %d test name(s)", len(tests))}
}

// checkKubernetes verifies the RBAC discovery needs (list nodes, pods,
// events) through pkg/cluster.
func (d *Datasource) checkKubernetes(ctx context.Context) healthPart {
	if d.settings.Kube.Access == cluster.ModeOff {
		return healthPart{"Kubernetes", partOff, ""}
	}
	name := "Kubernetes (" + d.settings.Kube.Access + ")"
	if d.settings.Kube.Access == cluster.ModeToken {
		name = "Kubernetes (" + URLHost(d.settings.Kube.URL) + ")"
	}
	if d.kubeErr != nil {
		return healthPart{name, partError, "could not be configured: " + d.kubeErr.Error()}
	}
	if err := cluster.CheckAccess(ctx, d.kube, d.settings.clusterOptions()); err != nil {
		return healthPart{name, partError, err.Error()}
	}
	msg := "can list nodes, and pods and events in " + d.settings.WorkerNamespace
	// The phase breakdown of runs without stored rows reads the live pod
	// logs: optional, so a denial is a note, not an error.
	namespaces := []string{d.settings.AteletNamespace, d.settings.WorkerNamespace}
	denied, err := cluster.CheckLogAccess(ctx, d.kube, d.settings.Timeout, namespaces...)
	switch {
	case err != nil:
		return healthPart{name, partNote, msg + "; pods/log access could not be reviewed: " + err.Error()}
	case len(denied) > 0:
		return healthPart{name, partNote, msg + "; pods/log is not readable in " + strings.Join(denied, ", ") +
			": the phase breakdown of runs without stored phase rows cannot be read from the live pod logs"}
	}
	return healthPart{name, partOK, msg + "; can read pods/log in " + strings.Join(namespaces, " and ")}
}
