package dashboardtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/plugin"
)

// smokePanel runs one panel's queries and checks what its visualization
// gets.
func (e *smokeEnv) smokePanel(t *testing.T, res *panelResult, d dashDoc, p dashPanel, vars dashVars, from, to int64, dashes map[string]dashDoc) {
	if p.TimeFrom != "" {
		// Grafana's panel time override: the range ends now.
		dur, err := time.ParseDuration(p.TimeFrom)
		if err != nil {
			t.Fatalf("timeFrom %q: %v", p.TimeFrom, err)
		}
		to = e.now.Unix()
		from = to - int64(dur.Seconds())
	}
	var targets []densityQuery
	for _, raw := range p.Targets {
		q, err := decodeDensityQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, q)
	}
	frames, notices, err := e.query(t, targets, vars, from, to)
	if err != nil {
		res.err = err.Error()
		t.Fatal(err)
	}
	frames, err = applyTransforms(frames, p.Transformations)
	if err != nil {
		res.err = err.Error()
		t.Fatal(err)
	}
	var fc dashFieldConfig
	_ = json.Unmarshal(p.FieldConfig, &fc)

	// shown are the fields the visualization draws, with their frame.
	type shown struct {
		f  *data.Field
		fr *data.Frame
	}
	var fields []shown
	switch p.Type {
	case "timeseries":
		g := graphable(frames)
		if len(g) == 0 {
			t.Fatalf("no frame with a time field and a number field (timeseries needs one); got %s", describeFrames(frames))
		}
		for _, fr := range g {
			res.frames++
			res.rows += fr.Rows()
			var tf *data.Field
			for _, f := range fr.Fields {
				if isTimeField(f) && tf == nil {
					tf = f
				} else if isNumberField(f) {
					fields = append(fields, shown{f, fr})
				}
			}
			// The time field holds no nulls and ascends (Grafana draws
			// lines between consecutive points).
			var prev time.Time
			for i := 0; i < tf.Len(); i++ {
				v, ok := tf.ConcreteAt(i)
				if !ok {
					t.Fatalf("frame %q: null time at row %d", fr.Name, i)
				}
				ts := v.(time.Time)
				if i > 0 && ts.Before(prev) {
					t.Errorf("frame %q: time goes back at row %d", fr.Name, i)
				}
				prev = ts
			}
		}
	case "stat", "bargauge":
		var o struct {
			ReduceOptions struct {
				Values bool     `json:"values"`
				Calcs  []string `json:"calcs"`
				Fields string   `json:"fields"`
			} `json:"reduceOptions"`
		}
		_ = json.Unmarshal(p.Options, &o)
		if o.ReduceOptions.Values || !slices.Equal(o.ReduceOptions.Calcs, []string{"lastNotNull"}) {
			t.Errorf("reduceOptions %+v: the one-row summary frames want values false, calcs [lastNotNull]", o.ReduceOptions)
		}
		re, _ := jsRegexp(o.ReduceOptions.Fields)
		seen := map[*data.Frame]bool{}
		for _, fr := range frames {
			for _, f := range fr.Fields {
				// No fields option: Grafana shows the numeric fields.
				if (o.ReduceOptions.Fields == "" && isNumberField(f)) || (o.ReduceOptions.Fields != "" && re.MatchString(displayName(f, fr, frames))) {
					fields = append(fields, shown{f, fr})
					if !seen[fr] {
						seen[fr] = true
						res.frames++
						res.rows += fr.Rows()
						// A stat of a summary is a one-row table.
						if fr.Rows() != 1 {
							t.Errorf("frame %q has %d rows; a stat/bar gauge reads a one-row summary", fr.Name, fr.Rows())
						}
					}
				}
			}
		}
		if len(fields) == 0 {
			t.Fatalf("reduceOptions.fields %q matches no field of %s", o.ReduceOptions.Fields, describeFrames(frames))
		}
	case "table":
		fr := tableShows(p, frames)
		if fr == nil || fr.Rows() == 0 {
			t.Fatalf("the table has no rows: %s", describeFrames(frames))
		}
		// A response's numeric frame comes first for alert rules; a table
		// panel shows its table of rows (options.frameIndex) when it has one.
		if fr.Meta == nil || fr.Meta.Type != data.FrameTypeTable {
			if slices.ContainsFunc(frames, func(f *data.Frame) bool { return f.Meta != nil && f.Meta.Type == data.FrameTypeTable }) {
				t.Errorf("the table shows frame %q (%v), not the response's table: set options.frameIndex", fr.Name, fr.Meta)
			}
		}
		res.frames, res.rows = len(frames), fr.Rows()
		for _, f := range fr.Fields {
			fields = append(fields, shown{f, fr})
		}
		// A per-run table is a one-row summary, except the ladder's steps
		// and the phase groups (one row each).
		perRun := slices.ContainsFunc(targets, func(q densityQuery) bool {
			return !slices.Contains(listTypes, q.QueryType) && q.QueryType != plugin.QueryLadder && q.QueryType != plugin.QueryPhases &&
				!slices.Contains(verdictTables, q.QueryType)
		})
		if perRun && fr.Rows() != 1 {
			t.Errorf("a per-run summary table has %d rows, want 1", fr.Rows())
		}
	case "barchart":
		// Grafana's bar chart draws one frame: a group of bars per row at
		// options.xField, a bar per other number field.
		var o struct {
			XField string `json:"xField"`
		}
		_ = json.Unmarshal(p.Options, &o)
		if len(frames) != 1 || frames[0].Rows() == 0 {
			t.Fatalf("a bar chart draws one frame with rows; got %s", describeFrames(frames))
		}
		fr := frames[0]
		res.frames, res.rows = 1, fr.Rows()
		var x *data.Field
		for _, f := range fr.Fields {
			if o.XField != "" && displayName(f, fr, frames) == o.XField {
				x = f
			}
		}
		if x == nil {
			t.Fatalf("options.xField %q is not a field of %s", o.XField, describeFrames(frames))
		}
		for i := 0; i < x.Len(); i++ {
			if cellNull(x, i) {
				t.Errorf("the x field %q is null at row %d", o.XField, i)
			}
		}
		for _, f := range fr.Fields {
			if f != x && isNumberField(f) {
				fields = append(fields, shown{f, fr})
			}
		}
		if len(fields) == 0 {
			t.Fatalf("no number field besides the x field: %s", describeFrames(frames))
		}
	default:
		t.Fatalf("panel type %q is not checked by the smoke test", p.Type)
	}
	res.fields = len(fields)

	// Units. Grafana renders a field in the override's unit, else the
	// frame's, else the panel default's. A frame's real unit is never
	// relabelled, and the panel's declared unit is what is rendered (a
	// frame's "none" beats a panel default: ratios would show raw).
	if p.Type != "table" {
		for _, s := range fields {
			if !isNumberField(s.f) {
				continue
			}
			name := displayName(s.f, s.fr, frames)
			dsUnit := ""
			if s.f.Config != nil {
				dsUnit = s.f.Config.Unit
			}
			rendered, overridden := overrideUnit(fc, name)
			if !overridden {
				rendered = cmp.Or(dsUnit, fc.Defaults.Unit)
			}
			if dsUnit != "" && dsUnit != "none" && rendered != dsUnit {
				t.Errorf("field %q: the frame's unit is %q, the panel renders %q", name, dsUnit, rendered)
			}
			if fc.Defaults.Unit != "" && fc.Defaults.Unit != "none" && rendered != fc.Defaults.Unit && !overridden {
				t.Errorf("field %q: the panel declares %q but renders the frame's %q (add an override)", name, fc.Defaults.Unit, rendered)
			}
		}
	}

	// Every override applies to a field the panel shows (a renamed or
	// misspelt field would leave it dead).
	for _, o := range fc.Overrides {
		if o.Matcher.ID == "byName" && slices.Contains(bandFields, o.Matcher.Options) {
			continue // a PSI panel's bands show only above maxSeries series (pkg/plugin TestPSIBands)
		}
		hit := false
		for _, s := range fields {
			name := displayName(s.f, s.fr, frames)
			if o.Matcher.ID == "byName" {
				hit = hit || name == o.Matcher.Options
			} else if re, err := jsRegexp(o.Matcher.Options); err == nil {
				hit = hit || re.MatchString(name)
			}
		}
		if !hit {
			t.Errorf("override %s %q matches no field the panel shows", o.Matcher.ID, o.Matcher.Options)
		}
	}

	// Null rules.
	wantNull := expectedNull[d.UID][p.ID]
	allNull := slices.Contains(wantNull, "*")
	needNotice := false
	for _, s := range fields {
		if isTimeField(s.f) {
			continue
		}
		name := displayName(s.f, s.fr, frames)
		nonNull := 0
		for i := 0; i < s.f.Len(); i++ {
			if !cellNull(s.f, i) {
				nonNull++
			}
		}
		switch {
		case allNull || slices.Contains(wantNull, name):
			if nonNull > 0 {
				t.Errorf("field %q has data on the demo run; it was expected null (not measured without Kubernetes)", name)
			}
			res.nulls = append(res.nulls, name)
			needNotice = needNotice || !slices.Contains(kubeNullExempt, name)
		case p.ID == 17 && d.UID == "density-runs-over-time":
			// The all-keys table is checked against stats.jsonl below.
		case nonNull == 0:
			t.Errorf("field %q is null on the demo run, which has data for it", name)
		}
	}
	for _, w := range wantNull {
		if w != "*" && !slices.Contains(res.nulls, w) {
			t.Errorf("expected-null field %q is not shown by the panel (stale expectation?)", w)
		}
	}
	if needNotice && !slices.ContainsFunc(notices, func(n string) bool {
		return strings.Contains(n, "Kubernetes") || strings.Contains(n, "cluster facts") || strings.Contains(n, "null")
	}) {
		t.Errorf("null Kubernetes fields without a notice saying why; notices: %q", notices)
	}

	if d.UID == "density-runs-over-time" && p.ID == 17 {
		e.checkAllKeys(t, tableShows(p, frames))
	}
	e.checkLinks(t, p, fc, frames, vars, dashes)
}

