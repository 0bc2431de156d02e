package verdicts

import (
	"math"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/artifact"
)

// Value is one key of a run as stored: its text (nil for null or absent).
type Value struct {
	Key  string
	Text *string
}

// Number is the value as a finite number; ok is false when it is null,
// not a number, or not finite (unmeasured).
func (v Value) Number() (float64, bool) {
	if v.Text == nil {
		return 0, false
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(*v.Text), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// Run is one run's flat keys in row order plus its identity.
type Run struct {
	ID        string
	TestName  string
	Tag       string
	Timestamp string // the rows' timestamp
	Start     int64  // Unix seconds
	Values    []Value
	index     map[string]int
}

// Get returns the value of key (ok false when the run has no such key).
func (r *Run) Get(key string) (Value, bool) {
	if r.index == nil {
		r.reindex()
	}
	i, ok := r.index[key]
	if !ok {
		return Value{Key: key}, false
	}
	return r.Values[i], true
}

// Number is key's value as a finite number (ok false: unmeasured).
func (r *Run) Number(key string) (float64, bool) {
	v, _ := r.Get(key)
	return v.Number()
}

// Text is key's value as text (ok false: null or absent).
func (r *Run) Text(key string) (string, bool) {
	v, _ := r.Get(key)
	if v.Text == nil {
		return "", false
	}
	return *v.Text, true
}

func (r *Run) reindex() {
	r.index = make(map[string]int, len(r.Values))
	for i, v := range r.Values {
		r.index[v.Key] = i
	}
}

// flatKey names a measurement of a row: server_summary and trial_summary
// keys by name, any other row as <metric>.<key>.
func flatKey(metric, key string) string {
	if metric == artifact.MetricServerSummary || metric == artifact.MetricTrialSummary {
		return key
	}
	return metric + "." + key
}

// IsGateMetric reports whether a row metric belongs to the gate family.
func IsGateMetric(metric string) bool {
	return strings.HasPrefix(metric, "gate_")
}

// RunFromRows builds a run from its stats.jsonl rows. When a metric occurs
// more than once the last row wins (a re-harvest appends a second set).
// The gate family is left out (verdicts are not measurements). Identity
// comes from the last server_summary row, else the last trial_summary
// row, else the last row. Values that are not strings, numbers or null
// are kept as null.
func RunFromRows(rows []artifact.Row) Run {
	last := map[string]int{}
	var order []string
	var id *artifact.Row
	for i := range rows {
		m := rows[i].Metric
		if IsGateMetric(m) {
			continue
		}
		if _, seen := last[m]; !seen {
			order = append(order, m)
		}
		last[m] = i
		switch {
		case m == artifact.MetricServerSummary:
			id = &rows[i]
		case m == artifact.MetricTrialSummary && (id == nil || id.Metric != artifact.MetricServerSummary):
			id = &rows[i]
		case id == nil || (id.Metric != artifact.MetricServerSummary && id.Metric != artifact.MetricTrialSummary):
			id = &rows[i]
		}
	}
	var run Run
	if id != nil {
		run.TestName, run.Tag, run.Timestamp = id.TestName, id.Tag, id.Timestamp
	}
	seen := map[string]bool{}
	for _, m := range order {
		for _, f := range rows[last[m]].Measurements {
			k := flatKey(m, f.Key)
			if seen[k] {
				continue
			}
			seen[k] = true
			run.Values = append(run.Values, Value{Key: k, Text: text(f.Value)})
		}
	}
	if s, ok := run.Number("run_start"); ok {
		run.Start = int64(s)
	}
	run.reindex()
	return run
}

func text(v any) *string {
	switch x := v.(type) {
	case string:
		return &x
	case *string:
		return x
	case int64:
		s := strconv.FormatInt(x, 10)
		return &s
	case float64:
		s := artifact.FormatFloat(x)
		return &s
	case artifact.Number:
		s := string(x)
		return &s
	}
	return nil
}

// RunFromLines is RunFromRows over the parsed lines of a stats.jsonl file
// (lines that are not rows are skipped).
func RunFromLines(lines []artifact.Line) Run {
	rows := make([]artifact.Row, 0, len(lines))
	for _, l := range lines {
		if l.Row != nil {
			rows = append(rows, *l.Row)
		}
	}
	return RunFromRows(rows)
}
