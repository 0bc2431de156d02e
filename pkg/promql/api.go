// Package promql is the Prometheus access layer: bounded, concurrent, split and
// decoded reads through client_golang's v1.API, plus the window arithmetic the
// spec defines (per-series counter growth, client-side histogram_quantile).
//
// CONTRACT STUB written by the coordinator: signatures are fixed (other packages
// code against them); bodies are filled by the promql implementer.
package promql

import (
	"context"
	"net/http"
	"time"
)

// Sample is one point. T is Unix seconds (Prometheus timestamps in this
// project are whole seconds on a 10 s grid or backfilled seconds).
type Sample struct {
	T int64
	V float64
}

// Series is one decoded series. NaN and ±Inf samples are already dropped.
type Series struct {
	Labels  map[string]string
	Samples []Sample
}

// Config builds a Client. HTTPClient comes from the caller (Grafana's
// httpclient.New or a plain client in the CLI) so TLS, auth and tenant
// headers apply to every request.
type Config struct {
	URL            string
	HTTPClient     *http.Client
	InstantTimeout time.Duration // default 5s
	RangeTimeout   time.Duration // default 8s
	MaxInFlight    int           // default 8
	MaxPoints      int           // per series per request; default 11000
}

// Client is safe for concurrent use.
type Client struct{ /* filled by implementer */ }

// New validates cfg and returns a client.
func New(cfg Config) (*Client, error) { panic("stub") }

// Log records every PromQL string issued (in issue order), for
// FrameMeta.ExecutedQueryString and `density export --verbose`.
type Log struct{ /* mutex + entries */ }

// Queries returns a copy of what was recorded.
func (l *Log) Queries() []string { panic("stub") }

// Recording returns a client sharing c's HTTP client and in-flight limiter
// that also appends each query to log (log may be shared by goroutines).
func (c *Client) Recording(log *Log) *Client { panic("stub") }

// Instant evaluates query at t (Unix seconds). Each returned Series has
// exactly one Sample (series whose value is NaN/±Inf are returned with no
// samples). Errors: transport, timeout, non-success status, malformed body,
// or a result type other than vector/scalar.
func (c *Client) Instant(ctx context.Context, query string, t int64) ([]Series, error) {
	panic("stub")
}

// Range evaluates query over [start, end] at step seconds (if end <= start,
// end = start+1), splitting into consecutive chunks so no series exceeds
// MaxPoints per request, and joining the chunks per label set.
func (c *Client) Range(ctx context.Context, query string, start, end, step int64) ([]Series, error) {
	panic("stub")
}

// SeriesGrowth is one series' window figures.
type SeriesGrowth struct {
	Labels    map[string]string
	Growth    float64  // restart-aware growth over (A, B]
	End       *float64 // v_B, nil when the series has no value at B
	Restarted bool
}

// Growth is the per-series window growth of a counter selector.
// Len(Series)==0 with a nil error means the family is absent.
type Growth struct {
	Series    []SeriesGrowth
	Restarted int // number of series that restarted inside the window
}

// Delta sums the growth of all series.
func (g Growth) Delta() float64 { panic("stub") }

// End sums v_B over series that have one.
func (g Growth) End() float64 { panic("stub") }

// WindowGrowth computes the spec's per-series restart-aware growth of the
// counter selector sel over (a, b] (server-telemetry.md, "Window counter
// deltas"). sel is a plain series selector (it may match _bucket, _sum and
// _count at once, e.g. `{__name__=~"x_(bucket|sum|count)"}`). If b <= a the
// growth is zero for every series (never a zero-length range selector).
func (c *Client) WindowGrowth(ctx context.Context, sel string, a, b int64) (Growth, error) {
	panic("stub")
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 // math.Inf(1) for +Inf
	Count      float64
}

// HistogramQuantile applies Prometheus's histogram_quantile algorithm to one
// histogram (buckets in any order). It returns NaN when there is no
// observation or no +Inf bucket, like Prometheus.
func HistogramQuantile(q float64, buckets []Bucket) float64 { panic("stub") }
