package dashboardtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/plugin"
	"github.com/substrate/density/pkg/runs"
)

// densityQuery is a target of this plugin as a dashboard stores it. Unknown
// keys are an error: a typo (`queryTyp`, `blocks`) would otherwise be
// silently ignored by the backend and show the default.
type densityQuery struct {
	RefID      string          `json:"refId"`
	Datasource *dashRef        `json:"datasource,omitempty"`
	Hide       bool            `json:"hide,omitempty"`
	QueryType  string          `json:"queryType"`
	Run        json.RawMessage `json:"run,omitempty"`
	Scope      string          `json:"scope,omitempty"`
	Resource   string          `json:"resource,omitempty"`
	Block      string          `json:"block,omitempty"`
	TestName   string          `json:"testName,omitempty"`
	Tag        string          `json:"tag,omitempty"`
	// LadderSteps adds the step regions to an annotation query.
	LadderSteps bool `json:"ladderSteps,omitempty"`
	// Op and Layer filter a phases query.
	Op    string `json:"op,omitempty"`
	Layer string `json:"layer,omitempty"`
	// ChangePoints adds the change points of testName to an annotation
	// query.
	ChangePoints bool `json:"changePoints,omitempty"`
	// Align places per-run time series: absolute or elapsed.
	Align string `json:"align,omitempty"`
	// Baseline and Candidate are the runs of compare; gates takes a
	// baseline.
	Baseline  string `json:"baseline,omitempty"`
	Candidate string `json:"candidate,omitempty"`
	// Keys limits changePoints.
	Keys json.RawMessage `json:"keys,omitempty"`
}

func (densityQuery) ImplementsDataqueryVariant() {}
func (densityQuery) DataqueryType() string       { return dashPluginID }
func (q densityQuery) Equals(o variants.Dataquery) bool {
	oq, ok := o.(densityQuery)
	return ok && q.RefID == oq.RefID && q.QueryType == oq.QueryType && bytes.Equal(q.Run, oq.Run) &&
		q.Scope == oq.Scope && q.Resource == oq.Resource && q.Block == oq.Block && q.TestName == oq.TestName && q.Tag == oq.Tag &&
		q.LadderSteps == oq.LadderSteps && q.ChangePoints == oq.ChangePoints && q.Align == oq.Align &&
		q.Baseline == oq.Baseline && q.Candidate == oq.Candidate && bytes.Equal(q.Keys, oq.Keys)
}
func (q densityQuery) Validate() error { return q.validate() }

func decodeDensityQuery(raw []byte) (densityQuery, error) {
	var q densityQuery
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, fmt.Errorf("query %s: %w", raw, err)
	}
	return q, nil
}

