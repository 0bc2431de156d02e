package plugin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// Values of the query keys format and labels (datasource.md "Frames for
// alerting, recording rules and SQL expressions").
const (
	formatTable   = "table"
	formatNumeric = "numeric"
	labelsRun     = "run"
)

// Labels of the numeric frames.
const (
	labelTestName = "test_name"
	labelKey      = "key"
	labelStep     = "step"
	labelRun      = "run"
	labelTag      = "tag"
)

// numericOptions are a summary, gates or ladder query's format options.
type numericOptions struct {
	numeric bool
	// keys limits the frames to these keys (none: every key).
	keys []string
	// runLabels adds the run and tag labels.
	runLabels bool
}

// numericOpts checks the query keys format, labels and keys: a bad value
// is a 400.
func numericOpts(m queryModel) (numericOptions, error) {
	var o numericOptions
	if err := oneOf("format", &m.Format, formatTable, formatTable, formatNumeric); err != nil {
		return o, err
	}
	switch m.Labels {
	case "":
	case labelsRun:
		o.runLabels = true
	default:
		return o, badRequest("labels %q is not one of [%s] (empty: the stable labels only)", m.Labels, labelsRun)
	}
	o.numeric = m.Format == formatNumeric
	o.keys = splitKeys(m.Keys)
	return o, nil
}

// parseNumericQuery parses a summary, gates or ladder query with its
// format options.
func parseNumericQuery(q backend.DataQuery) (queryModel, numericOptions, error) {
	m, err := parseQuery(q)
	if err != nil {
		return m, numericOptions{}, err
	}
	o, err := numericOpts(m)
	return m, o, err
}

// splitKeys is the option keys: a list, each item possibly a
// comma-separated string.
func splitKeys(list []string) []string {
	var keys []string
	for _, k := range list {
		for _, part := range strings.Split(k, ",") {
			if part = strings.TrimSpace(part); part != "" && !slices.Contains(keys, part) {
				keys = append(keys, part)
			}
		}
	}
	return keys
}

// numericValue is one number of a numeric answer: its frame.
type numericValue struct {
	// name names the frame and its field.
	name string
	// key is what the option keys selects on ("": always kept).
	key    string
	labels data.Labels
	value  *float64
	unit   string
	// run and start are the run the value is of: among values with the same
	// name and labels, the newest run's is kept.
	run   string
	start int64
}

// runLabels are the stable labels of a run's numeric frames: test_name and
// the cohort keys it recorded (text gives a recorded value, ok false when
// not recorded), then run and tag when asked.
func runLabels(testName string, text func(key string) (string, bool), id, tag string, o numericOptions) data.Labels {
	l := data.Labels{}
	if testName != "" {
		l[labelTestName] = testName
	}
	for _, k := range verdicts.CohortKeys() {
		if v, ok := text(k); ok && v != "" {
			l[k] = v
		}
	}
	if o.runLabels {
		l[labelRun] = id
		if tag != "" {
			l[labelTag] = tag
		}
	}
	return l
}

// trialText reads a cohort key from a run's trial_summary row.
func trialText(t trialRow) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v := t.values[k]
		if v == nil {
			return "", false
		}
		return *v, true
	}
}

