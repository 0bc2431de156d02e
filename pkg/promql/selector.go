package promql

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// PlainSelector checks that sel is a plain series selector, the form
// WindowGrowth takes: `name`, `name{matchers}` or `{matchers}` (no function,
// range, offset or @), using the same matcher parser as the growth reads.
func PlainSelector(sel string) error {
	s := strings.TrimSpace(sel)
	if s == "" {
		return errors.New("empty selector")
	}
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == ':' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (i > 0 && s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	name, rest := s[:i], strings.TrimSpace(s[i:])
	if rest == "" {
		if name == "" {
			return fmt.Errorf("%q is not a series selector", sel)
		}
		return nil
	}
	ms, ok := splitMatchers(rest)
	if !ok {
		return fmt.Errorf("%q is not a plain series selector (name{label=\"value\", ...})", sel)
	}
	if name == "" && len(ms) == 0 {
		return fmt.Errorf("%q selects nothing by name or label", sel)
	}
	return nil
}

// withMatcher adds one label matcher to a plain selector.
func withMatcher(sel, m string) string {
	if strings.HasSuffix(sel, "}") {
		body := strings.TrimRightFunc(sel[:len(sel)-1], unicode.IsSpace)
		if strings.HasSuffix(body, "{") || strings.HasSuffix(body, ",") {
			return body + m + "}"
		}
		return body + ", " + m + "}"
	}
	return sel + "{" + m + "}"
}

// withName narrows a braced selector to some of the metric names it matches:
// its own __name__ matchers are dropped and m (a matcher on __name__ that
// admits only names sel matches, so the result selects the same series as
// sel plus m) goes first. One name matcher rather than two because
// VictoriaMetrics (v1.8x, checked against /usr/bin/victoria-metrics) answers
// nothing, without an error, for a selector holding two __name__ matchers and
// another label matcher unless the exact name comes first: e.g.
// {__name__=~"a_(sum|count)", job="x", __name__="a_sum"} is empty there. A
// selector this parser does not understand gets m appended, which Prometheus
// reads the same way.
func withName(sel, m string) string {
	ms, ok := splitMatchers(sel)
	if !ok {
		return withMatcher(sel, m)
	}
	out := []string{m}
	for _, x := range ms {
		if x.label != "__name__" {
			out = append(out, x.text)
		}
	}
	return "{" + strings.Join(out, ", ") + "}"
}

// matcherText is one label matcher of a selector, as written.
type matcherText struct{ label, text string }

// splitMatchers splits a braced selector `{l op "v", ...}` into its matchers
// (values quoted with ", ' or `, backslash escapes inside the first two).
// ok is false for anything else, including a selector with a metric name
// before the brace.
func splitMatchers(sel string) (ms []matcherText, ok bool) {
	s := strings.TrimSpace(sel)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	i := 0
	skip := func() {
		for i < len(body) && strings.IndexByte(" \t\r\n", body[i]) >= 0 {
			i++
		}
	}
	isName := func(c byte, first bool) bool {
		return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
	}
	for {
		skip()
		if i == len(body) {
			return ms, true
		}
		start := i
		for i < len(body) && isName(body[i], i == start) {
			i++
		}
		if i == start {
			return nil, false
		}
		label := body[start:i]
		skip()
		switch {
		case strings.HasPrefix(body[i:], "=~"), strings.HasPrefix(body[i:], "!="), strings.HasPrefix(body[i:], "!~"):
			i += 2
		case strings.HasPrefix(body[i:], "="):
			i++
		default:
			return nil, false
		}
		skip()
		if i == len(body) {
			return nil, false
		}
		q := body[i]
		if q != '"' && q != '\'' && q != '`' {
			return nil, false
		}
		for i++; i < len(body) && body[i] != q; i++ {
			if body[i] == '\\' && q != '`' {
				i++
			}
		}
		if i >= len(body) {
			return nil, false
		}
		i++
		ms = append(ms, matcherText{label, body[start:i]})
		skip()
		if i == len(body) {
			return ms, true
		}
		if body[i] != ',' {
			return nil, false
		}
		i++
	}
}

// alternation is a regex matching exactly the given strings (Prometheus
// anchors label regexes).
func alternation(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(q, "|")
}