// runs returns the run references (a string or a list of strings).
func (q densityQuery) runs() ([]string, error) {
	if len(q.Run) == 0 {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(q.Run, &s); err == nil {
		return []string{s}, nil
	}
	var l []string
	if err := json.Unmarshal(q.Run, &l); err != nil {
		return nil, fmt.Errorf(`"run" must be a string or a list of strings, not %s`, q.Run)
	}
	return l, nil
}

// listTypes take testName/tag filters and run range as "every run starting
// in the range".
var listTypes = []string{plugin.QueryRuns, plugin.QueryFrontier, plugin.QuerySummary, plugin.QueryAnnotations}

// runlessTypes read no run: compare names its two runs, changePoints a
// test name over the range.
var runlessTypes = []string{plugin.QueryTests, plugin.QueryCompare, plugin.QueryChangePoints}

// alignedTypes are the per-run time-series types that take align.
var alignedTypes = []string{plugin.QueryPacking, plugin.QueryPSI, plugin.QueryActiveActors, plugin.QueryWorkingSet}

// verdictTables answer a table of several rows per query (one per gate,
// key or change point), not a one-row summary.
var verdictTables = []string{plugin.QueryGates, plugin.QueryCompare, plugin.QueryChangePoints}

// validate checks the query type and its options the way the backend will
// read them (datasource.md "Query model"). Dashboards spell every option
// out: the backend's defaults would hide what a panel shows.
func (q densityQuery) validate() error {
	if !slices.Contains(plugin.QueryTypes(), q.QueryType) {
		return fmt.Errorf("refId %s: unknown queryType %q", q.RefID, q.QueryType)
	}
	if q.RefID == "" {
		return fmt.Errorf("a %s query has no refId", q.QueryType)
	}
	refs, err := q.runs()
	if err != nil {
		return err
	}
	runless := slices.Contains(runlessTypes, q.QueryType)
	if !runless && len(refs) == 0 {
		return fmt.Errorf("refId %s (%s): no run (want an id, $run, latest or range)", q.RefID, q.QueryType)
	}
	if runless && q.QueryType != plugin.QueryTests && len(refs) > 0 {
		return fmt.Errorf("refId %s: %s reads no run", q.RefID, q.QueryType)
	}
	if q.QueryType == plugin.QueryGates && (len(refs) != 1 || refs[0] == runs.IDRange) {
		return fmt.Errorf("refId %s: gates reads one stored run (an id, $run or latest)", q.RefID)
	}
	for _, r := range refs {
		if len(varRefs(r)) > 0 || r == runs.IDRange || r == runs.IDLatest {
			continue
		}
		if _, err := runs.ParseRunID(r); err != nil {
			return fmt.Errorf("refId %s: run %q: %v", q.RefID, r, err)
		}
	}
	want := func(key, v string, allowed ...string) error {
		if !slices.Contains(allowed, v) {
			return fmt.Errorf("refId %s (%s): %s %q is not one of %v", q.RefID, q.QueryType, key, v, allowed)
		}
		return nil
	}
	forbid := func(key, v string) error {
		if v != "" {
			return fmt.Errorf("refId %s: %s does not take %s", q.RefID, q.QueryType, key)
		}
		return nil
	}
	var errs []error
	switch q.QueryType {
	case plugin.QueryPSI:
		errs = append(errs, want("scope", q.Scope, "node", "pod"), want("resource", q.Resource, "cpu", "memory", "io"))
	default:
		errs = append(errs, forbid("scope", q.Scope), forbid("resource", q.Resource))
	}
	if q.QueryType == plugin.QueryPhases {
		errs = append(errs, want("op", q.Op, "", phases.OpRestore, phases.OpCheckpoint), want("layer", q.Layer, "", phases.LayerAtelet, phases.LayerAteom))
	} else {
		errs = append(errs, forbid("op", q.Op), forbid("layer", q.Layer))
	}
	if q.QueryType == plugin.QueryWorkingSet {
		errs = append(errs, want("block", q.Block, harvest.WorkingSetBlocks()[:]...))
	} else {
		errs = append(errs, forbid("block", q.Block))
	}
	// testName/tag filter the list types; per-run types read testName only
	// for `latest`; changePoints needs it.
	switch {
	case q.QueryType == plugin.QueryChangePoints:
		if q.TestName == "" {
			errs = append(errs, fmt.Errorf("refId %s: changePoints needs testName", q.RefID))
		}
		errs = append(errs, forbid("tag", q.Tag))
	case !slices.Contains(listTypes, q.QueryType) && !(len(refs) == 1 && refs[0] == runs.IDLatest):
		errs = append(errs, forbid("testName", q.TestName), forbid("tag", q.Tag))
	}
	if slices.Contains(alignedTypes, q.QueryType) {
		if q.Align != "" { // the values of datasource.md "Query model"
			errs = append(errs, want("align", q.Align, "absolute", "elapsed"))
		}
	} else {
		errs = append(errs, forbid("align", q.Align))
	}
	switch q.QueryType {
	case plugin.QueryCompare:
		if q.Baseline == "" || q.Candidate == "" {
			errs = append(errs, fmt.Errorf("refId %s: compare needs baseline and candidate", q.RefID))
		}
	case plugin.QueryGates:
		errs = append(errs, forbid("candidate", q.Candidate))
	default:
		errs = append(errs, forbid("baseline", q.Baseline), forbid("candidate", q.Candidate))
	}
	if q.QueryType != plugin.QueryChangePoints && len(q.Keys) > 0 {
		errs = append(errs, fmt.Errorf("refId %s: %s does not take keys", q.RefID, q.QueryType))
	}
	if q.QueryType != plugin.QueryAnnotations && (q.LadderSteps || q.ChangePoints) {
		errs = append(errs, fmt.Errorf("refId %s: ladderSteps and changePoints are annotation options", q.RefID))
	}
	if q.ChangePoints && q.TestName == "" {
		errs = append(errs, fmt.Errorf("refId %s: change-point annotations need testName", q.RefID))
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// variableQuery is the stored query of a query variable (H5's
// DensityVariableQuery).
type variableQuery struct {
	RefID     string `json:"refId"`
	QueryType string `json:"queryType"`
	TestName  string `json:"testName,omitempty"`
	Tag       string `json:"tag,omitempty"`
}

func decodeVariableQuery(raw []byte) (variableQuery, error) {
	var q variableQuery
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, err
	}
	if q.QueryType != plugin.QueryRuns && q.QueryType != plugin.QueryTests {
		return q, fmt.Errorf("variable queryType %q is not runs or tests", q.QueryType)
	}
	return q, nil
}