// withLabels is l plus the pairs kv (name, value, …).
func withLabels(l data.Labels, kv ...string) data.Labels {
	out := make(data.Labels, len(l)+len(kv)/2)
	for k, v := range l {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// numericResponse is the numeric-multi answer of vals: one frame per value
// whose key the option keys selects (a key that the query type does not
// know is a 400), the newest run's value where several runs give the same
// name and labels (a notice names the others). The notes, harvest notices
// and PromQL go on the first frame; an answer without values is the
// dataplane's empty numeric-multi response (one frame without fields).
func numericResponse(queryType string, vals []numericValue, known []string, o numericOptions, notes []runNote, notices []harvest.Notice, queries []string) backend.DataResponse {
	for _, k := range o.keys {
		if !slices.Contains(known, k) {
			return errorResponse(badRequest("keys: %q is not a number key of %s (it has %d, e.g. %s)", k, queryType, len(known), strings.Join(known[:min(len(known), 5)], ", ")))
		}
	}
	type kept struct {
		v       numericValue
		dropped []string
	}
	order := make([]string, 0, len(vals))
	byID := make(map[string]*kept, len(vals))
	for _, v := range vals {
		if v.key != "" && len(o.keys) > 0 && !slices.Contains(o.keys, v.key) {
			continue
		}
		id := v.name + v.labels.String()
		k, ok := byID[id]
		switch {
		case !ok:
			byID[id] = &kept{v: v}
			order = append(order, id)
		case v.start > k.v.start:
			k.dropped = append(k.dropped, k.v.run)
			k.v = v
		default:
			k.dropped = append(k.dropped, v.run)
		}
	}
	var dropped []string
	frames := make(data.Frames, 0, len(order))
	for _, id := range order {
		k := byID[id]
		dropped = append(dropped, k.dropped...)
		f := data.NewField(k.v.name, k.v.labels, []*float64{k.v.value})
		if k.v.unit != "" {
			f.SetConfig(&data.FieldConfig{Unit: k.v.unit})
		}
		frames = append(frames, data.NewFrame(k.v.name, f))
	}
	slices.Sort(dropped)
	if dropped = slices.Compact(dropped); len(dropped) > 0 {
		notes = append(notes, note(fmt.Sprintf("format numeric: the newest run of each test and cohort is shown; older runs with the same labels left out (%d: %s); add labels %q to see every run",
			len(dropped), strings.Join(dropped[:min(len(dropped), mergedExamples)], ", "), labelsRun)))
	}
	if len(frames) == 0 {
		frames = data.Frames{data.NewFrame("")}
	}
	for _, f := range frames {
		typed(f, data.FrameTypeNumericMulti)
	}
	// The PromQL and the notices once, on the first frame: the same for
	// every value.
	setMeta(frames[:1], queries, noticesMeta(notes, notices))
	return backend.DataResponse{Frames: frames}
}

// numberFields are the number fields of a table (its frame of rows) other
// than skip, in column order.
func numberFields(t *data.Frame, skip ...string) []*data.Field {
	var out []*data.Field
	for _, f := range t.Fields {
		if f.Type().Numeric() && !slices.Contains(skip, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// cellNumber is a numeric cell as *float64 (nil for null).
func cellNumber(f *data.Field, i int) *float64 {
	v, ok := f.NullableFloatAt(i)
	if ok != nil || v == nil {
		return nil
	}
	x := *v
	return &x
}

// unitOf is a field's unit ("" when it has none).
func unitOf(f *data.Field) string {
	if f.Config == nil {
		return ""
	}
	return f.Config.Unit
}

// tableValues are the numeric values of table rows: one per (row, number
// field other than skip), named by the field, labelled by the row's labels
// and the key.
func tableValues(t *data.Frame, rowLabels func(i int) data.Labels, run func(i int) (string, int64), skip ...string) []numericValue {
	fields := numberFields(t, skip...)
	out := make([]numericValue, 0, t.Rows()*len(fields))
	for i := range t.Rows() {
		l := rowLabels(i)
		id, start := run(i)
		for _, f := range fields {
			out = append(out, numericValue{name: f.Name, key: f.Name, labels: withLabels(l, labelKey, f.Name),
				value: cellNumber(f, i), unit: unitOf(f), run: id, start: start})
		}
	}
	return out
}

// fieldNames are the names of fields.
func fieldNames(fs []*data.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// summaryNumeric is the numeric answer of `summary`: one frame per (run,
// number key) of its table.
func summaryNumeric(table *data.Frame, entries []runs.Entry, trials func(i int) trialRow, o numericOptions, notes []runNote, notices []harvest.Notice, queries []string) backend.DataResponse {
	vals := tableValues(table,
		func(i int) data.Labels {
			e := entries[i]
			return runLabels(e.TestName, trialText(trials(i)), e.ID, e.Tag, o)
		},
		func(i int) (string, int64) { return entries[i].ID, entries[i].Start })
	known := fieldNames(numberFields(table))
	for _, k := range append(clusterfacts.Keys(), frontierKeys...) {
		if !isTextKey(k) && !slices.Contains(known, k) {
			known = append(known, k)
		}
	}
	return numericResponse(QuerySummary, vals, known, o, notes, notices, queries)
}

// Names of the gate frames.
const (
	gatePassed  = "gate_passed"
	gatesFailed = "gates_failed"
)

// gatesNumeric is the numeric answer of `gates`: per gate gate_passed (1
// pass, 0 fail or not measured) labelled by its key, then gates_failed (the
// gate_summary's failed count, no key label); keys names the gates and
// gates_failed to keep (an alert rule keeps one kind: gates_failed > 0, or
// gate_passed < 1 of chosen gates).
func gatesNumeric(run *verdicts.Run, rs []verdicts.GateResult, o numericOptions, notes []runNote) backend.DataResponse {
	l := runLabels(run.TestName, run.Text, run.ID, run.Tag, o)
	var (
		vals  []numericValue
		known []string
	)
	for _, r := range rs {
		passed := 0.0
		if r.Verdict == verdicts.Pass {
			passed = 1
		}
		known = append(known, r.Gate.Key)
		vals = append(vals, numericValue{name: gatePassed, key: r.Gate.Key, labels: withLabels(l, labelKey, r.Gate.Key),
			value: &passed, run: run.ID, start: run.Start})
	}
	failed := float64(verdicts.Summarise(rs).Failed)
	known = append(known, gatesFailed)
	vals = append(vals, numericValue{name: gatesFailed, key: gatesFailed, labels: l, value: &failed, run: run.ID, start: run.Start})
	return numericResponse(QueryGates, vals, known, o, notes, nil, nil)
}

// ladderValues are a run's ladder as numeric values: per (step, key) of
// the steps table (every column but step and steps), labelled step, then
// the summary's keys without a step label.
func ladderValues(steps, sum *data.Frame, base data.Labels, id string, start int64) []numericValue {
	stepField, _ := steps.FieldByName("step")
	vals := tableValues(steps,
		func(i int) data.Labels {
			s := ""
			if stepField != nil {
				if n := cellNumber(stepField, i); n != nil {
					s = strconv.FormatFloat(*n, 'f', -1, 64)
				}
			}
			return withLabels(base, labelStep, s)
		},
		func(int) (string, int64) { return id, start }, "step", "steps")
	return append(vals, tableValues(sum, func(int) data.Labels { return base }, func(int) (string, int64) { return id, start })...)
}

// ladderNumeric is the numeric answer of `ladder`: per run, one frame per
// (step, key) and per summary key (ladderValues).
func (d *Datasource) ladderNumeric(ctx context.Context, q backend.DataQuery, m queryModel, o numericOptions) backend.DataResponse {
	entries, err := d.promRuns(ctx, m, q)
	if err != nil {
		return errorResponse(err)
	}
	now := d.now().Unix()
	var (
		vals    []numericValue
		known   []string
		notes   []runNote
		queries []string
	)
	for _, e := range entries {
		lr := d.runLadder(ctx, e)
		notes = append(notes, d.runNotices(e, now)...)
		for _, n := range lr.notes {
			notes = append(notes, note(n))
		}
		queries = append(queries, lr.queries...)
		if !lr.found {
			continue
		}
		tables := ladderTables(lr.steps, lr.sum, "")
		base := runLabels(e.TestName, trialText(d.trialSummary(ctx, e)), e.ID, e.Tag, o)
		for _, v := range ladderValues(tables[1], tables[0], base, e.ID, e.Start) { // tables: the summary, then the steps; values: the steps first
			vals = append(vals, v)
			if !slices.Contains(known, v.key) {
				known = append(known, v.key)
			}
		}
	}
	if len(known) == 0 {
		known = o.keys // no ladder read: nothing to check the keys against
	}
	return numericResponse(QueryLadder, vals, known, o, notes, nil, distinctSorted(queries))
}
