package ladder

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// Row metrics.
const (
	MetricStepPrefix = artifact.MetricLadderStepPrefix
	MetricSummary    = artifact.MetricLadderSummary
)

// IsLadderMetric reports whether metric is one of the ladder family's.
func IsLadderMetric(metric string) bool { return artifact.FamilyOf(metric) == artifact.FamilyLadder }

// StepMetric is the metric of step n (3 digits at least).
func StepMetric(n int64) string { return fmt.Sprintf("%s%03d", MetricStepPrefix, n) }

func intText(n int64) any { return strconv.FormatInt(n, 10) }

func valueText(v *float64, isInt bool) any {
	v = roundValue(v, isInt)
	if v == nil {
		return nil
	}
	if isInt {
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return artifact.FloatMeasurement(v)
}

// roundValue is a value as the rows write it: an integer figure to a whole
// number, any other to 4 decimals, null when not finite.
func roundValue(v *float64, isInt bool) *float64 {
	if v == nil {
		return nil
	}
	if isInt {
		// As strconv's 'f', 0 text rounds: half to even.
		r := math.RoundToEven(*v)
		return &r
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	r := round4(*v)
	return &r
}

// Rounded is the result with its values as the rows write them (the
// summary was computed on the unrounded ones), for readers that show the
// artifact's numbers without writing rows.
func (r Result) Rounded() Result {
	rows := make([]StepRow, len(r.Rows))
	for i, row := range r.Rows {
		if t := row.Step.TargetRPS; t != nil {
			x := round4(*t)
			row.Step.TargetRPS = &x
		}
		vals := make([]Value, len(row.Values))
		for j, v := range row.Values {
			vals[j] = Value{Key: v.Key, V: roundValue(v.V, v.Int), Int: v.Int}
		}
		row.Values = vals
		rows[i] = row
	}
	if r.Rows == nil {
		rows = nil
	}
	r.Rows = rows
	r.Summary.MaxSustainedRPS = roundValue(r.Summary.MaxSustainedRPS, false)
	return r
}

// Measurements is a step row's measurements in key order.
func (r StepRow) Measurements() artifact.Object {
	st, w := r.Step, r.Window
	var target any
	if st.TargetRPS != nil {
		target = artifact.FormatFloat(round4(*st.TargetRPS))
	}
	o := artifact.Object{
		{Key: "step", Value: intText(st.Number)},
		{Key: "steps", Value: intText(st.Of)},
		{Key: "users", Value: intText(st.Users)},
		{Key: "target_rps", Value: target},
		{Key: "window_start", Value: intText(w.A)},
		{Key: "window_end", Value: intText(w.B)},
		{Key: "window_s", Value: intText(w.B - w.A)},
	}
	for _, v := range r.Values {
		o = append(o, artifact.Field{Key: v.Key, Value: valueText(v.V, v.Int)})
	}
	return o
}

// Measurements is the summary row's measurements in key order.
func (s Summary) Measurements() artifact.Object {
	opt := func(p *int64) any {
		if p == nil {
			return nil
		}
		return intText(*p)
	}
	return artifact.Object{
		{Key: "steps", Value: intText(s.Steps)},
		{Key: "steps_skipped", Value: intText(s.StepsSkipped)},
		{Key: "max_sustained_rps", Value: valueText(s.MaxSustainedRPS, false)},
		{Key: "knee_step", Value: opt(s.KneeStep)},
		{Key: "first_short_step", Value: opt(s.FirstShortStep)},
	}
}

// StatsRows are the stats.jsonl rows of an evaluation: one per step, then the
// summary. A failed evaluation, or a run without ladder steps, has none.
func (r Result) StatsRows(runStart int64, tag, testName string) []artifact.Row {
	if r.Err != nil || (len(r.Rows) == 0 && len(r.Skipped) == 0) {
		return nil
	}
	ts := artifact.DataTimestamp(runStart)
	out := make([]artifact.Row, 0, len(r.Rows)+1)
	for _, row := range r.Rows {
		out = append(out, artifact.Row{Timestamp: ts, Tag: tag, TestName: testName, Metric: StepMetric(row.Step.Number), Measurements: row.Measurements()})
	}
	return append(out, artifact.Row{Timestamp: ts, Tag: tag, TestName: testName, Metric: MetricSummary, Measurements: r.Summary.Measurements()})
}

// FromRows reads a run's ladder rows back (stats.jsonl rows of one run, in
// file order): the step rows' values as numbers, the summary, and whether
// any ladder row was found. Values that are not numbers read as null.
func FromRows(rows []artifact.Row) (steps []StepRow, sum Summary, found bool) {
	num := func(v any) *float64 {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case *string:
			if x == nil {
				return nil
			}
			s = *x
		default:
			return nil
		}
		f, err := runs.ParsePyFloat(s)
		if err != nil {
			return nil
		}
		return &f
	}
	asInt := func(p *float64) int64 {
		if p == nil {
			return 0
		}
		return int64(*p)
	}
	optInt := func(p *float64) *int64 {
		if p == nil {
			return nil
		}
		n := int64(*p)
		return &n
	}
	for _, r := range rows {
		switch {
		case r.Metric == MetricSummary:
			found = true
			get := func(k string) *float64 { v, _ := r.Measurements.Get(k); return num(v) }
			sum = Summary{Steps: asInt(get("steps")), StepsSkipped: asInt(get("steps_skipped")),
				MaxSustainedRPS: get("max_sustained_rps"), KneeStep: optInt(get("knee_step")), FirstShortStep: optInt(get("first_short_step"))}
		case IsLadderMetric(r.Metric):
			found = true
			var sr StepRow
			for _, f := range r.Measurements {
				v := num(f.Value)
				switch f.Key {
				case "step":
					sr.Step.Number = asInt(v)
				case "steps":
					sr.Step.Of = asInt(v)
				case "users":
					sr.Step.Users = asInt(v)
				case "target_rps":
					sr.Step.TargetRPS = v
				case "window_start":
					sr.Window.A = asInt(v)
				case "window_end":
					sr.Window.B = asInt(v)
				case "window_s":
				default:
					s, _ := f.Value.(string)
					isInt := s != "" && !strings.ContainsAny(s, ".eEn")
					sr.Values = append(sr.Values, Value{Key: f.Key, V: v, Int: isInt})
				}
			}
			steps = append(steps, sr)
		}
	}
	return steps, sum, found
}
