package promql_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/promql"
)

func vec(streams ...promfake.Stream) string {
	return promfake.Success("vector", promfake.Vector(streams...))
}

func one(name, v string) promfake.Stream {
	return promfake.Stream{Labels: map[string]string{"__name__": name}, Points: []promfake.Point{{T: 1700000000, V: v}}}
}

var okVector = vec(one("up", "1"))

func newClient(t *testing.T, url string, mod func(*promql.Config)) *promql.Client {
	t.Helper()
	cfg := promql.Config{URL: url}
	if mod != nil {
		mod(&cfg)
	}
	c, err := promql.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// TestFaults is the fault matrix of the access layer: each row is one fault
// a real Prometheus (or the proxy in front of it) produces, the path that
// meets it, and the outcome: an error naming the query kind and host (the
// caller turns it into null fields and a notice), or a correct answer after
// a safe retry.
func TestFaults(t *testing.T) {
	const rangeStart, rangeEnd = 1700000000, 1700000100
	big := strings.Repeat("x", 100<<10)
	type row struct {
		name    string
		handler promfake.Handler
		refused bool   // use a closed port instead of the fake
		url     string // use this URL instead of the fake
		cfg     func(*promql.Config)
		isRange bool
		// wantErr: substrings of the error; nil means success expected.
		wantErr  []string
		notInErr []string
		// wantRequests: requests the server saw (-1: don't check).
		wantRequests int
		wantSeries   []promql.Series
		minGap       time.Duration // minimum time between first and second request
	}
	upOK := []promql.Series{{Labels: map[string]string{"__name__": "up"}, Samples: []promql.Sample{{T: 1700000000, V: 1}}}}
	rows := []row{
		{name: "connection refused", refused: true, wantErr: []string{"instant query", "127.0.0.1:", "refused"}, wantRequests: -1},
		{name: "connection refused range", refused: true, isRange: true, wantErr: []string{"range query", "refused"}, wantRequests: -1},
		{name: "DNS failure", url: "http://prometheus.invalid:9090", cfg: func(c *promql.Config) { c.InstantTimeout = 2 * time.Second },
			wantErr: []string{"instant query", "prometheus.invalid:9090"}, wantRequests: -1},
		{name: "slow beyond timeout", handler: promfake.Always(promfake.Reply{Delay: 3 * time.Second, Body: okVector}),
			cfg: func(c *promql.Config) { c.InstantTimeout = 200 * time.Millisecond }, wantErr: []string{"no answer within the 200ms timeout", "deadline exceeded"}, wantRequests: 1},
		{name: "slow beyond range timeout", isRange: true, handler: promfake.Always(promfake.Reply{Delay: 3 * time.Second, Body: okVector}),
			cfg: func(c *promql.Config) { c.RangeTimeout = 200 * time.Millisecond }, wantErr: []string{"range query", "200ms timeout"}, wantRequests: 1},
		{name: "http client Timeout shorter than instant timeout", handler: promfake.Always(promfake.Reply{Delay: 3 * time.Second, Body: okVector}),
			cfg: func(c *promql.Config) { c.HTTPClient = &http.Client{Timeout: 150 * time.Millisecond} }, wantErr: []string{"150ms timeout"}, wantRequests: 1},
		{name: "502 HTML page, retries exhausted", handler: promfake.Always(promfake.HTML(502)),
			wantErr: []string{"server error: 502"}, notInErr: []string{"<html>", "nginx"}, wantRequests: 3},
		{name: "503 HTML page then success", handler: promfake.Script(promfake.HTML(503), promfake.OK(okVector)), wantRequests: 2, wantSeries: upOK},
		{name: "504 twice then success", handler: promfake.Script(promfake.HTML(504), promfake.HTML(504), promfake.OK(okVector)), wantRequests: 3, wantSeries: upOK},
		{name: "503 three times exceeds retries", handler: promfake.Script(promfake.HTML(503), promfake.HTML(503), promfake.HTML(503), promfake.OK(okVector)),
			wantErr: []string{"503"}, wantRequests: 3},
		{name: "retries disabled", handler: promfake.Script(promfake.HTML(503), promfake.OK(okVector)), cfg: func(c *promql.Config) { c.Retries = -1 },
			wantErr: []string{"503"}, wantRequests: 1},
		{name: "500 is not retried", handler: promfake.Script(promfake.HTML(500), promfake.OK(okVector)), wantErr: []string{"server error: 500"}, wantRequests: 1},
		{name: "429 with Retry-After then success", handler: promfake.Script(promfake.TooManyRequests("1"), promfake.OK(okVector)),
			wantRequests: 2, wantSeries: upOK, minGap: time.Second},
		{name: "429 Retry-After beyond cap is not retried", handler: promfake.Script(promfake.TooManyRequests("30"), promfake.OK(okVector)),
			wantErr: []string{"client error: 429"}, wantRequests: 1},
		{name: "429 Retry-After beyond request timeout is not retried", handler: promfake.Script(promfake.TooManyRequests("1"), promfake.OK(okVector)),
			cfg: func(c *promql.Config) { c.InstantTimeout = 500 * time.Millisecond }, wantErr: []string{"429"}, wantRequests: 1},
		{name: "429 without Retry-After backs off", handler: promfake.Script(promfake.TooManyRequests(""), promfake.OK(okVector)),
			wantRequests: 2, wantSeries: upOK, minGap: 100 * time.Millisecond},
		{name: "429 range retried", isRange: true, handler: promfake.Script(promfake.TooManyRequests("0"),
			promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{Labels: map[string]string{"a": "1"}, Points: []promfake.Point{{T: rangeStart, V: "2"}}})))),
			wantRequests: 2, wantSeries: []promql.Series{{Labels: map[string]string{"a": "1"}, Samples: []promql.Sample{{T: rangeStart, V: 2}}}}},
		{name: "connection reset then success", handler: promfake.Script(promfake.Reply{Reset: true}, promfake.OK(okVector)), wantRequests: 2, wantSeries: upOK},
		{name: "connection reset every time", handler: promfake.Always(promfake.Reply{Reset: true}), wantErr: []string{"instant query"}, wantRequests: 3},
		{name: "truncated JSON", handler: promfake.Script(promfake.Truncated(okVector), promfake.OK(okVector)), wantErr: []string{"bad_response", "unexpected end of JSON"}, wantRequests: 1},
		{name: "transfer cut before Content-Length", handler: promfake.Script(promfake.Reply{Body: okVector, CutAfter: 20}, promfake.OK(okVector)),
			wantErr: []string{"instant query", "unexpected EOF"}, wantRequests: 1},
		{name: "empty 200 body", handler: promfake.Always(promfake.OK("")), wantErr: []string{"bad_response"}, wantRequests: 1},
		{name: "HTML page with 200", handler: promfake.Always(promfake.Reply{Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html><body>Sign in</body></html>"}),
			wantErr: []string{"bad_response", "invalid character '<'"}, notInErr: []string{"Sign in"}, wantRequests: 1},
		{name: "status error bad_data", handler: promfake.Always(promfake.APIError("bad_data", `1:5: parse error: unexpected "}"`)),
			wantErr: []string{"bad_data", "parse error"}, wantRequests: 1},
		{name: "status error execution", isRange: true, handler: promfake.Always(promfake.APIError("execution", "found duplicate series for the match group")),
			wantErr: []string{"range query", "execution", "duplicate series"}, wantRequests: 1},
		{name: "status error in a 200", handler: promfake.Always(promfake.OK(`{"status":"error","errorType":"internal","error":"boom"}`)),
			wantErr: []string{"internal: boom"}, wantRequests: 1},
		{name: "wrong result type matrix for instant", handler: promfake.Always(promfake.OK(promfake.Success("matrix", promfake.Matrix()))),
			wantErr: []string{`unexpected result type "matrix"`}, wantRequests: 1},
		{name: "wrong result type string for instant", handler: promfake.Always(promfake.OK(promfake.Success("string", promfake.Scalar(promfake.Point{T: 1, V: "hello"})))),
			wantErr: []string{"bad_response", `"string"`}, wantRequests: 1},
		{name: "wrong result type vector for range", isRange: true, handler: promfake.Always(promfake.OK(okVector)),
			wantErr: []string{"range query", `unexpected result type "vector"`}, wantRequests: 1},
		{name: "unknown result type", handler: promfake.Always(promfake.OK(promfake.Success("histogramish", "[]"))),
			wantErr: []string{"bad_response", "histogramish"}, wantRequests: 1},
		{name: "result of wrong shape", handler: promfake.Always(promfake.OK(`{"status":"success","data":{"resultType":"vector","result":{"oops":1}}}`)),
			wantErr: []string{"bad_response"}, wantRequests: 1},
		{name: "scalar result", handler: promfake.Always(promfake.OK(promfake.Success("scalar", promfake.Scalar(promfake.Point{T: 1700000000, V: "0.25"})))),
			wantRequests: 1, wantSeries: []promql.Series{{Labels: map[string]string{}, Samples: []promql.Sample{{T: 1700000000, V: 0.25}}}}},
		{name: "NaN scalar", handler: promfake.Always(promfake.OK(promfake.Success("scalar", promfake.Scalar(promfake.Point{T: 1700000000, V: "NaN"})))),
			wantRequests: 1, wantSeries: []promql.Series{{Labels: map[string]string{}}}},
		{name: "NaN and Inf instant values", handler: promfake.Always(promfake.OK(vec(one("a", "NaN"), one("b", "+Inf"), one("c", "-Inf"), one("d", "1.5")))),
			wantRequests: 1, wantSeries: []promql.Series{
				{Labels: map[string]string{"__name__": "a"}}, {Labels: map[string]string{"__name__": "b"}}, {Labels: map[string]string{"__name__": "c"}},
				{Labels: map[string]string{"__name__": "d"}, Samples: []promql.Sample{{T: 1700000000, V: 1.5}}}}},
		{name: "NaN and Inf range samples dropped", isRange: true, handler: promfake.Always(promfake.OK(promfake.Success("matrix", promfake.Matrix(
			promfake.Stream{Labels: map[string]string{"s": "1"}, Points: []promfake.Point{{T: rangeStart, V: "1"}, {T: rangeStart + 10, V: "NaN"}, {T: rangeStart + 20, V: "+Inf"}, {T: rangeStart + 30, V: "-Inf"}, {T: rangeStart + 40, V: "4"}}},
			promfake.Stream{Labels: map[string]string{"s": "0"}, Points: []promfake.Point{{T: rangeStart, V: "NaN"}}},
		)))),
			wantRequests: 1, wantSeries: []promql.Series{
				{Labels: map[string]string{"s": "0"}},
				{Labels: map[string]string{"s": "1"}, Samples: []promql.Sample{{T: rangeStart, V: 1}, {T: rangeStart + 40, V: 4}}}}},
		{name: "oversized body with Content-Length", handler: promfake.Always(promfake.Reply{Header: http.Header{"Content-Length": {fmt.Sprint(len(promfake.Oversized(100 << 10).Body))}}, Body: promfake.Oversized(100 << 10).Body}),
			cfg: func(c *promql.Config) { c.MaxResponseBytes = 64 << 10 }, wantErr: []string{"MaxResponseBytes limit of 65536 bytes"}, wantRequests: 1},
		{name: "oversized chunked body", handler: promfake.Always(promfake.Oversized(100 << 10)),
			cfg: func(c *promql.Config) { c.MaxResponseBytes = 64 << 10 }, wantErr: []string{"instant query", "MaxResponseBytes limit of 65536 bytes"}, wantRequests: 1},
		{name: "body exactly at the limit", handler: promfake.Always(promfake.OK(okVector)),
			cfg: func(c *promql.Config) { c.MaxResponseBytes = int64(len(okVector)) }, wantRequests: 1, wantSeries: upOK},
		{name: "large body under the default limit", handler: promfake.Always(promfake.OK(vec(promfake.Stream{Labels: map[string]string{"pad": big}, Points: []promfake.Point{{T: 1700000000, V: "3"}}}))),
			wantRequests: 1, wantSeries: []promql.Series{{Labels: map[string]string{"pad": big}, Samples: []promql.Sample{{T: 1700000000, V: 3}}}}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			var srv *promfake.Server
			url := ""
			switch {
			case r.url != "":
				url = r.url
			case r.refused:
				url = promfake.ClosedURL(t)
			default:
				srv = promfake.New(t, r.handler)
				url = srv.URL
			}
			c := newClient(t, url, r.cfg)
			var got []promql.Series
			var err error
			if r.isRange {
				got, err = c.Range(context.Background(), "q", rangeStart, rangeEnd, 10)
			} else {
				got, err = c.Instant(context.Background(), "q", 1700000000)
			}
			if r.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !reflect.DeepEqual(got, r.wantSeries) {
					t.Errorf("series:\n got %+v\nwant %+v", got, r.wantSeries)
				}
			} else {
				if err == nil {
					t.Fatalf("want error containing %q, got series %+v", r.wantErr, got)
				}
				for _, s := range r.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				for _, s := range r.notInErr {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error %q should not contain %q", err, s)
					}
				}
			}
			if srv != nil && r.wantRequests >= 0 {
				if n := srv.Count(); n != r.wantRequests {
					t.Errorf("server saw %d requests, want %d", n, r.wantRequests)
				}
			}
			if r.minGap > 0 {
				reqs := srv.Requests()
				if gap := reqs[1].Time.Sub(reqs[0].Time); gap < r.minGap {
					t.Errorf("retry came %v after the first attempt, want >= %v", gap, r.minGap)
				}
			}
		})
	}
}

