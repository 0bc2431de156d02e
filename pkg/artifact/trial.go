package artifact

import (
	"strconv"
	"strings"
)

// FlatTrialMeasurements are a trial_summary row's measurements with the
// reference runner's nesting undone: the keys of its raw_configuration and
// frontiers objects become top-level keys (its ap_ratio_* are this
// project's actors_per_pod_*), numbers become the strings this project
// writes. A key the row also has at the top level keeps that value.
func FlatTrialMeasurements(m Object) Object {
	out := make(Object, 0, len(m))
	nested := Object{}
	for _, f := range m {
		if o, ok := f.Value.(Object); ok && (f.Key == "raw_configuration" || f.Key == "frontiers") {
			for _, g := range o {
				k := g.Key
				if rest, ok := strings.CutPrefix(k, "ap_ratio_"); ok {
					k = "actors_per_pod_" + rest
				}
				nested = append(nested, Field{k, measurementString(g.Value)})
			}
			continue
		}
		out = append(out, f)
	}
	for _, f := range nested {
		if _, ok := out.Get(f.Key); !ok {
			out = append(out, f)
		}
	}
	return out
}

// measurementString is a decoded JSON value as a row measurement: strings
// and null as they are, numbers and booleans as Python's str() writes them,
// anything else null.
func measurementString(v any) any {
	switch x := v.(type) {
	case nil, string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return FormatFloat(x)
	case Number:
		return string(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return nil
}
