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
func IsGateMetric(metric string) bool { return artifact.FamilyOf(metric) == artifact.FamilyGates }

// RunFromRows builds a run from stats.jsonl rows, taking the run the rows
// decide (artifact.SelectRunRows with no key: the run of the last
// server_summary row, else of the last trial_summary row).
func RunFromRows(rows []artifact.Row) Run {
	return RunFromRunRows(artifact.SelectRunRows(nil, rows))
}

// RunFromRunRows builds a run from its row sets (the one row rule already
// applied): the server_summary and trial_summary keys, then the phase and
// ladder sets' as <metric>.<key>; the gate family is left out (verdicts
// are not measurements). A key met twice keeps its first value. Identity
// comes from the rows' key. Values that are not strings, numbers or null
// are kept as null.
func RunFromRunRows(rr artifact.RunRows) Run {
	run := Run{TestName: rr.Key.TestName, Tag: rr.Key.Tag, Timestamp: rr.Key.Timestamp}
	rr.Gates = nil // verdicts are not measurements
	seen := map[string]bool{}
	for _, r := range rr.All() {
		for _, f := range r.Measurements {
			k := flatKey(r.Metric, f.Key)
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