// TestErrorHasNoCredentials: a URL with user:password and a bearer token must
// not leak into errors (they end up in notices, logs and frames).
func TestErrorHasNoCredentials(t *testing.T) {
	srv := promfake.New(t, promfake.Always(promfake.HTML(502)))
	url := strings.Replace(srv.URL, "http://", "http://alice:s3cr3t@", 1)
	c := newClient(t, url, func(c *promql.Config) {
		c.HTTPClient = &http.Client{Transport: headerTransport{"Authorization": "Bearer t0ken"}}
		c.Retries = -1
	})
	_, err := c.Instant(context.Background(), "up", 1)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, secret := range []string{"s3cr3t", "alice", "t0ken"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q leaks %q", err, secret)
		}
	}
	if got := c.Host(); strings.Contains(got, "s3cr3t") {
		t.Errorf("Host() = %q leaks the password", got)
	}
	// Without a transport setting Authorization, basic auth from the URL
	// reaches the server.
	c = newClient(t, url, func(c *promql.Config) { c.Retries = -1 })
	if _, err := c.Instant(context.Background(), "up", 1); err == nil {
		t.Fatal("want an error")
	}
	reqs := srv.Requests()
	if u, p, ok := (&http.Request{Header: reqs[len(reqs)-1].Header}).BasicAuth(); !ok || u != "alice" || p != "s3cr3t" {
		t.Errorf("basic auth not sent: %q %q %v", u, p, ok)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []promql.Config{
		{URL: ""},
		{URL: "localhost:9090"},
		{URL: "ftp://x"},
		{URL: "http://x", MaxPoints: 1},
		{URL: "http://x", MaxInFlight: -1},
		{URL: "http://x", InstantTimeout: -time.Second},
		{URL: "http://a:pa ss@[::1"},
	} {
		if _, err := promql.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		} else if strings.Contains(err.Error(), "pa ss") {
			t.Errorf("error %q leaks the password", err)
		}
	}
}

