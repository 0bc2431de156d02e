package endpoint

import "testing"

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
