package promql

import (
	"sort"
	"strings"
)

// labelKey is a canonical identity of a label set (sorted name/value pairs;
// 0xff cannot occur in valid UTF-8 label names or values).
func labelKey(ls map[string]string) string {
	names := sortedKeys(ls)
	n := 0
	for _, k := range names {
		n += len(k) + len(ls[k]) + 2
	}
	var b strings.Builder
	b.Grow(n)
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte(0xff)
		b.WriteString(ls[k])
		b.WriteByte(0xff)
	}
	return b.String()
}

// sortedKeys is m's keys in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compareLabels orders label sets like Prometheus's labels.Compare (pairwise
// over sorted names: name first, then value; a prefix sorts first), which is
// the order of a Prometheus range-query matrix.
func compareLabels(an []string, a map[string]string, bn []string, b map[string]string) int {
	for i := 0; i < len(an) && i < len(bn); i++ {
		if an[i] != bn[i] {
			return strings.Compare(an[i], bn[i])
		}
		if c := strings.Compare(a[an[i]], b[bn[i]]); c != 0 {
			return c
		}
	}
	return len(an) - len(bn)
}

// sortSeries sorts by label set (see compareLabels).
func sortSeries[T any](items []T, labels func(*T) map[string]string) {
	names := make([][]string, len(items))
	idx := make([]int, len(items))
	for i := range items {
		names[i] = sortedKeys(labels(&items[i]))
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool {
		i, j := idx[x], idx[y]
		return compareLabels(names[i], labels(&items[i]), names[j], labels(&items[j])) < 0
	})
	sorted := make([]T, len(items))
	for k, i := range idx {
		sorted[k] = items[i]
	}
	copy(items, sorted)
}

// Key is a canonical identity of the series' label set, for callers that
// fold RangeEach chunks per series.
func (s Series) Key() string { return labelKey(s.Labels) }

// SortSeries sorts series by label set the way Prometheus sorts a matrix.
func SortSeries(series []Series) {
	sortSeries(series, func(s *Series) map[string]string { return s.Labels })
}