// headerTransport stands in for Grafana's middleware: it adds headers to
// every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// growthFake answers the four kinds of reads WindowGrowth makes with one
// counter that restarted, so that every path issues requests.
func growthFake(r promfake.Request) promfake.Reply {
	q := r.Form.Get("query")
	ls := map[string]string{"__name__": "c_total", "instance": "i1"}
	switch {
	case strings.HasPrefix(q, "resets("):
		return promfake.OK(vec(promfake.Stream{Labels: map[string]string{"instance": "i1"}, Points: []promfake.Point{{T: 200, V: "1"}}}))
	case strings.Contains(q, "["):
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{Labels: ls,
			Points: []promfake.Point{{T: 100, V: "10"}, {T: 150, V: "12"}, {T: 160, V: "3"}, {T: 200, V: "5"}}})))
	case r.Form.Get("time") == "100":
		return promfake.OK(vec(promfake.Stream{Labels: ls, Points: []promfake.Point{{T: 100, V: "10"}}}))
	default:
		return promfake.OK(vec(promfake.Stream{Labels: ls, Points: []promfake.Point{{T: 200, V: "5"}}}))
	}
}

// TestHeadersReachEveryRequest: tenant header and bearer token set by the
// caller's transport reach every request, including split chunks, retries
// and each read of WindowGrowth; the server-side timeout travels too.
func TestHeadersReachEveryRequest(t *testing.T) {
	failedOnce := false
	var mu sync.Mutex
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		mu.Lock()
		defer mu.Unlock()
		if !failedOnce {
			failedOnce = true
			return promfake.HTML(503)
		}
		if strings.HasSuffix(r.Path, "/api/v1/query_range") {
			return promfake.OK(promfake.Success("matrix", promfake.Matrix()))
		}
		return growthFake(r)
	})
	c := newClient(t, srv.URL+"/prefix", func(c *promql.Config) {
		c.HTTPClient = &http.Client{Transport: headerTransport{"X-Scope-OrgID": "tenant-a", "Authorization": "Bearer abc"}}
		c.MaxPoints = 5
	})
	log := &promql.Log{}
	rc := c.Recording(log)
	ctx := context.Background()
	if _, err := rc.Instant(ctx, "up", 100); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Range(ctx, "up", 0, 100, 10); err != nil { // 11 points, 5 per chunk: 3 chunks
		t.Fatal(err)
	}
	g, err := rc.WindowGrowth(ctx, "c_total", 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	// 10 -> 12 (+2), restart to 3 (+3), 5 (+2).
	if g.Delta() != 7 || g.Restarted != 1 {
		t.Errorf("growth = %v restarted %d, want 7 and 1", g.Delta(), g.Restarted)
	}
	reqs := srv.Requests()
	// 1 failed + 1 instant + 3 range chunks + 3 growth reads (A, B, resets) + 1 raw.
	if len(reqs) != 9 {
		t.Errorf("server saw %d requests, want 9", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get("X-Scope-OrgID") != "tenant-a" || r.Header.Get("Authorization") != "Bearer abc" {
			t.Errorf("request %d (%s %q) lacks the tenant header or token: %v", r.N, r.Path, r.Form.Get("query"), r.Header)
		}
		if !strings.HasPrefix(r.Path, "/prefix/api/v1/") {
			t.Errorf("request %d path %q lost the URL prefix", r.N, r.Path)
		}
		want := "5s"
		if strings.HasSuffix(r.Path, "query_range") {
			want = "8s"
		}
		if got := r.Form.Get("timeout"); got != want {
			t.Errorf("request %d timeout param %q, want %q", r.N, got, want)
		}
	}
	wantLog := []string{"up", "up", "c_total", "c_total", "resets(c_total[400s] @ 200) + sum_over_time(c_total[400s] @ 200) * 0", "c_total[400s] @ 200"}
	got := log.Queries()
	// The three first growth reads run concurrently: compare as sets there.
	if len(got) != len(wantLog) || !reflect.DeepEqual(got[:2], wantLog[:2]) || got[5] != wantLog[5] || !sameSet(got[2:5], wantLog[2:5]) {
		t.Errorf("log = %q, want %q", got, wantLog)
	}
}

func sameSet(a, b []string) bool {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// TestInFlightLimit: many concurrent calls through two Recording copies never
// put more than MaxInFlight requests on the wire.
func TestInFlightLimit(t *testing.T) {
	srv := promfake.New(t, promfake.Always(promfake.Reply{Delay: 30 * time.Millisecond, Body: okVector}))
	c := newClient(t, srv.URL, func(c *promql.Config) { c.MaxInFlight = 3 })
	copies := []*promql.Client{c.Recording(&promql.Log{}), c.Recording(&promql.Log{}), c}
	concurrently(t, 30, func(i int) error {
		_, err := copies[i%3].Instant(context.Background(), "up", 1)
		return err
	})
	if got := srv.Count(); got != 30 {
		t.Errorf("server saw %d requests, want 30", got)
	}
	if got := srv.MaxInFlight(); got > 3 || got < 2 {
		t.Errorf("max in flight %d, want 2..3 (limit 3, 30 concurrent callers)", got)
	}
}

// TestWaitingRespectsContext: a caller waiting for a slot gives up when its
// context ends, without sending anything.
func TestWaitingRespectsContext(t *testing.T) {
	release := make(chan struct{})
	srv := promfake.New(t, func(promfake.Request) promfake.Reply {
		<-release
		return promfake.OK(okVector)
	})
	c := newClient(t, srv.URL, func(c *promql.Config) { c.MaxInFlight = 1 })
	done := make(chan error, 1)
	go func() {
		_, err := c.Instant(context.Background(), "up", 1)
		done <- err
	}()
	for srv.Count() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Instant(ctx, "up", 2)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a request slot") {
		t.Errorf("err = %v, want a deadline while waiting for a slot", err)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("first call: %v", err)
	}
}

// TestWarningsRecorded: partial-data warnings (Thanos/Mimir) reach the log.
func TestWarningsRecorded(t *testing.T) {
	srv := promfake.New(t, promfake.Always(promfake.OK(promfake.Success("vector", promfake.Vector(one("up", "1")),
		"partial response: store 10.0.0.3:10901 unavailable", "results truncated"))))
	c := newClient(t, srv.URL, nil)
	log := &promql.Log{}
	rc := c.Recording(log)
	got, err := rc.Instant(context.Background(), "up", 5)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	want := []string{"partial response: store 10.0.0.3:10901 unavailable", "results truncated"}
	if w := log.Warnings(); !reflect.DeepEqual(w, want) {
		t.Errorf("Warnings() = %q, want %q", w, want)
	}
	e := log.Entries()
	if len(e) != 1 || e[0].Kind != promql.KindInstant || e[0].Time != 5 || !reflect.DeepEqual(e[0].Warnings, want) {
		t.Errorf("Entries() = %+v", e)
	}
	// A non-recording client drops warnings silently but still answers.
	if _, err := c.Instant(context.Background(), "up", 5); err != nil {
		t.Error(err)
	}
}

// TestRangeRequests: the parameters sent, the end <= start rule, splitting
// with one log entry per logical query, and the join.
func TestRangeRequests(t *testing.T) {
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		// Answer each chunk with its own points of one series: value = t.
		var start, end int64
		fmt.Sscan(r.Form.Get("start"), &start)
		fmt.Sscan(r.Form.Get("end"), &end)
		var pts []promfake.Point
		for t := start; t <= end; t += 10 {
			pts = append(pts, promfake.Point{T: float64(t), V: fmt.Sprint(t)})
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{Labels: map[string]string{"x": "y"}, Points: pts})))
	})
	c := newClient(t, srv.URL, func(c *promql.Config) { c.MaxPoints = 4 })
	log := &promql.Log{}
	got, err := c.Recording(log).Range(context.Background(), "q", 1000, 1095, 10)
	if err != nil {
		t.Fatal(err)
	}
	var want []promql.Sample
	for ts := int64(1000); ts <= 1090; ts += 10 {
		want = append(want, promql.Sample{T: ts, V: float64(ts)})
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Samples, want) {
		t.Errorf("joined = %+v, want %+v", got, want)
	}
	var spans []string
	for _, r := range srv.Requests() {
		spans = append(spans, r.Form.Get("start")+"-"+r.Form.Get("end")+"/"+r.Form.Get("step"))
	}
	sortStrings(spans)
	if w := []string{"1000-1030/10", "1040-1070/10", "1080-1095/10"}; !reflect.DeepEqual(spans, w) {
		t.Errorf("chunks %q, want %q", spans, w)
	}
	if q := log.Entries(); len(q) != 1 || q[0].Kind != promql.KindRange || q[0].Start != 1000 || q[0].End != 1095 || q[0].Step != 10 {
		t.Errorf("log %+v, want one range entry", q)
	}

	// end <= start: end = start + 1, one request.
	before := srv.Count()
	got, err = c.Range(context.Background(), "q", 500, 400, 10)
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[before]
	if r.Form.Get("start") != "500" || r.Form.Get("end") != "501" {
		t.Errorf("end <= start sent start=%s end=%s, want 500 501", r.Form.Get("start"), r.Form.Get("end"))
	}
	if len(got) != 1 || len(got[0].Samples) != 1 || got[0].Samples[0].T != 500 {
		t.Errorf("got %+v", got)
	}
	if _, err := c.Range(context.Background(), "q", 0, 10, 0); err == nil {
		t.Error("step 0 accepted")
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestRangeChunkFailure: one failed chunk fails the whole read (never a
// silently shorter series).
func TestRangeChunkFailure(t *testing.T) {
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		if r.Form.Get("start") == "1040" {
			return promfake.APIError("execution", "boom")
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix()))
	})
	c := newClient(t, srv.URL, func(c *promql.Config) { c.MaxPoints = 4 })
	_, err := c.Range(context.Background(), "q", 1000, 1100, 10)
	if err == nil || !strings.Contains(err.Error(), "chunk 2/3 [1040, 1070]") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v", err)
	}
}

