package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/dataplane/sdata"
	"github.com/grafana/dataplane/sdata/numeric"
	"github.com/grafana/dataplane/sdata/reader"
	"github.com/grafana/dataplane/sdata/timeseries"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
)

// Frame types of the conformance cases.
const (
	tsWide  = data.FrameTypeTimeSeriesWide
	numWide = data.FrameTypeNumericWide
	numMany = data.FrameTypeNumericMulti
	tbl     = data.FrameTypeTable
)

// conformanceEnv names the datasource a case queries.
type conformanceEnv int

const (
	envSteady  conformanceEnv = iota // the steady run, with phase rows, beside 20 stored nightly runs
	envLadder                        // the simulated ladder's stored rows
	envNightly                       // the steady env, queried over the nightly runs' range
)

// conformanceCase is one query of the dataplane conformance test: the
// frame types its response must carry, in order, and the sdata reader that
// must accept it (none for a response of tables, which alert rules cannot
// use). Add a row per new query type or format.
type conformanceCase struct {
	name  string // the query type, and what variant
	env   conformanceEnv
	model func(c conformanceIDs) map[string]any
	types []data.FrameType
	// labels are label names every number an expression reads must carry.
	labels []string
	// multi: every frame is numeric-multi (format numeric; their count
	// follows the data), instead of types.
	multi bool
}

// conformanceIDs are the run ids the cases name.
type conformanceIDs struct {
	run, ladder string
	nightly     []string
}

func conformanceCases() []conformanceCase {
	run := func(qt string, extra ...any) func(conformanceIDs) map[string]any {
		return func(c conformanceIDs) map[string]any {
			m := map[string]any{"queryType": qt, "run": c.run}
			for i := 0; i+1 < len(extra); i += 2 {
				m[extra[i].(string)] = extra[i+1]
			}
			return m
		}
	}
	fixed := func(m map[string]any) func(conformanceIDs) map[string]any {
		return func(conformanceIDs) map[string]any { return m }
	}
	return []conformanceCase{
		{name: "runs", model: fixed(map[string]any{"queryType": "runs"}), types: []data.FrameType{tbl}},
		{name: "tests", model: fixed(map[string]any{"queryType": "tests"}), types: []data.FrameType{tbl}},
		{name: "annotations", model: fixed(map[string]any{"queryType": "annotations"}), types: []data.FrameType{tbl}},
		{name: "packing", model: run("packing"), types: []data.FrameType{tsWide, numWide}},
		{name: "psi node cpu", model: run("psi", "scope", "node", "resource", "cpu"), types: []data.FrameType{tsWide, numWide}},
		{name: "psi pod io, all series", model: run("psi", "scope", "pod", "resource", "io", "series", "all"), types: []data.FrameType{tsWide, numWide}, labels: []string{"pod"}},
		{name: "snapshots", model: run("snapshots"), types: []data.FrameType{numWide}},
		{name: "activeActors", model: run("activeActors"), types: []data.FrameType{tsWide, numWide}},
		{name: "workingSet worker", model: run("workingSet", "block", "worker"), types: []data.FrameType{tsWide, numWide}},
		{name: "oomEvents", model: run("oomEvents"), types: []data.FrameType{numWide}},
		{name: "clusterFacts", model: run("clusterFacts"), types: []data.FrameType{numWide}},
		{name: "frontier", model: run("frontier"), types: []data.FrameType{tbl}},
		{name: "summary of one run", model: run("summary"), types: []data.FrameType{numWide}},
		{name: "summary of several runs", env: envNightly, types: []data.FrameType{numWide, tbl}, labels: []string{"run"},
			model: fixed(map[string]any{"queryType": "summary", "run": "range", "testName": "nightly"})},
		{name: "phases", model: run("phases"), types: []data.FrameType{tbl}},
		{name: "ladder", env: envLadder, types: []data.FrameType{numWide, tbl},
			model: func(c conformanceIDs) map[string]any { return map[string]any{"queryType": "ladder", "run": c.ladder} }},
		{name: "gates of run latest", env: envNightly, types: []data.FrameType{numWide, tbl},
			model: fixed(map[string]any{"queryType": "gates", "run": "latest", "testName": "nightly", "baseline": "latest"})},
		{name: "gates of a run id", env: envNightly, types: []data.FrameType{tbl},
			model: func(c conformanceIDs) map[string]any {
				return map[string]any{"queryType": "gates", "run": c.nightly[12], "baseline": c.nightly[11]}
			}},
		{name: "compare", env: envNightly, types: []data.FrameType{tbl},
			model: func(c conformanceIDs) map[string]any {
				return map[string]any{"queryType": "compare", "baseline": c.nightly[11], "candidate": c.nightly[12]}
			}},
		{name: "changePoints", env: envNightly, types: []data.FrameType{tbl},
			model: fixed(map[string]any{"queryType": "changePoints", "testName": "nightly"})},
		{name: "changePoints of run latest", env: envNightly, types: []data.FrameType{numWide, tbl},
			model: fixed(map[string]any{"queryType": "changePoints", "testName": "nightly", "run": "latest"})},
		{name: "freshness", env: envNightly, types: []data.FrameType{numWide}, labels: []string{"test_name"},
			model: fixed(map[string]any{"queryType": "freshness", "testName": "nightly"})},
		{name: "summary, format numeric", env: envNightly, multi: true, labels: []string{"test_name", "key"},
			model: fixed(map[string]any{"queryType": "summary", "run": "latest", "testName": "nightly", "format": "numeric"})},
		{name: "gates, format numeric", env: envNightly, multi: true, labels: []string{"test_name"},
			model: fixed(map[string]any{"queryType": "gates", "run": "latest", "testName": "nightly", "baseline": "latest", "format": "numeric"})},
		{name: "ladder, format numeric", env: envLadder, multi: true, labels: []string{"key"},
			model: func(c conformanceIDs) map[string]any {
				return map[string]any{"queryType": "ladder", "run": c.ladder, "format": "numeric"}
			}},
	}
}

