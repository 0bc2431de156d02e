// Package promfake is a hand-made Prometheus HTTP API server for fault
// injection only: what a real Prometheus cannot do on demand (refuse, stall,
// answer an HTML error page, 429 with Retry-After, truncate, lie about the
// result type, reset the connection, answer too much). Every answer is
// scripted by the test; the server records each request (headers, form) and
// the highest number of requests it had in flight at once.
//
// Tests of correct answers use real Prometheus (internal/promtest), never this.
package promfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is what the server saw of one request.
type Request struct {
	N      int // 1-based arrival order
	Method string
	Path   string
	Header http.Header
	Form   url.Values // query string and form body merged (query, time, start, end, step, timeout)
	Time   time.Time  // arrival
}

// Reply scripts one answer.
type Reply struct {
	Status int         // default 200
	Header http.Header // e.g. Retry-After; Content-Type defaults to application/json
	Body   string
	// Delay holds the answer back (ends early if the client goes away).
	Delay time.Duration
	// Reset aborts the connection with a TCP RST instead of answering.
	Reset bool
	// CutAfter > 0 announces the full Content-Length, sends only CutAfter
	// bytes of Body and closes the connection (a truncated transfer).
	CutAfter int
}

// Handler chooses the reply to a request.
type Handler func(r Request) Reply

// Server is a running fake. It is closed by t.Cleanup.
type Server struct {
	URL string

	srv     *httptest.Server
	handler Handler

	mu          sync.Mutex
	reqs        []Request
	inFlight    int
	maxInFlight int
}

// New starts a fake answering with h.
func New(t testing.TB, h Handler) *Server {
	t.Helper()
	s := &Server{handler: h}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	req := Request{
		N:      len(s.reqs) + 1,
		Method: r.Method,
		Path:   r.URL.Path,
		Header: r.Header.Clone(),
		Form:   r.Form,
		Time:   time.Now(),
	}
	s.reqs = append(s.reqs, req)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	rep := s.handler(req)
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if rep.Reset {
		abort(w)
		return
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.CutAfter > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(rep.Body)))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(rep.Body[:min(rep.CutAfter, len(rep.Body))]))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		// A plain close (FIN): the client reads a short body.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(rep.Body))
}

