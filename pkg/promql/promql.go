// Package promql is the Prometheus access layer: bounded, concurrent, split and
// decoded reads, plus the window arithmetic the spec defines (per-series
// counter growth, client-side histogram_quantile).
//
// The contract (names and signatures in this file) was fixed by the
// coordinator because other packages code against it. Implementations live in
// client.go (the client, limiter and timeouts), request.go (one query's HTTP
// exchange and its errors), transport.go (retries), responselimit.go (the
// response size limit), range.go (the range controller: chunk sizing,
// splitting and joining), decode.go (the query answer's grammar) on
// scanner.go (a validating JSON scanner), labels.go (label-set identity and
// order), selector.go (the selector parser), growth.go and growth_reads.go
// (window counter growth and the reads it makes), log.go and histogram.go.
package promql

import (
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

// Defaults applied by New to zero Config fields.
const (
	DefaultInstantTimeout   = 5 * time.Second
	DefaultRangeTimeout     = 8 * time.Second
	DefaultMaxInFlight      = 8
	DefaultMaxPoints        = 11000
	DefaultMaxSeriesPoints  = 1_000_000
	DefaultMaxResponseBytes = 64 << 20
	DefaultRetries          = 2
	DefaultMaxRetryWait     = 2 * time.Second
)

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
	// MaxSeriesPoints bounds one range answer's size in points, series ×
	// steps (default 1,000,000: ~35 MB of JSON, ~16 MB decoded, a few
	// seconds of a 2-core Prometheus, far under its default
	// --query.max-samples of 50 M). Long ranges are cut into time chunks
	// sized by the series count (see RangeEach).
	MaxSeriesPoints int

	// MaxResponseBytes bounds one HTTP answer (default 64 MiB): a larger
	// answer is an error naming the limit, not an out-of-memory.
	MaxResponseBytes int64
	// Retries is how many times an idempotent read is retried after 429,
	// 502, 503, 504 or a connection reset (default 2; negative disables).
	// Retries happen inside the request's timeout.
	Retries int
	// MaxRetryWait caps one wait between attempts, including a server's
	// Retry-After (default 2s).
	MaxRetryWait time.Duration
}

// Growth is the per-series window growth of a counter selector.
// Len(Series)==0 with a nil error means the family is absent.
type Growth struct {
	Series    []SeriesGrowth
	Restarted int // number of series that restarted inside the window
}

// SeriesGrowth is one series' window figures.
type SeriesGrowth struct {
	Labels    map[string]string
	Growth    float64  // restart-aware growth over (A, B]
	End       *float64 // v_B, nil when the series has no value at B
	Restarted bool
}

// Delta sums the growth of all series.
func (g Growth) Delta() float64 {
	sum := 0.0
	for _, s := range g.Series {
		sum += s.Growth
	}
	return sum
}

// End sums v_B over series that have one.
func (g Growth) End() float64 {
	sum := 0.0
	for _, s := range g.Series {
		if s.End != nil {
			sum += *s.End
		}
	}
	return sum
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 // math.Inf(1) for +Inf
	Count      float64
}