// readerVerdict is what Grafana's dataplane reader makes of a response.
type readerVerdict struct {
	metaType data.FrameType // reader.CanReadBasedOnMeta's type; "" when it refuses
	reader   string         // the collection reader that accepted it, "" none
	refs     int            // the numbers (or series) it read
}

// readDataplane reads frames the way Grafana's server-side expressions do:
// reader.CanReadBasedOnMeta on the first frame, then the time-series or
// numeric collection reader of its kind. A reader that fails, or warns of
// a version it does not know, is an error.
func readDataplane(frames data.Frames, labels []string) (readerVerdict, error) {
	var v readerVerdict
	t, err := reader.CanReadBasedOnMeta(frames)
	if err != nil {
		var vw *sdata.VersionWarning
		if errors.As(err, &vw) {
			return v, fmt.Errorf("CanReadBasedOnMeta: %w", err)
		}
		return v, nil // not a dataplane response: no reader takes it
	}
	v.metaType = t
	check := func(name string, l data.Labels) error {
		for _, k := range labels {
			if l[k] == "" {
				return fmt.Errorf("%s %v lacks label %s", name, l, k)
			}
		}
		return nil
	}
	switch t.Kind() {
	case data.KindTimeSeries:
		cr, err := timeseries.CollectionReaderFromFrames(frames)
		if err != nil {
			return v, fmt.Errorf("timeseries.CollectionReaderFromFrames: %w", err)
		}
		c, err := cr.GetCollection(true)
		if err != nil {
			return v, fmt.Errorf("timeseries GetCollection: %w", err)
		}
		if c.Warning != nil {
			return v, fmt.Errorf("timeseries GetCollection: %w", c.Warning)
		}
		for _, r := range c.Refs {
			if err := check(r.GetMetricName(), r.GetLabels()); err != nil {
				return v, err
			}
		}
		v.reader, v.refs = fmt.Sprintf("timeseries (%T)", cr), len(c.Refs)
	case data.KindNumeric:
		cr, err := numeric.CollectionReaderFromFrames(frames)
		if err != nil {
			return v, fmt.Errorf("numeric.CollectionReaderFromFrames: %w", err)
		}
		c, err := cr.GetCollection(false)
		if err != nil {
			return v, fmt.Errorf("numeric GetCollection: %w", err)
		}
		if c.Warning != nil {
			return v, fmt.Errorf("numeric GetCollection: %w", c.Warning)
		}
		seen := map[string]bool{}
		for _, r := range c.Refs {
			if _, empty, err := r.NullableFloat64Value(); err != nil || empty {
				return v, fmt.Errorf("number %s %v: not one value (empty %v, %v)", r.GetMetricName(), r.GetLabels(), empty, err)
			}
			id := r.GetMetricName() + r.GetLabels().String()
			if seen[id] {
				return v, fmt.Errorf("number %s %v twice: expressions could not tell them apart", r.GetMetricName(), r.GetLabels())
			}
			seen[id] = true
			if err := check(r.GetMetricName(), r.GetLabels()); err != nil {
				return v, err
			}
		}
		v.reader, v.refs = fmt.Sprintf("numeric (%T)", cr), len(c.Refs)
	}
	return v, nil
}

