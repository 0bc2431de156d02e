package promql

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/substrate/density/pkg/endpoint"
)

// Client is safe for concurrent use.
type Client struct {
	// base is the parsed Prometheus URL without trailing slashes; endpoint
	// paths are joined under it (see endpoint). httpc (the caller's
	// transport, headers and TLS under this package's retries and size
	// limit) sends the requests; the answers are decoded by decodeAnswer.
	base  *url.URL
	httpc *http.Client
	host  string // for errors: host[:port] only, never credentials
	cfg   Config
	// sem bounds requests in flight; shared by every Recording copy.
	sem chan struct{}
	// clientTimeout is the caller's http.Client.Timeout, applied per request
	// through the context (the wrapped client itself has none).
	clientTimeout time.Duration
	log           *Log
}

// New validates cfg and returns a client. Zero fields take the defaults
// listed in Config.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("promql: parsing the Prometheus URL: %w", endpoint.RedactError(err)) // the URL may hold user info and a token
	}
	if !endpoint.IsHTTP(cfg.URL) {
		return nil, fmt.Errorf("promql: Prometheus URL %q must be http(s)://host[:port][/path]", endpoint.Redact(cfg.URL))
	}
	if cfg.InstantTimeout == 0 {
		cfg.InstantTimeout = DefaultInstantTimeout
	}
	if cfg.RangeTimeout == 0 {
		cfg.RangeTimeout = DefaultRangeTimeout
	}
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.MaxPoints == 0 {
		cfg.MaxPoints = DefaultMaxPoints
	}
	if cfg.MaxSeriesPoints == 0 {
		cfg.MaxSeriesPoints = DefaultMaxSeriesPoints
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.MaxRetryWait == 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	switch {
	case cfg.InstantTimeout < 0, cfg.RangeTimeout < 0:
		return nil, errors.New("promql: timeouts must be positive")
	case cfg.MaxInFlight < 0:
		return nil, errors.New("promql: MaxInFlight must be positive")
	case cfg.MaxPoints < 2:
		// One point per chunk would make no progress across a range.
		return nil, errors.New("promql: MaxPoints must be at least 2")
	case cfg.MaxSeriesPoints < 0:
		return nil, errors.New("promql: MaxSeriesPoints must be positive")
	case cfg.MaxResponseBytes < 0:
		return nil, errors.New("promql: MaxResponseBytes must be positive")
	}

	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	// Keep the caller's cookie jar and redirect policy, under this package's
	// own: credentials (which the caller's transport may add to every
	// request, where net/http cannot see them) go only to the origin the
	// caller named. The caller's Timeout is applied per request via the
	// context so that it covers retries and so that a waiting slot in the
	// limiter does not consume it.
	inner := &http.Client{
		Transport: &transport{
			next:     rt,
			maxBytes: cfg.MaxResponseBytes,
			retries:  cfg.Retries,
			maxWait:  cfg.MaxRetryWait,
		},
		CheckRedirect: sameOrigin(hc.CheckRedirect),
		Jar:           hc.Jar,
	}
	host := u.Host
	u.Path = strings.TrimRight(u.Path, "/")
	cfg.HTTPClient = hc
	return &Client{
		base:          u,
		httpc:         inner,
		host:          host,
		cfg:           cfg,
		sem:           make(chan struct{}, cfg.MaxInFlight),
		clientTimeout: hc.Timeout,
	}, nil
}

// sameOrigin refuses a redirect to another origin than the Prometheus URL's,
// then applies the caller's policy (net/http's default when nil).
func sameOrigin(caller func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	check := endpoint.SameOriginRedirects("Prometheus")
	return func(req *http.Request, via []*http.Request) error {
		if err := check(req, via); err != nil || caller == nil {
			return err
		}
		return caller(req, via)
	}
}

// Recording returns a client sharing c's HTTP client and in-flight limiter
// that also appends each query to log (log may be shared by goroutines).
func (c *Client) Recording(log *Log) *Client {
	cp := *c
	cp.log = log
	return &cp
}

// Host is the Prometheus host[:port] this client reads (no credentials), for
// notices.
func (c *Client) Host() string { return c.host }

