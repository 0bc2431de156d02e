package oracle

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/substrate/density/internal/simrun"
)

// step is the range-query step, seconds.
const step = 10

// Store holds exported series in Prometheus storage order (labels.Compare
// over the labels with __name__), the order 2.42 feeds aggregations in.
type Store struct{ series []simrun.ExportedSeries }

// NewStore orders series (copied, samples shared) as Prometheus stores them.
func NewStore(series []simrun.ExportedSeries) *Store {
	s := append([]simrun.ExportedSeries(nil), series...)
	sort.SliceStable(s, func(a, b int) bool { return compareLabels(withName(s[a]), withName(s[b])) < 0 })
	return &Store{series: s}
}

func withName(e simrun.ExportedSeries) map[string]string {
	m := make(map[string]string, len(e.Labels)+1)
	for k, v := range e.Labels {
		m[k] = v
	}
	m["__name__"] = e.Name
	return m
}

// compareLabels is labels.Compare: pairwise over name-sorted labels.
func compareLabels(a, b map[string]string) int {
	ka, kb := sortedNames(a), sortedNames(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if ka[i] != kb[i] {
			return strings.Compare(ka[i], kb[i])
		}
		if c := strings.Compare(a[ka[i]], b[kb[i]]); c != 0 {
			return c
		}
	}
	return len(ka) - len(kb)
}

func sortedNames(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func lkey(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedNames(m) {
		b.WriteString(k + "=" + strconv.Quote(m[k]) + ",")
	}
	return b.String()
}

// matcher is one label matcher (__name__ matches the series name); regexes
// are fully anchored as in PromQL.
type matcher struct {
	name, op, value string
}

func eq(n, v string) matcher { return matcher{n, "=", v} }
func re(n, v string) matcher { return matcher{n, "=~", v} }

func (m matcher) match(e simrun.ExportedSeries) bool {
	v := e.Labels[m.name]
	if m.name == "__name__" {
		v = e.Name
	}
	switch m.op {
	case "=":
		return v == m.value
	case "=~":
		return regexp.MustCompile("^(?:" + m.value + ")$").MatchString(v)
	}
	panic("matcher op " + m.op)
}

func (st *Store) sel(ms ...matcher) []simrun.ExportedSeries {
	var out []simrun.ExportedSeries
outer:
	for _, s := range st.series {
		for _, m := range ms {
			if !m.match(s) {
				continue outer
			}
		}
		out = append(out, s)
	}
	return out
}

// elem is an instant-vector element; its labels never hold __name__ (no
// rule here groups or joins by it).
type elem struct {
	Labels map[string]string
	V      float64
}

// gaugeVec is the instant selector at t (simrun's lookback value).
func gaugeVec(series []simrun.ExportedSeries, t int64) []elem {
	var out []elem
	for _, s := range series {
		if v, ok := s.At(t, simrun.DefaultLookback); ok {
			out = append(out, elem{s.Labels, v})
		}
	}
	return out
}

// rateVec is rate(series[rng]) at t (simrun's extrapolatedRate).
func rateVec(series []simrun.ExportedSeries, t, rng int64) []elem {
	var out []elem
	for _, s := range series {
		if v, ok := s.Rate(t, rng); ok {
			out = append(out, elem{s.Labels, v})
		}
	}
	return out
}

// groupLabels keeps the non-empty `by` labels.
func groupLabels(l map[string]string, by []string) map[string]string {
	m := map[string]string{}
	for _, k := range by {
		if v := l[k]; v != "" {
			m[k] = v
		}
	}
	return m
}

// aggregate is 2.42's aggregation for sum, max and count: input in storage
// order, first value then `+=` (no Kahan summation before 2.50).
func aggregate(op string, vec []elem, by ...string) []elem {
	idx := map[string]int{}
	var out []elem
	for _, e := range vec {
		g := groupLabels(e.Labels, by)
		k := lkey(g)
		i, ok := idx[k]
		if !ok {
			v := e.V
			if op == "count" {
				v = 1
			}
			idx[k] = len(out)
			out = append(out, elem{g, v})
			continue
		}
		switch op {
		case "sum":
			out[i].V += e.V
		case "max":
			if out[i].V < e.V || math.IsNaN(out[i].V) {
				out[i].V = e.V
			}
		case "count":
			out[i].V++
		}
	}
	return out
}

func scaleVec(vec []elem, k float64) []elem {
	out := make([]elem, len(vec))
	for i, e := range vec {
		out[i] = elem{e.Labels, e.V * k}
	}
	return out
}

func gtZero(vec []elem) []elem {
	var out []elem
	for _, e := range vec {
		if e.V > 0 {
			out = append(out, e)
		}
	}
	return out
}

// andOn is `l and on (on) r`: the left elements whose on-signature appears
// on the right.
func andOn(l, r []elem, on ...string) []elem {
	sig := func(m map[string]string) string {
		var b strings.Builder
		for _, k := range on {
			b.WriteString(k + "=" + strconv.Quote(m[k]) + ",")
		}
		return b.String()
	}
	right := map[string]bool{}
	for _, e := range r {
		right[sig(e.Labels)] = true
	}
	var out []elem
	for _, e := range l {
		if right[sig(e.Labels)] {
			out = append(out, e)
		}
	}
	return out
}

// rangeEval evaluates f on the grid start, start+10, ... <= end (end <= start
// → start+1) and joins the finite elements into series by labels.
func rangeEval(start, end int64, f func(t int64) []elem) []simrun.ExportedSeries {
	if end <= start {
		end = start + 1
	}
	idx := map[string]int{}
	var out []simrun.ExportedSeries
	for t := start; t <= end; t += step {
		for _, e := range f(t) {
			if math.IsNaN(e.V) || math.IsInf(e.V, 0) {
				continue
			}
			k := lkey(e.Labels)
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, simrun.ExportedSeries{Labels: e.Labels})
			}
			out[i].Samples = append(out[i].Samples, simrun.Sample{T: t, V: e.V})
		}
	}
	return out
}
