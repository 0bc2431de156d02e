package plugin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"

	"github.com/substrate/density/pkg/endpoint"
)

// HTTPClient builds the Prometheus HTTP client from the SDK options so TLS,
// basic auth, custom headers (httpHeaderNameN/ValueN, e.g. tenant headers)
// and Grafana's proxy settings apply to every request, health included.
// A bearerToken secret becomes the Authorization header. The response size
// limit is not applied here: the promql client enforces maxResponseBytes on
// every query and the health probes on theirs (see promGet).
func HTTPClient(ctx context.Context, s backend.DataSourceInstanceSettings) (*http.Client, error) {
	opts, err := s.HTTPClientOptions(ctx)
	if err != nil {
		return nil, fmt.Errorf("building the Prometheus HTTP client options: %w", err)
	}
	if tok := s.DecryptedSecureJSONData["bearerToken"]; tok != "" {
		if opts.Header == nil {
			opts.Header = http.Header{}
		}
		opts.Header.Set("Authorization", "Bearer "+tok)
	}
	// The SDK's own middlewares, whose response limit is only the one
	// Grafana's configuration may set (GF_DATAPROXY_RESPONSE_LIMIT).
	opts.Middlewares = httpclient.DefaultMiddlewares()
	// The per-request timeouts of the promql layer bound each call; the
	// client-wide timeout must not cut a long split range read short.
	if opts.Timeouts != nil {
		t := *opts.Timeouts
		t.Timeout = 0
		opts.Timeouts = &t
	}
	// Keep the connection pool: the SDK wraps it in middleware that hides
	// CloseIdleConnections, so Dispose could not close the instance's
	// keep-alive connections otherwise (they would outlive it until their
	// idle timeout).
	var pool *http.Transport
	configure := opts.ConfigureTransport
	opts.ConfigureTransport = func(o httpclient.Options, t *http.Transport) {
		if configure != nil {
			configure(o, t)
		}
		pool = t
	}
	c, err := httpclient.New(opts)
	if err != nil {
		return nil, fmt.Errorf("building the Prometheus HTTP client: %w", err)
	}
	if pool != nil {
		c.Transport = idleCloser{RoundTripper: c.Transport, pool: pool}
	}
	// The middlewares add the credentials to every request, redirected ones
	// too, where net/http's own rule cannot see them: a redirect to another
	// origin is refused (the health probes use this client directly).
	c.CheckRedirect = endpoint.SameOriginRedirects("Prometheus")
	return c, nil
}

// idleCloser gives the SDK's middleware chain back the pool's
// CloseIdleConnections, which http.Client.CloseIdleConnections calls.
type idleCloser struct {
	http.RoundTripper
	pool *http.Transport
}

func (c idleCloser) CloseIdleConnections() { c.pool.CloseIdleConnections() }
