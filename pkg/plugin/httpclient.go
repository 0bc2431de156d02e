package plugin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
)

// HTTPClient builds the Prometheus HTTP client from the SDK options so TLS,
// basic auth, custom headers (httpHeaderNameN/ValueN, e.g. tenant headers)
// and Grafana's proxy settings apply to every request, health included.
// A bearerToken secret becomes the Authorization header; the response limit
// caps what one request can make the plugin hold in memory.
func HTTPClient(ctx context.Context, s backend.DataSourceInstanceSettings, cfg Settings) (*http.Client, error) {
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
	opts.Middlewares = withResponseLimit(httpclient.DefaultMiddlewares(), cfg.MaxResponseBytes)
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
	return c, nil
}

// idleCloser gives the SDK's middleware chain back the pool's
// CloseIdleConnections, which http.Client.CloseIdleConnections calls, and
// serializes each response body's Read and Close: client_golang's
// api.Client.Do closes the body from one goroutine while another may still
// be reading it (when the request's context ends mid-read), and the SDK's
// metrics middleware wraps bodies in a byte counter that is not safe for
// that (a data race on its count).
type idleCloser struct {
	http.RoundTripper
	pool *http.Transport
}

func (c idleCloser) CloseIdleConnections() { c.pool.CloseIdleConnections() }

func (c idleCloser) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &serialBody{rc: resp.Body}
	}
	return resp, err
}

// serialBody lets Close wait for a Read in progress; that Read returns
// promptly once the request's context has ended (net/http aborts it).
type serialBody struct {
	mu sync.Mutex
	rc io.ReadCloser
}

func (b *serialBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rc.Read(p)
}

func (b *serialBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rc.Close()
}

// withResponseLimit replaces the default (unlimited) response-limit
// middleware: middleware names must be unique in one client.
func withResponseLimit(mws []httpclient.Middleware, limit int64) []httpclient.Middleware {
	out := make([]httpclient.Middleware, 0, len(mws)+1)
	for _, m := range mws {
		if n, ok := m.(httpclient.MiddlewareName); ok && n.MiddlewareName() == httpclient.ResponseLimitMiddlewareName {
			continue
		}
		out = append(out, m)
	}
	return append(out, httpclient.ResponseLimitMiddleware(limit))
}