func TestHistogramQuantileEdges(t *testing.T) {
	inf := math.Inf(1)
	b := func(kv ...float64) []promql.Bucket {
		var out []promql.Bucket
		for i := 0; i < len(kv); i += 2 {
			out = append(out, promql.Bucket{UpperBound: kv[i], Count: kv[i+1]})
		}
		return out
	}
	nan := math.NaN()
	rows := []struct {
		name string
		q    float64
		b    []promql.Bucket
		want float64
	}{
		{"interpolate in first bucket from 0", 0.5, b(1, 10, 2, 20, inf, 20), 1},
		{"interpolate", 0.75, b(1, 10, 2, 20, inf, 20), 1.5},
		{"unsorted input", 0.75, b(inf, 20, 2, 20, 1, 10), 1.5},
		{"in +Inf bucket reads highest finite bound", 0.99, b(1, 10, 2, 20, inf, 30), 2},
		{"all in +Inf", 0.5, b(1, 0, 2, 0, inf, 5), 2},
		{"no observations", 0.5, b(1, 0, inf, 0), nan},
		{"no +Inf bucket", 0.5, b(1, 1, 2, 2), nan},
		{"only +Inf bucket", 0.5, b(inf, 4), nan},
		{"empty", 0.5, nil, nan},
		{"q < 0", -0.1, b(1, 1, inf, 1), math.Inf(-1)},
		{"q > 1", 1.1, b(1, 1, inf, 1), inf},
		{"q NaN", nan, b(1, 1, inf, 1), nan},
		{"negative lowest bound", 0.1, b(-1, 5, 1, 10, inf, 10), -1},
		{"coalesce equal bounds", 0.5, b(1, 2, 1, 3, 2, 10, inf, 10), 1},
		{"non-monotonic fixed", 0.5, b(1, 10, 2, 8, 3, 20, inf, 20), 1},
		{"q 0 on empty first bucket", 0, b(1, 0, 2, 4, inf, 4), nan},
		{"q 1", 1, b(1, 2, 2, 4, inf, 4), 2},
	}
	for _, r := range rows {
		got := promql.HistogramQuantile(r.q, r.b)
		if !(got == r.want || math.IsNaN(got) && math.IsNaN(r.want)) {
			t.Errorf("%s: got %v, want %v", r.name, got, r.want)
		}
	}
}

