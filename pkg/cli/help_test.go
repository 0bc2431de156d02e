package cli

import (
	"strings"
	"testing"
	"time"
)

func TestWriteFlags(t *testing.T) {
	fs := NewFlagSet("t")
	var on, off bool
	var s, url string
	var n int
	var d time.Duration
	fs.BoolVar(&on, "report", true, "write the report")
	fs.BoolVar(&off, "verbose", false, "say more")
	fs.StringVar(&s, "baseline-store", "", "results store of --baseline-run (default --store)")
	fs.IntVar(&n, "fail-recent", -1, "newest N runs (default --min-runs)")
	fs.DurationVar(&d, "timeout", 0, "request timeout")
	Prometheus{URL: &url, DefaultURL: "http://p:9090"}.AddTo(fs)
	AddNegations(fs)
	SetGroup(fs, GroupOutput, "report", "verbose")
	var b strings.Builder
	WriteFlags(&b, fs)
	got := b.String()
	t.Logf("\n%s", got)
	for _, tc := range []struct{ name, want string }{
		{"switch on, no [=true|false]", "      --report                  write the report (default true)\n"},
		{"switch off, no default", "      --verbose                 say more\n"},
		{"a worded default is not repeated", "--fail-recent int         newest N runs (default --min-runs)\n"},
		{"string default", "--baseline-store string   results store of --baseline-run (default --store)\n"},
		{"zero duration left out", "--timeout duration        request timeout\n"},
		{"quoted string default", `(default "http://p:9090")`},
	} {
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: lacks %q", tc.name, tc.want)
		}
	}
	// Sections in their order, the flags of no group last; negations hidden.
	p, o, f := strings.Index(got, "\nPrometheus:\n"), strings.Index(got, "\nOutput:\n"), strings.Index(got, "\nFlags:\n")
	if p < 0 || o < p || f < o || strings.Contains(got, "no-report") {
		t.Errorf("sections out of order or negation shown:\n%s", got)
	}
}
