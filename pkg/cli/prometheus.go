package cli

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/promql"
)

// Check rejects values of the group's flags that cannot be used.
func (p Prometheus) Check() error {
	switch {
	case p.MaxConcurrency != nil && *p.MaxConcurrency < 1:
		return errors.New("--max-concurrency must be at least 1")
	case p.MaxResponseMB != nil && *p.MaxResponseMB < 1:
		return errors.New("--max-response-mb must be at least 1")
	case p.Timeout != nil && *p.Timeout < 0:
		return errors.New("--timeout must not be negative")
	}
	return nil
}

// Config is the Prometheus client the group's flag values describe: the
// URL, --header and the bearer token (--bearer-token-file, else
// $PROMETHEUS_BEARER_TOKEN from getenv) on every request, --timeout for
// instant and range reads, --max-concurrency and --max-response-mb. A flag
// the group leaves out takes promql's default.
func (p Prometheus) Config(getenv func(string) string) (promql.Config, error) {
	var cfg promql.Config
	if p.URL != nil {
		cfg.URL = *p.URL
	}
	if p.Timeout != nil {
		cfg.InstantTimeout, cfg.RangeTimeout = *p.Timeout, *p.Timeout
	}
	if p.MaxConcurrency != nil {
		cfg.MaxInFlight = *p.MaxConcurrency
	}
	if p.MaxResponseMB != nil {
		cfg.MaxResponseBytes = int64(*p.MaxResponseMB) << 20
	}
	h := http.Header{}
	if p.Headers != nil {
		for _, kv := range *p.Headers {
			name, value, _ := strings.Cut(kv, ":")
			h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	token := strings.TrimSpace(getenv("PROMETHEUS_BEARER_TOKEN"))
	if p.BearerTokenFile != nil && *p.BearerTokenFile != "" {
		b, err := os.ReadFile(*p.BearerTokenFile)
		if err != nil {
			return cfg, fmt.Errorf("--bearer-token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if len(h) > 0 {
		// The headers go only to the origin named (promql applies the same
		// rule to every client; this one keeps it wherever it is used).
		cfg.HTTPClient = &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: h},
			CheckRedirect: endpoint.SameOriginRedirects("Prometheus")}
	}
	return cfg, nil
}

// ConfigWithoutCredentials is Config for a URL the operator did not name
// (one read from an artifact): the same timeout and bounds, without
// --header, --bearer-token-file or $PROMETHEUS_BEARER_TOKEN, which would go
// to whoever wrote the artifact.
func (p Prometheus) ConfigWithoutCredentials(url string) (promql.Config, error) {
	p.URL, p.Headers, p.BearerTokenFile = &url, nil, nil
	return p.Config(func(string) string { return "" })
}

// headerTransport adds the configured headers (tenant ids, bearer token) to
// every Prometheus request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, vs := range t.headers {
		r.Header[k] = append([]string(nil), vs...)
	}
	return t.base.RoundTrip(r)
}