// Instant evaluates query at t (Unix seconds). Each returned Series has
// exactly one Sample (series whose value is NaN/±Inf are returned with no
// samples). A scalar result is one series with empty labels. Series keep the
// server's order. Errors: transport, timeout, non-success status, malformed
// body, or a result type other than vector/scalar.
func (c *Client) Instant(ctx context.Context, query string, t int64) ([]Series, error) {
	idx := c.log.add(Entry{Kind: KindInstant, Query: query, Time: t})
	v, err := c.instant(ctx, query, t, idx)
	if err != nil {
		return nil, c.wrap(KindInstant, query, err)
	}
	switch v.resultType {
	case "vector", "scalar":
		return v.series, nil
	default:
		return nil, c.wrap(KindInstant, query, fmt.Errorf("unexpected result type %q (want vector or scalar)", valueType(v)))
	}
}

// instantMatrix evaluates a range-vector selector (e.g. `x[10m] @ t`) as an
// instant query, whose answer is a matrix of raw samples.
func (c *Client) instantMatrix(ctx context.Context, query string, t int64) ([]Series, error) {
	idx := c.log.add(Entry{Kind: KindInstant, Query: query, Time: t})
	v, err := c.instant(ctx, query, t, idx)
	if err != nil {
		return nil, c.wrap(KindInstant, query, err)
	}
	if v.resultType != "matrix" {
		return nil, c.wrap(KindInstant, query, fmt.Errorf("unexpected result type %q (want matrix)", valueType(v)))
	}
	return v.series, nil
}

func (c *Client) instant(ctx context.Context, query string, t int64, idx int) (*answer, error) {
	args := url.Values{"query": {query}, "time": {strconv.FormatInt(t, 10)}}
	return c.call(ctx, c.cfg.InstantTimeout, idx, epQuery, args)
}

// call runs one HTTP request: waits for a slot in the limiter (ctx is
// respected while waiting; the timeout starts once the slot is held), applies
// the request timeout, and records the server's warnings on log entry idx.
func (c *Client) call(ctx context.Context, timeout time.Duration, idx int, ep string, args url.Values) (*answer, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a request slot: %w", ctx.Err())
	}
	defer func() { <-c.sem }()
	timeout = c.effective(timeout)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Also ask the server to give up at the same time, so an abandoned
	// evaluation does not keep burning Prometheus CPU.
	args.Set("timeout", timeout.String())
	v, warnings, err := c.do(rctx, ep, args)
	c.log.warn(idx, warnings)
	if err != nil {
		if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return nil, &timeoutError{timeout: timeout, err: err}
		}
		return nil, err
	}
	return v, nil
}

// effective is a request timeout capped by the caller's http.Client.Timeout.
func (c *Client) effective(timeout time.Duration) time.Duration {
	if c.clientTimeout > 0 && c.clientTimeout < timeout {
		return c.clientTimeout
	}
	return timeout
}

// timeoutError is a request that got no answer within its timeout.
type timeoutError struct {
	timeout time.Duration
	err     error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within the %s timeout: %v", e.timeout, e.err)
}

func (e *timeoutError) Unwrap() error { return e.err }

// timedOut recognises a request that ran out of time, ours or the server's
// (Prometheus answers errorType "timeout" when its own query timeout fires).
func timedOut(err error) bool {
	var te *timeoutError
	var ae *v1.Error
	return errors.As(err, &te) || (errors.As(err, &ae) && ae.Type == v1.ErrTimeout)
}

// QueryError is a failed query: its kind (KindInstant or KindRange), the
// query (cut to 200 bytes), the Prometheus host[:port] (never
// credentials) and the cause, which names neither the query nor the
// request URL. Adapters read it with errors.As.
type QueryError struct {
	Kind, Query, Host string
	Err               error
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("promql: %s query %q to %s: %v", e.Kind, e.Query, e.Host, e.Err)
}

func (e *QueryError) Unwrap() error { return e.Err }

// wrap is the *QueryError of a failed query.
func (c *Client) wrap(kind, query string, err error) error {
	const maxQuery = 200
	if len(query) > maxQuery {
		query = query[:maxQuery] + "..."
	}
	return &QueryError{Kind: kind, Query: query, Host: c.host, Err: err}
}

func valueType(v *answer) string {
	if v == nil || v.resultType == "" {
		return "none"
	}
	return v.resultType
}

// parallel runs f(0..n-1) concurrently (each request still waits for the
// shared limiter) and returns the first error; the others are cancelled.
func parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	if n == 1 {
		return f(ctx, 0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i := range n {
		wg.Go(func() {
			if err := f(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return first
}