// overrideUnit is the unit the panel's last matching override sets.
func overrideUnit(fc dashFieldConfig, name string) (string, bool) {
	u, ok := "", false
	for _, o := range fc.Overrides {
		match := o.Matcher.ID == "byName" && o.Matcher.Options == name
		if o.Matcher.ID == "byRegexp" {
			re, err := jsRegexp(o.Matcher.Options)
			match = err == nil && re.MatchString(name)
		}
		if !match {
			continue
		}
		for _, prop := range o.Properties {
			if prop.ID == "unit" {
				ok = json.Unmarshal(prop.Value, &u) == nil
			}
		}
	}
	return u, ok
}

// tableShows is the frame a table panel shows: options.frameIndex, the
// first frame when the index is past the frames (Grafana's table panel);
// nil without frames.
func tableShows(p dashPanel, frames []*data.Frame) *data.Frame {
	if len(frames) == 0 {
		return nil
	}
	var o struct {
		FrameIndex int `json:"frameIndex"`
	}
	_ = json.Unmarshal(p.Options, &o)
	if o.FrameIndex > 0 && o.FrameIndex < len(frames) {
		return frames[o.FrameIndex]
	}
	return frames[0]
}

// checkAllKeys compares the all-keys summary table with the export's own
// stats.jsonl for the demo run: a panel and the artifacts never disagree.
func (e *smokeEnv) checkAllKeys(t *testing.T, fr *data.Frame) {
	t.Helper()
	row := -1
	idf, _ := fr.FieldByName("id")
	for i := 0; idf != nil && i < idf.Len(); i++ {
		if v, _ := idf.ConcreteAt(i); v == e.runID {
			row = i
		}
	}
	if row < 0 {
		t.Fatalf("the demo run %s is not a row of the all-keys table", e.runID)
	}
	compare := func(what string, want map[string]*string) {
		for k, w := range want {
			f, _ := fr.FieldByName(k)
			if f == nil {
				t.Errorf("%s key %s is not a column", what, k)
				continue
			}
			if !isNumberField(f) {
				got, ok := f.ConcreteAt(row)
				if (w == nil) != !ok || (ok && fmt.Sprint(got) != *w) {
					t.Errorf("%s %s = %v, stats.jsonl %v", what, k, got, w)
				}
				continue
			}
			got := cellFloat(f, row)
			switch {
			case w == nil && got != nil:
				t.Errorf("%s %s = %v, stats.jsonl null", what, k, *got)
			case w != nil && got == nil:
				t.Errorf("%s %s is null, stats.jsonl %s", what, k, *w)
			case w != nil:
				if x, err := strconv.ParseFloat(*w, 64); err != nil || x != *got {
					t.Errorf("%s %s = %v, stats.jsonl %s", what, k, *got, *w)
				}
			}
		}
	}
	compare("server_summary", e.serverKeys)
	compare("trial_summary", e.trialKeys)
}

// bandFields are the field names of a PSI panel's distribution bands
// across its series above maxSeries (datasource.md "Frames": min, p50, p90,
// p99, max); dashboard overrides key on them.
var bandFields = []string{"min", "p50", "p90", "p99", "max"}
