package promql

import (
	"errors"
	"fmt"
	"strings"
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
