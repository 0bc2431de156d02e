package thanostest

import (
	"math"
	"reflect"
)

// FarValues counts the numbers of a and b, decoded JSON of the same shape,
// that differ by more than rel (relative), and the numbers compared; a
// difference of shape or of a value that is not a number counts as one far
// value. Thanos Query's answers over the
// same samples match Prometheus's in all but a few floating-point values
// (docs/backends.md), so its tests compare with it.
func FarValues(a, b any, rel float64) (far, numbers int) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return 1, 0
		}
		for k := range av {
			f, n := FarValues(av[k], bv[k], rel)
			far, numbers = far+f, numbers+n
		}
		return far, numbers
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return 1, 0
		}
		for i := range av {
			f, n := FarValues(av[i], bv[i], rel)
			far, numbers = far+f, numbers+n
		}
		return far, numbers
	case float64:
		bv, ok := b.(float64)
		if !ok || math.Abs(av-bv) > rel*math.Max(math.Abs(av), math.Abs(bv)) {
			return 1, 1
		}
		return 0, 1
	}
	if !reflect.DeepEqual(a, b) {
		return 1, 0
	}
	return 0, 0
}
