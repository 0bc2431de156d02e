// Package schema describes the datasource's query model and settings as Go
// types, from which schema_test.go generates the JSON schema under
// src/schema/ with the plugin SDK's experimental/schemabuilder. The wire
// names are those of datasource.md ("Query model", "Fixed names"); the
// backend's parser (pkg/plugin/query.go) and the frontend's types
// (src/types.ts) are checked against this description by tests.
package schema

import (
	"reflect"

	"github.com/invopop/jsonschema"
)

// QueryType names a query type (the `queryType` key).
// +enum
type QueryType string

const (
	// Busy and total workers over time, their ratio, and a steady-window summary
	QueryTypePacking QueryType = "packing"
	// Stall % per node or worker pod for CPU, memory or I/O, with a pooled summary
	QueryTypePSI QueryType = "psi"
	// The 18 snapshot keys in one row
	QueryTypeSnapshots QueryType = "snapshots"
	// Total and active atelets over time, with a summary
	QueryTypeActiveActors QueryType = "activeActors"
	// Memory working set of one block, with a summary
	QueryTypeWorkingSet QueryType = "workingSet"
	// OOM kills during the run (one row)
	QueryTypeOOMEvents QueryType = "oomEvents"
	// The cluster the run ran on (one row)
	QueryTypeClusterFacts QueryType = "clusterFacts"
	// Density frontier of a run, or one row per run in range
	QueryTypeFrontier QueryType = "frontier"
	// Every server_summary and trial_summary key, one row per run
	QueryTypeSummary QueryType = "summary"
	// Catalogued runs, newest first (also the variable query)
	QueryTypeRuns QueryType = "runs"
	// Test names known to the catalogs (the second variable query)
	QueryTypeTests QueryType = "tests"
	// Run and steady-window regions
	QueryTypeAnnotations QueryType = "annotations"
	// Load steps of a ladder run and its summary
	QueryTypeLadder QueryType = "ladder"
	// Suspend/resume phase percentiles
	QueryTypePhases QueryType = "phases"
	// Gate verdicts of one stored run
	QueryTypeGates QueryType = "gates"
	// Baseline vs candidate, one row per key
	QueryTypeCompare QueryType = "compare"
	// Change points across the stored runs of a test
	QueryTypeChangePoints QueryType = "changePoints"
	// Hours since the newest stored run and runs in the last 7 days, per test name and cohort
	QueryTypeFreshness QueryType = "freshness"
)

// Scope is whose pressure stall a psi query reads.
// +enum
type Scope string

const (
	// One series per node
	ScopeNode Scope = "node"
	// One series per worker pod
	ScopePod Scope = "pod"
)

// Resource is the pressure-stall resource of a psi query.
// +enum
type Resource string

const (
	// CPU stall
	ResourceCPU Resource = "cpu"
	// Memory stall
	ResourceMemory Resource = "memory"
	// I/O stall
	ResourceIO Resource = "io"
)

// Series is how a per-node or per-pod panel shows many series; absent:
// bands above the datasource's maxSeries.
// +enum
type Series string

const (
	// Always distribution bands (min, p50, p90, p99, max) and the top series
	SeriesBands Series = "bands"
	// Every series, at panel resolution
	SeriesAll Series = "all"
)

// Align is how per-run time series lie on the time axis; absent is absolute.
// +enum
type Align string

const (
	// Each run at the time it ran
	AlignAbsolute Align = "absolute"
	// Each run shifted so its steady start lands on the range's start
	AlignElapsed Align = "elapsed"
)

// Block is whose working set a workingSet query reads.
// +enum
type Block string

const (
	// Nodes
	BlockNode Block = "node"
	// Worker pods
	BlockWorker Block = "worker"
	// Atelets
	BlockAtelet Block = "atelet"
	// Actors
	BlockActor Block = "actor"
	// Per actor
	BlockPerActor Block = "per_actor"
)

// PhaseOp filters the phases of a phases query; absent is both.
// +enum
type PhaseOp string

const (
	// Restore phases
	PhaseOpRestore PhaseOp = "restore"
	// Checkpoint phases
	PhaseOpCheckpoint PhaseOp = "checkpoint"
)

// PhaseLayer filters the layer of a phases query; absent is both.
// +enum
type PhaseLayer string

const (
	// The atelet layer
	PhaseLayerAtelet PhaseLayer = "atelet"
	// The ateom layer
	PhaseLayerAteom PhaseLayer = "ateom"
)

// Format is the frame shape of summary, gates and ladder; absent is table.
// +enum
type Format string

const (
	// Tables, one row per run, gate or step
	FormatTable Format = "table"
	// numeric-multi frames with one number field each, one per (run, key) or (step, key), for alert rules and recording rules
	FormatNumeric Format = "numeric"
)

