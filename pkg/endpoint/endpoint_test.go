package endpoint

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, r := range []struct{ in, want string }{
		{"http://prometheus:9090", "http://prometheus:9090"},
		{"https://user:secret@mimir.example/prometheus?X-Amz-Signature=abc&token=t#frag", "https://mimir.example/prometheus"},
		{"http://prom:9090/?", "http://prom:9090/"},
		{"gs://bucket/bench?credentials=x", "gs://bucket/bench"},
		{"http://[::1]:%zz", "unparseable URL"},
	} {
		if got := Redact(r.in); got != r.want {
			t.Errorf("Redact(%q) = %q, want %q", r.in, got, r.want)
		}
	}
}

func TestIsHTTP(t *testing.T) {
	for _, r := range []struct {
		in   string
		want bool
	}{
		{"http://prometheus:9090", true},
		{"https://mimir.example/prometheus?x=1", true},
		{"http://[::1]:9090/", true},
		{"prometheus:9090", false},
		{"ftp://prometheus:9090", false},
		{"http://", false},
		{"http:///path", false},
		{"", false},
		{"http://[::1]:%zz", false},
		{"/var/prometheus", false},
	} {
		if got := IsHTTP(r.in); got != r.want {
			t.Errorf("IsHTTP(%q) = %v, want %v", r.in, got, r.want)
		}
	}
}

type timeoutCause struct{}

func (timeoutCause) Error() string { return "i/o timeout" }
func (timeoutCause) Timeout() bool { return true }

func TestRedactError(t *testing.T) {
	raw := &url.Error{Op: "Post", URL: "http://bob:hunter2@127.0.0.1:9/prom/api/v1/query?access_token=TOPSECRET", Err: timeoutCause{}}
	got := RedactError(fmt.Errorf("reading: %w", raw))
	if want := `Post "http://127.0.0.1:9/prom/api/v1/query": i/o timeout`; got.Error() != want {
		t.Errorf("RedactError = %q, want %q", got, want)
	}
	var ue *url.Error
	if !errors.As(got, &ue) || !ue.Timeout() || !errors.Is(got, timeoutCause{}) {
		t.Errorf("RedactError lost the cause or its timeout: %#v", got)
	}
	plain := errors.New("plain")
	if RedactError(plain) != plain {
		t.Error("an error without a URL changed")
	}
}

func TestSameOriginRedirects(t *testing.T) {
	check := SameOriginRedirects("Prometheus")
	for _, r := range []struct {
		from, to string
		refused  string // the error, "" when followed
	}{
		{"http://prom:9090/x", "http://prom:9090/y?z=1", ""},
		{"http://prom/x", "http://PROM:80/y", ""},
		{"https://prom/x", "https://prom:443/y", ""},
		{"http://prom:9090/x", "http://prom:9091/x", "Prometheus at prom:9090 redirected to http://prom:9091: not followed"},
		{"http://prom:9090/x", "https://prom:9090/x", "Prometheus at prom:9090 redirected to https://prom:9090: not followed"},
		{"http://prom/x", "http://evil/x", "Prometheus at prom redirected to http://evil: not followed"},
		{"http://prom/x", "http://u:pw@evil:81/x?token=t", "Prometheus at prom redirected to http://evil:81: not followed"},
	} {
		from, _ := http.NewRequest(http.MethodGet, r.from, nil)
		to, _ := http.NewRequest(http.MethodGet, r.to, nil)
		err := check(to, []*http.Request{from})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != r.refused {
			t.Errorf("%s -> %s: %q, want %q", r.from, r.to, got, r.refused)
		}
	}
	from, _ := http.NewRequest(http.MethodGet, "http://prom/x", nil)
	via := make([]*http.Request, 10)
	for i := range via {
		via[i] = from
	}
	if err := check(from, via); err == nil {
		t.Error("an 11th same-origin redirect was followed")
	}
}