// TestRangeSampleBudget: a span refused for loading too many samples is
// halved until the server accepts; the joined answer is complete. A refusal
// of a single point is an error.
func TestRangeSampleBudget(t *testing.T) {
	const budget = 3 // points per request the fake accepts
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		var start, end int64
		fmt.Sscan(r.Form.Get("start"), &start)
		fmt.Sscan(r.Form.Get("end"), &end)
		if r.Form.Get("query") == "never" || (end-start)/10+1 > budget {
			return promfake.APIError("execution", "query processing would load too many samples into memory in query execution")
		}
		var pts []promfake.Point
		for ts := start; ts <= end; ts += 10 {
			pts = append(pts, promfake.Point{T: float64(ts), V: fmt.Sprint(ts)})
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(promfake.Stream{Labels: map[string]string{"x": "y"}, Points: pts})))
	})
	c := newClient(t, srv.URL, nil)
	got, err := c.Range(context.Background(), "q", 1000, 1200, 10)
	if err != nil {
		t.Fatal(err)
	}
	var want []promql.Sample
	for ts := int64(1000); ts <= 1200; ts += 10 {
		want = append(want, promql.Sample{T: ts, V: float64(ts)})
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Samples, want) {
		t.Errorf("got %+v, want %v", got, want)
	}
	for _, r := range srv.Requests() {
		if r.Form.Get("start") > r.Form.Get("end") {
			t.Errorf("request with start %s after end %s", r.Form.Get("start"), r.Form.Get("end"))
		}
	}
	if _, err := c.Range(context.Background(), "never", 1000, 1200, 10); err == nil || !strings.Contains(err.Error(), "too many samples") {
		t.Errorf("err = %v, want the refusal", err)
	}
}