// Labels says which labels numeric frames carry beyond the stable ones;
// absent: only the stable labels (test_name, cohort keys, key, step).
// +enum
type Labels string

const (
	// Also run and tag (a new alert instance and recorded series per run)
	LabelsRun Labels = "run"
)

// StringOrList is a string or a list of strings: a multi-value dashboard
// variable, or a comma-separated list.
type StringOrList []string

// JSONSchema describes StringOrList as either form.
func (StringOrList) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"},
		{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}}
}

// RunRef is `run`: a StringOrList whose absence means range.
type RunRef StringOrList

// JSONSchema describes RunRef as either form, defaulting to range.
func (RunRef) JSONSchema() *jsonschema.Schema {
	s := StringOrList(nil).JSONSchema()
	s.Default = "range"
	return s
}

// RunFilter is the run a per-run query reads: `run` and, for run latest,
// the test name and tag it is narrowed to.
type RunFilter struct {
	// A run id, latest (the newest run, of testName when set), range (the dashboard time range; the default), a $variable, or a list of ids
	Run RunRef `json:"run,omitempty"`
	// Only runs of this test ($variables allowed)
	TestName string `json:"testName,omitempty"`
	// Only runs with this tag, usually the commit under test
	Tag string `json:"tag,omitempty"`
}

// AlignOption is the align key of the per-run time-series types.
type AlignOption struct {
	// elapsed overlays runs: each run's steady start on the range's start; absent is absolute
	Align Align `json:"align,omitempty"`
}

// NumericOptions are the options of the types that take format numeric.
type NumericOptions struct {
	// table (the default) or numeric: numeric-multi frames, one number field each, for alert rules
	Format Format `json:"format,omitempty" jsonschema:"default=table"`
	// The keys a numeric answer gives (comma-separated or a list); absent: every key
	Keys StringOrList `json:"keys,omitempty"`
	// run adds the labels run and tag to numeric frames; absent: only the stable labels
	Labels Labels `json:"labels,omitempty"`
}

// PackingQuery is packing: busy, total and ratio series and a summary.
type PackingQuery struct {
	RunFilter
	AlignOption
}

// PSIQuery is psi: one series per node or pod and a pooled summary.
type PSIQuery struct {
	RunFilter
	AlignOption
	// Whose stall: nodes or worker pods
	Scope Scope `json:"scope,omitempty" jsonschema:"default=node"`
	// Which stall: cpu, memory or io
	Resource Resource `json:"resource,omitempty" jsonschema:"default=cpu"`
	// bands or all; absent: bands above the datasource's maxSeries
	Series Series `json:"series,omitempty"`
}

// ActiveActorsQuery is activeActors: total and active atelets.
type ActiveActorsQuery struct {
	RunFilter
	AlignOption
}

// WorkingSetQuery is workingSet: total and max GiB of one block.
type WorkingSetQuery struct {
	RunFilter
	AlignOption
	// Whose working set
	Block Block `json:"block,omitempty" jsonschema:"default=node"`
}

// RunQuery is a per-run type with no options of its own (snapshots,
// oomEvents, clusterFacts, frontier, runs).
type RunQuery struct {
	RunFilter
}

// SummaryQuery is summary: one row per run, or numeric frames.
type SummaryQuery struct {
	RunFilter
	NumericOptions
}

// LadderQuery is ladder: one row per step and the summary, or numeric
// frames per (step, key).
type LadderQuery struct {
	RunFilter
	NumericOptions
}

// GatesQuery is gates: the gate verdicts of one stored run.
type GatesQuery struct {
	RunFilter
	NumericOptions
	// The run max_regression_pct gates compare against: latest (the newest other run of the test and cohort), a run id or a $variable; absent: none
	Baseline string `json:"baseline,omitempty"`
}

// PhasesQuery is phases: suspend/resume phase percentiles.
type PhasesQuery struct {
	RunFilter
	// restore or checkpoint; absent is both
	Op PhaseOp `json:"op,omitempty"`
	// atelet or ateom; absent is both
	Layer PhaseLayer `json:"layer,omitempty"`
}

// AnnotationsQuery is annotations: run and steady-window regions.
type AnnotationsQuery struct {
	RunFilter
	// Add a region per ladder step of stored ladder runs
	LadderSteps bool `json:"ladderSteps,omitempty"`
	// Add a point at each change point of testName's stored runs
	ChangePoints bool `json:"changePoints,omitempty"`
	// The keys searched for change points (comma-separated or a list); absent: every numeric summary key
	Keys StringOrList `json:"keys,omitempty"`
	// Runs a segment needs before a change point is judged (default 3; 1 judges the newest run alone)
	MinRuns *int `json:"minRuns,omitempty" jsonschema:"minimum=1"`
}

