package promql

import "testing"

func TestRedactURL(t *testing.T) {
	for _, r := range []struct{ in, want string }{
		{"http://prometheus:9090", "http://prometheus:9090"},
		{"https://user:secret@mimir.example/prometheus?X-Amz-Signature=abc&token=t#frag", "https://mimir.example/prometheus"},
		{"http://prom:9090/?", "http://prom:9090/"},
		{"gs://bucket/bench?credentials=x", "gs://bucket/bench"},
		{"http://[::1]:%zz", "unparseable URL"},
	} {
		if got := RedactURL(r.in); got != r.want {
			t.Errorf("RedactURL(%q) = %q, want %q", r.in, got, r.want)
		}
	}
}