// checkFrameContract checks every frame's dataplane type against want:
// the time-series and numeric kinds at version 0.1, each readable alone by
// its kind's reader; tables without a version.
func checkFrameContract(frames data.Frames, want []data.FrameType) error {
	var got []data.FrameType
	for _, f := range frames {
		if f.Meta == nil {
			got = append(got, data.FrameTypeUnknown)
			continue
		}
		got = append(got, f.Meta.Type)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("frame types %v, want %v", got, want)
	}
	for i, f := range frames {
		switch k := f.Meta.Type.Kind(); {
		case f.Meta.Type == data.FrameTypeTable:
			if !f.Meta.TypeVersion.IsZero() {
				return fmt.Errorf("frame %d (%s): table with version %s", i, f.Name, f.Meta.TypeVersion)
			}
		case k == data.KindTimeSeries || k == data.KindNumeric:
			if f.Meta.TypeVersion != (data.FrameTypeVersion{0, 1}) {
				return fmt.Errorf("frame %d (%s): %s version %s, want 0.1", i, f.Name, f.Meta.Type, f.Meta.TypeVersion)
			}
			if _, err := readDataplane(data.Frames{f}, nil); err != nil {
				return fmt.Errorf("frame %d (%s) alone: %w", i, f.Name, err)
			}
		default:
			return fmt.Errorf("frame %d (%s): type %q is neither a dataplane kind nor table", i, f.Name, f.Meta.Type)
		}
	}
	return nil
}