// TestRangeSeriesBudget: a long read counts its series first and cuts its
// chunks so that series × points stays within MaxSeriesPoints, re-sizing
// when a chunk shows more series than the count (pods come and go).
func TestRangeSeriesBudget(t *testing.T) {
	const start, step = int64(1_000_000), int64(10)
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		if strings.HasSuffix(r.Path, "/api/v1/query") {
			if r.Form.Get("query") != "count(q)" || r.Form.Get("time") != fmt.Sprint(start+1990) {
				return promfake.APIError("bad_data", "unexpected count "+r.Form.Get("query")+" @ "+r.Form.Get("time"))
			}
			return countReply(20)
		}
		from, _ := strconv.ParseInt(r.Form.Get("start"), 10, 64)
		to, _ := strconv.ParseInt(r.Form.Get("end"), 10, 64)
		n := 20
		if from >= start+1000 {
			n = 50 // more series later in the run than at the count's instant
		}
		var streams []promfake.Stream
		for i := range n {
			var pts []promfake.Point
			for ts := from; ts <= to; ts += step {
				pts = append(pts, promfake.Point{T: float64(ts), V: "1"})
			}
			streams = append(streams, promfake.Stream{Labels: map[string]string{"s": fmt.Sprintf("%03d", i)}, Points: pts})
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(streams...)))
	})
	c := newClient(t, srv.URL, func(c *promql.Config) { c.MaxSeriesPoints = 1000 })
	var chunks []string
	err := c.RangeEach(context.Background(), "q", start, start+3990, step, func(chunk []promql.Series) error {
		first := chunk[0].Samples
		chunks = append(chunks, fmt.Sprintf("%d series × %d", len(chunk), len(first)))
		for i := 1; i < len(chunk); i++ {
			if chunk[i-1].Labels["s"] >= chunk[i].Labels["s"] {
				t.Errorf("chunk not sorted: %v before %v", chunk[i-1].Labels, chunk[i].Labels)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 400 points; 20 series -> 50 points per chunk until a chunk shows 50
	// series -> 20 points per chunk, the last one what is left.
	want := []string{"20 series × 50", "20 series × 50", "50 series × 50"}
	for len(want) < 3+12 {
		want = append(want, "50 series × 20")
	}
	want = append(want, "50 series × 10")
	if !reflect.DeepEqual(chunks, want) {
		t.Errorf("chunks %q,\nwant %q", chunks, want)
	}
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/api/v1/query_range") {
			from, _ := strconv.ParseInt(r.Form.Get("start"), 10, 64)
			to, _ := strconv.ParseInt(r.Form.Get("end"), 10, 64)
			if n := (to-from)/step + 1; n*50 > 2500 {
				t.Errorf("request [%d, %d] of %d points", from, to, n)
			}
		}
	}
	// visit's error stops the read and comes back as is.
	stop := errors.New("enough")
	before := srv.Count()
	if err := c.RangeEach(context.Background(), "q", start, start+3990, step, func([]promql.Series) error { return stop }); err != stop {
		t.Errorf("err = %v, want the visitor's", err)
	}
	if n := srv.Count() - before; n != 2 {
		t.Errorf("%d requests after the visitor stopped the read, want 2 (count + first chunk)", n)
	}
}

// TestRangeChunkTimeoutShrinks: a big chunk the server cannot answer within
// the timeout is read again in quarters (and the read never grows back to
// that size); the joined answer is complete.
func TestRangeChunkTimeoutShrinks(t *testing.T) {
	const start, step = int64(1_000_000), int64(10)
	srv := promfake.New(t, func(r promfake.Request) promfake.Reply {
		if strings.HasSuffix(r.Path, "/api/v1/query") {
			return countReply(100)
		}
		from, _ := strconv.ParseInt(r.Form.Get("start"), 10, 64)
		to, _ := strconv.ParseInt(r.Form.Get("end"), 10, 64)
		if (to-from)/step+1 > 4 {
			return promfake.Reply{Delay: time.Second, Body: promfake.Success("matrix", promfake.Matrix())}
		}
		var streams []promfake.Stream
		for i := range 100 {
			var pts []promfake.Point
			for ts := from; ts <= to; ts += step {
				pts = append(pts, promfake.Point{T: float64(ts), V: "1"})
			}
			streams = append(streams, promfake.Stream{Labels: map[string]string{"s": fmt.Sprint(i)}, Points: pts})
		}
		return promfake.OK(promfake.Success("matrix", promfake.Matrix(streams...)))
	})
	c := newClient(t, srv.URL, func(c *promql.Config) { c.MaxSeriesPoints = 1000; c.RangeTimeout = 200 * time.Millisecond })
	got, err := c.Range(context.Background(), "q", start, start+3990, step)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || len(got[0].Samples) != 400 || len(got[99].Samples) != 400 {
		t.Fatalf("%d series, %d samples", len(got), len(got[0].Samples))
	}
	slow := 0
	for _, r := range srv.Requests() {
		from, _ := strconv.ParseInt(r.Form.Get("start"), 10, 64)
		to, _ := strconv.ParseInt(r.Form.Get("end"), 10, 64)
		if strings.HasSuffix(r.Path, "/api/v1/query_range") && (to-from)/step+1 > 4 {
			slow++
		}
	}
	if slow != 1 {
		t.Errorf("%d chunks over 4 points sent, want only the first (10 points, timed out)", slow)
	}
}

// countReply answers the `count(query)` a long range read sends first.
func countReply(n int) promfake.Reply {
	return promfake.OK(promfake.Success("vector", promfake.Vector(promfake.Stream{Points: []promfake.Point{{T: 1, V: fmt.Sprint(n)}}})))
}

// concurrently runs f(0..n-1) at once and fails on the first error.
func concurrently(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestQueryErrorTyped: a failed query is a *promql.QueryError naming its
// kind, the query (once), the host and the cause, which adapters read with
// errors.As; neither the request URL nor the URL's credentials reach it.
func TestQueryErrorTyped(t *testing.T) {
	refused := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}()
	bad := promfake.New(t, promfake.Always(promfake.HTML(502)))
	const q = `sum by (pod) (rate(x{namespace="n"}[1m]))`
	for _, tc := range []struct {
		name, base, kind string
		read             func(c *promql.Client) error
		cause            func(error) bool
	}{
		{"refused range", refused, promql.KindRange,
			func(c *promql.Client) error { _, err := c.Range(context.Background(), q, 1000, 2000, 10); return err },
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"502 instant", bad.URL, promql.KindInstant,
			func(c *promql.Client) error { _, err := c.Instant(context.Background(), q, 1000); return err },
			func(err error) bool { return err != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.base)
			if err != nil {
				t.Fatal(err)
			}
			host := u.Host
			c := newClient(t, strings.Replace(tc.base, "http://", "http://alice:s3cr3t@", 1), func(c *promql.Config) { c.Retries = -1 })
			err = tc.read(c)
			var qe *promql.QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("error %v (%T), want a *promql.QueryError", err, err)
			}
			if qe.Kind != tc.kind || qe.Query != q || qe.Host != host || !tc.cause(qe.Err) {
				t.Errorf("QueryError{%q, %q, %q, %v}, want kind %s, the query, host %s and the cause", qe.Kind, qe.Query, qe.Host, qe.Err, tc.kind, host)
			}
			text := err.Error()
			if n := strings.Count(text, strconv.Quote(q)); n != 1 {
				t.Errorf("error %q names the query %d times, want once", text, n)
			}
			for _, leak := range []string{"s3cr3t", "alice", "/api/v1/"} {
				if strings.Contains(text, leak) {
					t.Errorf("error %q holds %q", text, leak)
				}
			}
		})
	}
}
