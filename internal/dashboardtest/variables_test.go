package dashboardtest

import (
	"net/url"
	"regexp"
	"strings"
)

// builtinVars are Grafana's own $__ variables and macros the dashboards use.
var builtinVars = []string{"__all", "__value", "__data", "__url_time_range", "__from", "__to", "__interval", "__range"}

// varRefRe finds $name, ${name...} and [[name]].
var varRefRe = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)([.:][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\[\[([A-Za-z_][A-Za-z0-9_]*)\]\]`)

// strings walks every string of a JSON document (markdown included).
func jsonStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			jsonStrings(e, f)
		}
	case map[string]any:
		for _, e := range x {
			jsonStrings(e, f)
		}
	}
}

// varRefs returns the variable names a string references.
func varRefs(s string) []string {
	var out []string
	for _, m := range varRefRe.FindAllStringSubmatch(s, -1) {
		for _, g := range []string{m[1], m[3], m[4]} {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// dashVars is the resolved value of each variable.
type dashVars map[string][]string

// interpolate replaces variables the way Grafana's template service does
// for the formats the dashboards use; several values are joined with join.
func (vs dashVars) interpolate(s, join string) string {
	return varRefRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRefRe.FindStringSubmatch(m)
		name := sub[1] + sub[3] + sub[4]
		vals, ok := vs[name]
		if !ok {
			return m
		}
		if strings.HasPrefix(sub[2], ":") {
			switch sub[2][1:] {
			case "percentencode":
				out := make([]string, len(vals))
				for i, v := range vals {
					out[i] = encodeURIComponent(v)
				}
				return strings.Join(out, ",")
			case "csv":
				return strings.Join(vals, ",")
			}
		}
		return strings.Join(vals, join)
	})
}

// encodeURIComponent is JavaScript's (Grafana's percentencode format).
func encodeURIComponent(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}