// CompareQuery is compare: two runs key by key.
type CompareQuery struct {
	// Run A: a stored run id or a $variable
	Baseline string `json:"baseline"`
	// Run B: a stored run id or a $variable
	Candidate string `json:"candidate"`
}

// ChangePointsQuery is changePoints: change points across the stored runs
// of a test in the dashboard range.
type ChangePointsQuery struct {
	// The test whose stored runs are searched ($variables allowed)
	TestName string `json:"testName"`
	// The keys searched (comma-separated or a list); absent: every numeric summary key
	Keys StringOrList `json:"keys,omitempty"`
	// Runs a segment needs before a change point is judged (default 3; 1 judges the newest run alone)
	MinRuns *int `json:"minRuns,omitempty" jsonschema:"minimum=1"`
}

// TestsQuery is tests: the test names, no options.
type TestsQuery struct{}

// FreshnessQuery is freshness: per test name and cohort, numeric-wide;
// it ignores the dashboard range and takes no options.
type FreshnessQuery struct{}

// QueryTypeInfo is one query type of the schema: its name, what it
// answers, and the Go type of its options.
type QueryTypeInfo struct {
	Type        QueryType
	Description string
	GoType      reflect.Type
}

// QueryTypes lists every query type in the order the editor's picker lists
// them (src/types.ts QUERY_TYPES).
func QueryTypes() []QueryTypeInfo {
	return []QueryTypeInfo{
		{QueryTypePacking, "Busy and total workers over time, their ratio, and a steady-window summary", reflect.TypeFor[PackingQuery]()},
		{QueryTypePSI, "Stall % per node or worker pod for CPU, memory or I/O, with a pooled summary", reflect.TypeFor[PSIQuery]()},
		{QueryTypeSnapshots, "Snapshot, restore and checkpoint latency, size and throughput: the 18 snapshot keys in one row", reflect.TypeFor[RunQuery]()},
		{QueryTypeActiveActors, "Total and active atelets over time, with a summary", reflect.TypeFor[ActiveActorsQuery]()},
		{QueryTypeWorkingSet, "Memory working set (total and max GiB) of nodes, workers, atelets or actors, with a summary", reflect.TypeFor[WorkingSetQuery]()},
		{QueryTypeOOMEvents, "OOM kills on nodes and in worker pods during the run (one row)", reflect.TypeFor[RunQuery]()},
		{QueryTypeClusterFacts, "The cluster the run ran on: nodes, machine type, pods, limits (one row)", reflect.TypeFor[RunQuery]()},
		{QueryTypeFrontier, "Density frontier of a run; with run range, one row per run in range", reflect.TypeFor[RunQuery]()},
		{QueryTypeSummary, "Every server_summary and trial_summary key, one row per run; format numeric: one numeric frame per (run, key)", reflect.TypeFor[SummaryQuery]()},
		{QueryTypeRuns, "Catalogued runs with windows, peak users and exit code, newest first", reflect.TypeFor[RunQuery]()},
		{QueryTypeTests, "Test names known to the catalogs (one column)", reflect.TypeFor[TestsQuery]()},
		{QueryTypeAnnotations, "Run and steady-window regions, ladder steps and change points", reflect.TypeFor[AnnotationsQuery]()},
		{QueryTypeLadder, "Load steps of a ladder run, one row per step, and the summary; format numeric: one numeric frame per (step, key)", reflect.TypeFor[LadderQuery]()},
		{QueryTypePhases, "p50/p90/p95/max ms per checkpoint and restore phase", reflect.TypeFor[PhasesQuery]()},
		{QueryTypeGates, "Gate verdicts of one stored run; format numeric: gate_passed per gate and gates_failed", reflect.TypeFor[GatesQuery]()},
		{QueryTypeCompare, "Baseline and candidate run key by key: values, delta %, direction, verdict", reflect.TypeFor[CompareQuery]()},
		{QueryTypeChangePoints, "Change points across the stored runs of a test in the dashboard range, with acknowledgements", reflect.TypeFor[ChangePointsQuery]()},
		{QueryTypeFreshness, "Per test name and cohort: hours_since_last_run and runs_last_7d (ignores the dashboard range)", reflect.TypeFor[FreshnessQuery]()},
	}
}

// Enums lists the enumerations the schema spells out value by value.
func Enums() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[QueryType](), reflect.TypeFor[Scope](), reflect.TypeFor[Resource](),
		reflect.TypeFor[Series](), reflect.TypeFor[Align](), reflect.TypeFor[Block](),
		reflect.TypeFor[PhaseOp](), reflect.TypeFor[PhaseLayer](), reflect.TypeFor[Format](),
		reflect.TypeFor[Labels](),
	}
}