// TestDataplaneConformance reads every query type's frames over gRPC with
// Grafana's own dataplane reader (sdata v0.0.9): every frame typed, the
// time-series and numeric kinds at version 0.1 and readable by their
// collection reader, tables without a version; a response an alert rule
// may use has its alertable frame first, which CanReadBasedOnMeta and the
// collection reader of its kind accept, with one value per number and the
// labels that tell them apart. The table it makes is the one of
// docs/query-types.md ("Frames for alert rules"); rewrite it with
// `go test ./pkg/plugin -run DataplaneConformance -update`.
func TestDataplaneConformance(t *testing.T) {
	steady := newEnv(t, "steady")
	steady.uid = "conformance-steady"
	storePhaseRows(t, steady, phaseRowsOf(steady, phaseGroups)...)
	end := steady.now.Unix()
	ids := conformanceIDs{run: steady.runID, nightly: storeNightly(t, steady.storeRoot, 20, 12, end)}
	steady.jsonData["gates"] = "gates:\n  - key: restore_p99_s\n    max_regression_pct: 10\n  - key: cluster_packing_p50\n    min: 0.95\n"
	lad := newEnv(t, "ladder-steps")
	lad.uid = "conformance-ladder"
	lad.jsonData["discoverRuns"] = false
	writeRows(t, filepath.Join(lad.runDir(), runs.FileStatsJSONL), ladderRows(lad.truth))
	ids.ladder = lad.runID

	// Every query type has a row: a new one must say what its frames are.
	covered := map[string]bool{}
	for _, tc := range conformanceCases() {
		covered[tc.model(ids)["queryType"].(string)] = true
	}
	for _, qt := range QueryTypes() {
		if !covered[qt] {
			t.Errorf("query type %s has no conformance case", qt)
		}
	}

	var rows []string
	for _, tc := range conformanceCases() {
		t.Run(tc.name, func(t *testing.T) {
			model := tc.model(ids)
			var r backend.DataResponse
			switch tc.env {
			case envSteady:
				r = steady.query(t, steady.client(t), q("A", steady.truth.Start-600, steady.truth.End+600, model))["A"]
			case envNightly:
				r = steady.query(t, steady.client(t), q("A", end-30*86400, end, model))["A"]
			case envLadder:
				r = lad.query(t, lad.client(t), q("A", lad.truth.Start-600, lad.truth.End+600, model))["A"]
			}
			if r.Error != nil {
				t.Fatalf("%v: %v", model, r.Error)
			}
			want := tc.types
			if tc.multi {
				if len(r.Frames) == 0 {
					t.Fatal("no frame")
				}
				want = slices.Repeat([]data.FrameType{numMany}, len(r.Frames))
			}
			if err := checkFrameContract(r.Frames, want); err != nil {
				t.Fatal(err)
			}
			v, err := readDataplane(r.Frames, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			alertable := want[0] != tbl
			switch {
			case alertable && v.reader == "":
				t.Fatalf("first frame %s: no sdata reader takes the response", want[0])
			case alertable && v.refs == 0:
				t.Fatalf("the %s reader read no number", v.reader)
			case !alertable && v.metaType != "":
				t.Fatalf("a response of tables read as %s", v.metaType)
			}
			rows = append(rows, conformanceRow(tc, r.Frames, v))
		})
	}
	if t.Failed() {
		return
	}
	checkDocBlock(t, filepath.Join("..", "..", "docs", "query-types.md"), "dataplane", strings.Join(rows, "\n")+"\n")
}

// conformanceRow is a case's line of the docs table.
func conformanceRow(tc conformanceCase, frames data.Frames, v readerVerdict) string {
	var kinds []string
	if tc.multi {
		kinds = append(kinds, fmt.Sprintf("%d frames, each `%s` %s", len(frames), numMany, frames[0].Meta.TypeVersion))
		frames = nil
	}
	for _, f := range frames {
		k := string(f.Meta.Type)
		if !f.Meta.TypeVersion.IsZero() {
			k += " " + f.Meta.TypeVersion.String()
		}
		kinds = append(kinds, fmt.Sprintf("`%s` %s", f.Name, k))
	}
	accepted := "none (tables: not for alert rules)"
	if v.reader != "" {
		what := "numbers"
		switch {
		case v.metaType.Kind() == data.KindTimeSeries:
			what = "series"
		case v.refs == 1:
			what = "number"
		}
		accepted = fmt.Sprintf("CanReadBasedOnMeta `%s`; %s, %d %s", v.metaType, v.reader, v.refs, what)
	}
	if len(tc.labels) > 0 {
		accepted += " labelled " + strings.Join(tc.labels, ", ")
	}
	return fmt.Sprintf("| %s | %s | %s |", tc.name, strings.Join(kinds, ", "), accepted)
}

// checkDocBlock checks that the lines between `<!-- name:begin -->` and
// `<!-- name:end -->` of the doc at path are want (with -update: writes
// them).
func checkDocBlock(t *testing.T, path, name, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := []byte("<!-- "+name+":begin -->\n"), []byte("<!-- "+name+":end -->")
	i, j := bytes.Index(b, begin), bytes.Index(b, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %s block", path, name)
	}
	got := string(b[i+len(begin) : j])
	if got == want {
		return
	}
	if !*update {
		t.Fatalf("%s: the %s table differs from the responses (rewrite with -update):\n%s\nwant\n%s", path, name, got, want)
	}
	out := slices.Concat(b[:i+len(begin)], []byte(want), b[j:])
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The conformance checks fail on what breaks the contract: an untyped
// frame, a versioned table, a numeric frame at version 0.0, a time series
// without its time field, two numbers expressions cannot tell apart, a
// number without its label; a response whose first frame is a table is
// read by no reader.
func TestDataplaneContractRules(t *testing.T) {
	one := func(name string, l data.Labels) *data.Field { return data.NewField(name, l, []*float64{nil}) }
	frame := func(tp data.FrameType, v data.FrameTypeVersion, fs ...*data.Field) *data.Frame {
		f := data.NewFrame("f", fs...)
		f.Meta = &data.FrameMeta{Type: tp, TypeVersion: v}
		return f
	}
	v01 := data.FrameTypeVersion{0, 1}
	for _, c := range []struct {
		name     string
		frames   data.Frames
		types    []data.FrameType
		labels   []string
		contract bool   // checkFrameContract passes
		reader   string // readDataplane's reader prefix; "!" an error
	}{
		{"numeric-wide 0.1", data.Frames{frame(numWide, v01, one("x", nil))}, []data.FrameType{numWide}, nil, true, "numeric"},
		{"untyped", data.Frames{data.NewFrame("f", one("x", nil))}, []data.FrameType{numWide}, nil, false, ""},
		{"table with a version", data.Frames{frame(tbl, v01, one("x", nil))}, []data.FrameType{tbl}, nil, false, ""},
		{"numeric-wide 0.0", data.Frames{frame(numWide, data.FrameTypeVersion{}, one("x", nil))}, []data.FrameType{numWide}, nil, false, "!"},
		{"time series without time", data.Frames{frame(tsWide, v01, one("x", nil))}, []data.FrameType{tsWide}, nil, false, "!"},
		{"the same number twice", data.Frames{frame(numWide, v01, one("x", nil), one("x", nil))}, []data.FrameType{numWide}, nil, false, "!"},
		{"a number without its run label", data.Frames{frame(numWide, v01, one("x", data.Labels{"run": "a"}), one("y", nil))}, []data.FrameType{numWide}, []string{"run"}, true, "!"},
		{"table first", data.Frames{frame(tbl, data.FrameTypeVersion{}, one("x", nil)), frame(numWide, v01, one("x", nil))}, []data.FrameType{tbl, numWide}, nil, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := checkFrameContract(c.frames, c.types); (err == nil) != c.contract {
				t.Errorf("contract: %v, want pass %v", err, c.contract)
			}
			v, err := readDataplane(c.frames, c.labels)
			switch {
			case c.reader == "!" && err == nil:
				t.Errorf("read by %s, want an error", v.reader)
			case c.reader != "!" && err != nil:
				t.Errorf("read: %v", err)
			case c.reader != "!" && !strings.HasPrefix(v.reader, c.reader):
				t.Errorf("reader %q, want %q", v.reader, c.reader)
			case c.reader == "" && v.reader != "":
				t.Errorf("reader %q, want none", v.reader)
			}
		})
	}
}
