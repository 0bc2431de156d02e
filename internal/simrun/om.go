package simrun

import (
	"bufio"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Label is one label pair; empty values are dropped when written.
type Label struct{ Name, Value string }

// omWriter streams an OpenMetrics file family by family. Each series is
// written in full (time-ordered) before the next; a histogram writes all
// buckets, _sum and _count of one timestamp together (one MetricPoint).
type omWriter struct {
	w      *bufio.Writer
	record bool
	out    []ExportedSeries
	line   []byte
}

func (o *omWriter) family(name, typ string) {
	o.w.WriteString("# TYPE ")
	o.w.WriteString(name)
	o.w.WriteByte(' ')
	o.w.WriteString(typ)
	o.w.WriteByte('\n')
}

func (o *omWriter) eof() { o.w.WriteString("# EOF\n") }

func cleanLabels(ls []Label) []Label {
	out := make([]Label, 0, len(ls))
	for _, l := range ls {
		if l.Value != "" {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func labelMap(ls []Label) map[string]string {
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

func seriesKey(name string, m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(m[k])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// FormatValue writes a sample value the way Go's Prometheus client does;
// it round-trips exactly through strconv.ParseFloat.
func FormatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

func (o *omWriter) prefix(name string, ls []Label) []byte {
	b := append(o.line[:0], name...)
	if len(ls) > 0 {
		b = append(b, '{')
		for i, l := range ls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l.Name...)
			b = append(b, '=', '"')
			b = appendEscaped(b, l.Value)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return b
}

func (o *omWriter) sample(prefix []byte, s Sample) {
	b := append(prefix, ' ')
	b = append(b, FormatValue(s.V)...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, s.T, 10)
	b = append(b, '\n')
	o.w.Write(b)
}

// series writes one counter or gauge series (name includes any _total).
func (o *omWriter) series(name string, labels []Label, samples []Sample) {
	if len(samples) == 0 {
		return
	}
	ls := cleanLabels(labels)
	p := o.prefix(name, ls)
	n := len(p)
	for _, s := range samples {
		o.sample(p[:n], s)
	}
	o.line = p
	if o.record {
		o.out = append(o.out, ExportedSeries{Name: name, Labels: labelMap(ls), Samples: append([]Sample(nil), samples...)})
	}
}

// histPoint is one MetricPoint of a histogram: cumulative bucket counts
// (one per bound, +Inf last), sum and count. nan marks a staleness marker.
type histPoint struct {
	t      int64
	counts []float64
	sum    float64
	nan    bool
}

func formatLE(b float64) string {
	if math.IsInf(b, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(b, 'g', -1, 64)
}

// histogram writes one histogram metric (bounds end with +Inf).
func (o *omWriter) histogram(base string, labels []Label, bounds []float64, pts []histPoint) {
	if len(pts) == 0 {
		return
	}
	ls := cleanLabels(labels)
	nb := len(bounds)
	prefixes := make([][]byte, nb+2)
	for i, b := range bounds {
		withLE := cleanLabels(append(append([]Label(nil), ls...), Label{"le", formatLE(b)}))
		prefixes[i] = append([]byte(nil), o.prefix(base+"_bucket", withLE)...)
	}
	prefixes[nb] = append([]byte(nil), o.prefix(base+"_sum", ls)...)
	prefixes[nb+1] = append([]byte(nil), o.prefix(base+"_count", ls)...)
	var rec [][]Sample
	if o.record {
		rec = make([][]Sample, nb+2)
	}
	for _, p := range pts {
		for i := 0; i < nb+2; i++ {
			var v float64
			switch {
			case p.nan:
				v = math.NaN()
			case i < nb:
				v = p.counts[i]
			case i == nb:
				v = p.sum
			default:
				v = p.counts[nb-1]
			}
			s := Sample{T: p.t, V: v}
			o.sample(append(o.line[:0], prefixes[i]...), s)
			if o.record {
				rec[i] = append(rec[i], s)
			}
		}
	}
	if o.record {
		for i := 0; i < nb+2; i++ {
			name, m := base+"_bucket", labelMap(ls)
			switch {
			case i < nb:
				m["le"] = formatLE(bounds[i])
			case i == nb:
				name = base + "_sum"
			default:
				name = base + "_count"
			}
			o.out = append(o.out, ExportedSeries{Name: name, Labels: m, Samples: rec[i]})
		}
	}
}