// abort closes the connection with a TCP RST (linger 0).
func abort(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("promfake: connection cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// Requests returns a copy of what was received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// MaxInFlight is the highest number of requests being served at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// ClosedURL returns the URL of a local port nothing listens on (connection
// refused).
func ClosedURL(t testing.TB) string {
	t.Helper()
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("promfake: reserving a port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("promfake: closing the port: %v", err)
	}
	return "http://" + addr
}

// Always answers every request with r.
func Always(r Reply) Handler { return func(Request) Reply { return r } }

// Empty answers every read with an empty success after delay: a vector for
// instant queries, a matrix for range queries (nothing measured).
func Empty(delay time.Duration) Handler {
	return func(r Request) Reply {
		body := Success("vector", "[]")
		if strings.HasSuffix(r.Path, "query_range") {
			body = Success("matrix", "[]")
		}
		return Reply{Body: body, Delay: delay}
	}
}

// Script answers the n-th request with replies[n-1]; the last reply repeats.
func Script(replies ...Reply) Handler {
	return func(r Request) Reply {
		return replies[min(r.N, len(replies))-1]
	}
}

// OK is a 200 answer with body.
func OK(body string) Reply { return Reply{Body: body} }

// HTML is a proxy-style HTML error page (what nginx or a load balancer sends
// when Prometheus is down).
func HTML(status int) Reply {
	text := http.StatusText(status)
	return Reply{
		Status: status,
		Header: http.Header{"Content-Type": {"text/html"}},
		Body: fmt.Sprintf("<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			status, text, status, text),
	}
}

// TooManyRequests is a 429 with the given Retry-After header value ("" for
// none).
func TooManyRequests(retryAfter string) Reply {
	r := Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Content-Type": {"text/plain"}}, Body: "rate limited\n"}
	if retryAfter != "" {
		r.Header.Set("Retry-After", retryAfter)
	}
	return r
}

// APIError is Prometheus's error envelope with the status it uses for the
// error type (400 bad_data, 422 execution, 503 timeout/unavailable, 500
// otherwise).
func APIError(errorType, msg string) Reply {
	status := http.StatusInternalServerError
	switch errorType {
	case "bad_data":
		status = http.StatusBadRequest
	case "execution":
		status = http.StatusUnprocessableEntity
	case "timeout", "unavailable":
		status = http.StatusServiceUnavailable
	case "canceled":
		status = 499
	}
	return Reply{Status: status, Body: `{"status":"error","errorType":` + jsonString(errorType) + `,"error":` + jsonString(msg) + `}`}
}

// Truncated is a 200 whose JSON body stops halfway (Content-Length matches
// what is sent).
func Truncated(body string) Reply { return Reply{Body: body[:len(body)/2]} }

// Oversized is a valid vector answer of at least n bytes (one huge label).
func Oversized(n int) Reply {
	return OK(Success("vector", `[{"metric":{"__name__":"big","pad":"`+strings.Repeat("x", n)+`"},"value":[1700000000,"1"]}]`))
}

// OversizedServer answers every request with a valid-looking answer that
// announces n bytes in Content-Length and streams them (without holding
// them) until the client hangs up; it returns the server's URL.
func OversizedServer(t testing.TB, n int64) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		head := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pad":"`
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		pad := bytes.Repeat([]byte("x"), 64<<10)
		for left := n - int64(len(head)); left > 0; left -= int64(len(pad)) {
			if _, err := w.Write(pad[:min(int64(len(pad)), left)]); err != nil {
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// Point is one [time, "value"] pair; V is the string Prometheus would send
// ("1.5", "NaN", "+Inf", "-Inf").
type Point struct {
	T float64
	V string
}

// Stream is one series of a vector or matrix answer.
type Stream struct {
	Labels map[string]string
	Points []Point // one point for a vector sample
}

// Success is Prometheus's success envelope around a result; warnings are
// added as Thanos and Mimir do for partial data.
func Success(resultType, resultJSON string, warnings ...string) string {
	var b strings.Builder
	b.WriteString(`{"status":"success","data":{"resultType":` + jsonString(resultType) + `,"result":` + resultJSON + `}`)
	if len(warnings) > 0 {
		b.WriteString(`,"warnings":[`)
		for i, w := range warnings {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonString(w))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// Vector renders the result array of a vector answer (first point of each
// stream).
func Vector(streams ...Stream) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range streams {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"metric":`)
		writeLabels(&b, s.Labels)
		b.WriteString(`,"value":`)
		writePoint(&b, s.Points[0])
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// Matrix renders the result array of a matrix answer.
func Matrix(streams ...Stream) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range streams {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"metric":`)
		writeLabels(&b, s.Labels)
		b.WriteString(`,"values":[`)
		for j, p := range s.Points {
			if j > 0 {
				b.WriteByte(',')
			}
			writePoint(&b, p)
		}
		b.WriteString("]}")
	}
	b.WriteByte(']')
	return b.String()
}

// Scalar renders the result of a scalar (or, with resultType "string", a
// string) answer.
func Scalar(p Point) string {
	var b strings.Builder
	writePoint(&b, p)
	return b.String()
}

func writeLabels(b *strings.Builder, ls map[string]string) {
	b.WriteByte('{')
	first := true
	for _, k := range sortedKeys(ls) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(jsonString(k) + ":" + jsonString(ls[k]))
	}
	b.WriteByte('}')
}

func writePoint(b *strings.Builder, p Point) {
	b.WriteString("[" + strconv.FormatFloat(p.T, 'f', -1, 64) + "," + jsonString(p.V) + "]")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
