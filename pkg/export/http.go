package export

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// headerTransport adds the configured headers (tenant ids, bearer token) to
// every Prometheus request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, vs := range t.headers {
		r.Header[k] = append([]string(nil), vs...)
	}
	return t.base.RoundTrip(r)
}

// requestHeaders builds the headers from --header and the bearer token
// (--bearer-token-file, else PROMETHEUS_BEARER_TOKEN).
func (o Options) requestHeaders(getenv func(string) string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range o.Headers {
		name, value, _ := strings.Cut(kv, ":")
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	token := strings.TrimSpace(getenv("PROMETHEUS_BEARER_TOKEN"))
	if o.BearerTokenFile != "" {
		b, err := os.ReadFile(o.BearerTokenFile)
		if err != nil {
			return nil, usageErrorf("--bearer-token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h, nil
}

// artifactJSON encodes a small side file (cluster_before.json).
func artifactJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	return append(b, '\n'), nil
}
