package runs

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestParseRunID(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want RunID
		bad  bool
	}{
		{"store id", "resume-storm/1767225600/abc123", RunID{Kind: KindStore, TestName: "resume-storm", RunTS: 1767225600, Tag: "abc123"}, false},
		{"escaped parts", "my%20test/1767225600/v1.2%2Brc", RunID{Kind: KindStore, TestName: "my test", RunTS: 1767225600, Tag: "v1.2+rc"}, false},
		{"prometheus id", "prom-1767225600", RunID{Kind: KindProm, RunTS: 1767225600}, false},
		{"latest", "latest", RunID{Kind: KindLatest}, false},
		{"range", "range", RunID{Kind: KindRange}, false},
		{"dot dot traversal", "../../etc", RunID{}, true},
		{"dot dot as test", "../1/tag", RunID{}, true},
		{"dot dot as tag", "t/1/..", RunID{}, true},
		{"single dot", "./1/tag", RunID{}, true},
		{"escaped dot dot", "%2e%2e/1/tag", RunID{}, true},
		{"escaped slash in test", "a%2Fb/1/tag", RunID{}, true},
		{"escaped backslash", "a%5Cb/1/tag", RunID{}, true},
		{"backslash", `a\..\b/1/tag`, RunID{}, true},
		{"absolute path", "/etc/1/passwd", RunID{}, true},
		{"file scheme", "file:///etc/passwd", RunID{}, true},
		{"gs scheme", "gs://bucket/1/x", RunID{}, true},
		{"too many parts", "a/1/b/c", RunID{}, true},
		{"too few parts", "a/1", RunID{}, true},
		{"empty", "", RunID{}, true},
		{"empty test", "/1/tag", RunID{}, true},
		{"empty tag", "t/1/", RunID{}, true},
		{"signed ts", "t/-1/tag", RunID{}, true},
		{"plus ts", "t/+1/tag", RunID{}, true},
		{"hex ts", "t/0x10/tag", RunID{}, true},
		{"huge ts", "t/99999999999999999999/tag", RunID{}, true},
		{"bad escape", "t%zz/1/tag", RunID{}, true},
		{"nul byte", "t%00/1/tag", RunID{}, true},
		{"newline", "t\n/1/tag", RunID{}, true},
		{"invalid utf8", "t\xff/1/tag", RunID{}, true},
		{"unresolved variable", "$run", RunID{}, true},
		{"prom non numeric", "prom-abc", RunID{}, true},
		{"prom negative", "prom--5", RunID{}, true},
		{"prom empty", "prom-", RunID{}, true},
		{"too long", strings.Repeat("a", 2000) + "/1/t", RunID{}, true},
		{"long segment", strings.Repeat("a", 256) + "/1/t", RunID{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRunID(tc.raw)
			if tc.bad {
				if err == nil {
					t.Fatalf("ParseRunID(%q) = %+v, want an error", tc.raw, got)
				}
				if !errors.Is(err, ErrInvalidRunID) {
					t.Fatalf("error %v does not wrap ErrInvalidRunID", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRunID(%q): %v", tc.raw, err)
			}
			if got != tc.want {
				t.Fatalf("ParseRunID(%q) = %+v, want %+v", tc.raw, got, tc.want)
			}
		})
	}
}

func TestRunIDRoundTrip(t *testing.T) {
	tests := []RunID{
		{Kind: KindStore, TestName: "resume storm", RunTS: 1, Tag: "feature-x"},
		{Kind: KindStore, TestName: "a+b?c#d%e", RunTS: 1767225600, Tag: "ü"},
		{Kind: KindProm, RunTS: 1767225600},
		{Kind: KindLatest},
		{Kind: KindRange},
	}
	for _, want := range tests {
		got, err := ParseRunID(want.String())
		if err != nil {
			t.Fatalf("ParseRunID(%q): %v", want.String(), err)
		}
		if got != want {
			t.Fatalf("round trip of %+v gave %+v", want, got)
		}
	}
}

// FuzzParseRunID checks the safety property: any id that parses as a store
// id yields segments that, joined under a prefix, stay under that prefix
// and are unchanged by path cleaning; and it formats back to an id that
// parses to the same value.
func FuzzParseRunID(f *testing.F) {
	for _, s := range []string{
		"resume-storm/1767225600/abc123", "my%20test/1/v1.2%2Brc", "prom-1767225600", "latest", "range",
		"../../etc", "%2e%2e/1/x", "a%2Fb/1/x", "/etc/1/passwd", "file:///etc/passwd", `a\b/1/c`,
		"t/0x10/x", "t%00/1/x", "%252e%252e/1/x", "./1/.", "prom-", "$run", "t/1/%C3%BC",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := ParseRunID(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidRunID) {
				t.Fatalf("error %v does not wrap ErrInvalidRunID", err)
			}
			return
		}
		if id.Kind != KindStore {
			return
		}
		const prefix = "results/runs"
		key := prefix + "/" + id.TestName + "/run_ts=1/run_tag=" + id.Tag + "/"
		if cleaned := path.Clean(key) + "/"; cleaned != key {
			t.Fatalf("id %q: key %q changes under path.Clean (%q)", raw, key, cleaned)
		}
		if !strings.HasPrefix(path.Clean(key), prefix+"/") {
			t.Fatalf("id %q escapes the prefix: %q", raw, key)
		}
		if strings.Count(id.TestName, "/")+strings.Count(id.Tag, "/") != 0 {
			t.Fatalf("id %q: segment holds a slash", raw)
		}
		again, err := ParseRunID(id.String())
		if err != nil || again != id {
			t.Fatalf("id %q: String() %q re-parses to %+v, %v", raw, id.String(), again, err)
		}
	})
}
