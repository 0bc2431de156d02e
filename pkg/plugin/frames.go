package plugin

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// Grafana unit ids (datasource.md "Frames").
const (
	unitRatio   = "percentunit" // 0..1 ratios
	unitPercent = "percent"     // stall %
	unitGiB     = "gbytes"
	unitMiB     = "mbytes"
	unitMiBs    = "MiBs"
	unitSeconds = "s"
	unitNone    = "none"
)

// snapshotUnits maps harvest's SnapshotField units to Grafana unit ids.
var snapshotUnits = map[string]string{"MiB": unitMiB, "s": unitSeconds, "MiB/s": unitMiBs, "": unitNone}

// runLabel names a run in legends when a query covers several runs.
func runLabel(e runs.Entry) string {
	parts := []string{}
	for _, s := range []string{e.TestName, e.Tag} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return e.ID
	}
	return strings.Join(parts, " ")
}

// withPrefix prefixes a display name with the run label (multi-run queries).
func withPrefix(label, name string) string {
	if label == "" {
		return name
	}
	return label + " " + name
}

// frameName is the frame's name: the kind plus the run label, if any.
func frameName(kind, label string) string {
	if label == "" {
		return kind
	}
	return kind + " " + label
}

// typed sets a frame's dataplane type (datasource.md "Frames for alerting,
// recording rules and SQL expressions"): the time-series and numeric kinds
// with type version 0.1, which Grafana's server-side expressions need on
// the first frame of a response; a table (not a dataplane kind) without a
// version.
func typed(f *data.Frame, t data.FrameType) *data.Frame {
	if f.Meta == nil {
		f.Meta = &data.FrameMeta{}
	}
	f.Meta.Type, f.Meta.TypeVersion = t, data.FrameTypeVersion{}
	if k := t.Kind(); k == data.KindTimeSeries || k == data.KindNumeric {
		f.Meta.TypeVersion = data.FrameTypeVersion{0, 1}
	}
	return f
}

// numericWide is a one-row summary: numeric-wide (string fields beside the
// numbers are ignored by expressions).
func numericWide(f *data.Frame) *data.Frame { return typed(f, data.FrameTypeNumericWide) }

// timeSeriesWide is a wide time series: the time field first, labels on
// the number fields.
func timeSeriesWide(f *data.Frame) *data.Frame { return typed(f, data.FrameTypeTimeSeriesWide) }

// table is a per-run, per-step or per-key table.
func table(f *data.Frame) *data.Frame { return typed(f, data.FrameTypeTable) }

// configured sets a field's display name and unit.
func configured(f *data.Field, display, unit string) *data.Field {
	f.SetConfig(&data.FieldConfig{DisplayNameFromDS: display, Unit: unit})
	return f
}

func timeField(ts []int64) *data.Field {
	v := make([]time.Time, len(ts))
	for i, t := range ts {
		v[i] = time.Unix(t, 0).UTC()
	}
	return data.NewField("time", nil, v)
}

// nullableTime is a nullable time field (a run's end may be unknown).
func nullableTime(name string, v []*time.Time) *data.Field { return data.NewField(name, nil, v) }

func unixPtr(t int64, ok bool) *time.Time {
	if !ok {
		return nil
	}
	v := time.Unix(t, 0).UTC()
	return &v
}

// summaryFields is P as one-row nullable number fields min … avg.
func summaryFields(s percentile.Summary, label, what, unit string) []*data.Field {
	vals := s.Values()
	out := make([]*data.Field, len(percentile.Keys()))
	for i, k := range percentile.Keys() {
		out[i] = configured(data.NewField(k, nil, []*float64{vals[i]}), withPrefix(label, what+" "+k), unit)
	}
	return out
}

func intPtrToInt64(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

// seriesFrame is a wide time series frame of several series joined on
// their timestamps (a series without a sample at an instant is null there).
// names are the fields' names; labels their Grafana labels.
func seriesFrame(name string, series [][]sample, names, displays []string, labels []data.Labels, unit string) *data.Frame {
	idx := map[int64]int{}
	var ts []int64
	for _, s := range series {
		for _, p := range s {
			if _, ok := idx[p.t]; !ok {
				idx[p.t] = 0
				ts = append(ts, p.t)
			}
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	for i, t := range ts {
		idx[t] = i
	}
	fields := []*data.Field{timeField(ts)}
	for i, s := range series {
		vals := make([]*float64, len(ts))
		for _, p := range s {
			v := p.v
			vals[idx[p.t]] = &v
		}
		f := data.NewField(names[i], labels[i], vals)
		fields = append(fields, configured(f, displays[i], unit))
	}
	return data.NewFrame(name, fields...)
}

// sample is a point of a frame series.
type sample struct {
	t int64
	v float64
}

// runNote is a notice about one run: the run's id is a field, not part of
// the text, so that a frame over many runs says an equal text once.
type runNote struct {
	run  string // the run's id; "" for a notice about no one run
	text string // what is said, without the run's id
	warn bool   // a warning (a harvest notice) rather than a caveat
}

// note is a notice about no one run.
func note(text string) runNote { return runNote{text: text} }

// notesOf are texts about run id (problems of its stored artifacts).
func notesOf(id string, texts []string) []runNote {
	out := make([]runNote, len(texts))
	for i, t := range texts {
		out[i] = runNote{run: id, text: t}
	}
	return out
}

// mergedExamples is how many run ids a merged notice names.
const mergedExamples = 3

// mergeNotes are the frame notices of notes in order of first appearance:
// equal texts merge into one notice of the highest severity among them; a
// text of one run says "run <id>: <text>", of several "<text> (N runs,
// e.g. a, b, c)" with the first ids in the order the notes came (run
// order).
func mergeNotes(notes []runNote) []data.Notice {
	type group struct {
		warn bool
		text string
		runs []string
	}
	var groups []*group
	index := map[string]*group{}
	for _, n := range notes {
		g, ok := index[n.text]
		if !ok {
			g = &group{text: n.text}
			index[n.text] = g
			groups = append(groups, g)
		}
		g.warn = g.warn || n.warn
		if n.run != "" && !slices.Contains(g.runs, n.run) {
			g.runs = append(g.runs, n.run)
		}
	}
	out := make([]data.Notice, len(groups))
	for i, g := range groups {
		text := g.text
		switch len(g.runs) {
		case 0:
		case 1:
			text = "run " + g.runs[0] + ": " + text
		default:
			text = fmt.Sprintf("%s (%d runs, e.g. %s)", text, len(g.runs), strings.Join(g.runs[:min(len(g.runs), mergedExamples)], ", "))
		}
		out[i] = data.Notice{Severity: data.NoticeSeverityInfo, Text: text}
		if g.warn {
			out[i].Severity = data.NoticeSeverityWarning
		}
	}
	return out
}

// noticesMeta turns run caveats and harvest notices into frame notices.
func noticesMeta(notes []runNote, ns []harvest.Notice) []data.Notice {
	for _, n := range ns {
		notes = append(notes, runNote{text: n.String(), warn: true})
	}
	return mergeNotes(notes)
}

// setMeta puts the executed PromQL on every frame (the query inspector
// shows it per frame) and the notices on the first one only.
func setMeta(frames []*data.Frame, queries []string, notices []data.Notice) {
	for i, f := range frames {
		if f.Meta == nil {
			f.Meta = &data.FrameMeta{}
		}
		f.Meta.ExecutedQueryString = strings.Join(queries, "\n")
		if i == 0 {
			f.Meta.Notices = append(f.Meta.Notices, notices...)
		}
	}
}
