package plugin

// The dashboard smoke test. There is no Grafana server here, so
// this test does what Grafana does with the provisioned dashboards:
//
//  1. Static: decode every dashboards/*.json strictly with the Grafana
//     foundation SDK's dashboard types (plus a strict decoder for this
//     plugin's query model), check every datasource reference against
//     provisioning/datasources, every $variable against the dashboard's
//     variables, every query's type and options, data-link targets, unique
//     panel ids and the grid, and that src/plugin.json, the provisioning
//     provider and docker-compose.yaml agree on where the dashboards are.
//  2. Smoke: serve the datasource over Grafana's plugin gRPC protocol
//     (datasourcetest) with the provisioned settings, against a real
//     Prometheus loaded with the demo run and a file:// results store laid
//     out the way docker-compose's demo-init lays it out (the export's
//     artifacts included). Variables are resolved by running their queries,
//     every panel's queries are sent as Grafana sends them, the panel's
//     transformations are applied, and the result must have the shape the
//     visualization needs, with non-null values where the demo run has data
//     and nulls (with a notice) where it cannot (no Kubernetes).

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	sdkdashboard "github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/datasourcetest"
	"sigs.k8s.io/yaml"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/runs"
)

const (
	dashPluginID = "substrate-density-datasource"
	// dashRepo is the repository root seen from this package's directory
	// (go test runs in the package directory).
	dashRepo = "../.."
)

// ---------------------------------------------------------------------------
// Loading

// dashFile is one dashboard JSON file, decoded twice: strictly with the
// foundation SDK (the check) and loosely into dashDoc (to walk it).
type dashFile struct {
	file string
	raw  []byte
	doc  dashDoc
}

type dashDoc struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Time          struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Panels     []dashPanel `json:"panels"`
	Templating struct {
		List []dashVar `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []dashAnno `json:"list"`
	} `json:"annotations"`
}

type dashRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashPanel struct {
	ID      int      `json:"id"`
	Type    string   `json:"type"`
	Title   string   `json:"title"`
	DS      *dashRef `json:"datasource"`
	GridPos struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets         []json.RawMessage `json:"targets"`
	Transformations []dashTransform   `json:"transformations"`
	FieldConfig     json.RawMessage   `json:"fieldConfig"`
	Options         json.RawMessage   `json:"options"`
	Collapsed       bool              `json:"collapsed"`
	Panels          []dashPanel       `json:"panels"`
	// TimeFrom is the panel's relative time override ("3h": the last
	// three hours before now, whatever the dashboard range).
	TimeFrom string `json:"timeFrom"`
}

type dashTransform struct {
	ID      string          `json:"id"`
	Options json.RawMessage `json:"options"`
	Filter  *struct {
		ID      string `json:"id"`
		Options string `json:"options"`
	} `json:"filter"`
	Disabled bool `json:"disabled"`
}

type dashVar struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	DS         *dashRef        `json:"datasource"`
	Query      json.RawMessage `json:"query"`
	Current    json.RawMessage `json:"current"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
}

type dashAnno struct {
	Name    string          `json:"name"`
	BuiltIn int             `json:"builtIn"`
	DS      *dashRef        `json:"datasource"`
	Enable  bool            `json:"enable"`
	Target  json.RawMessage `json:"target"`
}

// dashFieldConfig is the part of a panel's fieldConfig the checks read.
type dashFieldConfig struct {
	Defaults struct {
		Unit string `json:"unit"`
	} `json:"defaults"`
	Overrides []struct {
		Matcher struct {
			ID      string `json:"id"`
			Options string `json:"options"`
		} `json:"matcher"`
		Properties []struct {
			ID    string          `json:"id"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	} `json:"overrides"`
}

type dashLink struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	TargetBlank bool   `json:"targetBlank"`
}

// flat lists every panel, those of collapsed rows included (rows too).
func (d dashDoc) flat() []dashPanel {
	var out []dashPanel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

func (d dashDoc) variable(name string) (dashVar, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return dashVar{}, false
}

// registerDensityQuery teaches the foundation SDK's runtime (a process-wide
// registry) this plugin's query model, so panel targets decode strictly.
var registerDensityQuery = sync.OnceFunc(func() {
	plugins.RegisterDefaultPlugins()
	decode := func(raw []byte) (variants.Dataquery, error) {
		q, err := decodeDensityQuery(raw)
		return q, err
	}
	cog.NewRuntime().RegisterDataqueryVariant(variants.DataqueryConfig{
		Identifier: dashPluginID, DataqueryUnmarshaler: decode, StrictDataqueryUnmarshaler: decode,
	})
})

func loadDashboards(t *testing.T) []dashFile {
	t.Helper()
	registerDensityQuery()
	paths, err := filepath.Glob(filepath.Join(dashRepo, "dashboards", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards/*.json found (%v)", err)
	}
	var out []dashFile
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := dashFile{file: filepath.Base(p), raw: raw}
		var d sdkdashboard.Dashboard
		if err := sdkError(d.UnmarshalJSONStrict(raw)); err != nil {
			t.Errorf("%s: not a strictly valid Grafana dashboard: %v", f.file, err)
		} else if err := sdkError(d.Validate()); err != nil {
			t.Errorf("%s: dashboard validation: %v", f.file, err)
		}
		if err := json.Unmarshal(raw, &f.doc); err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		out = append(out, f)
	}
	return out
}

// sdkError drops the empty cog.BuildErrors some generated decoders return
// for "no error" (a nil slice in a non-nil error interface).
func sdkError(err error) error {
	var be cog.BuildErrors
	if errors.As(err, &be) && len(be) == 0 {
		return nil
	}
	return err
}

// ---------------------------------------------------------------------------
// The query model, strictly

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
var listTypes = []string{QueryRuns, QueryFrontier, QuerySummary, QueryAnnotations}

// runlessTypes read no run: compare names its two runs, changePoints a
// test name over the range.
var runlessTypes = []string{QueryTests, QueryCompare, QueryChangePoints}

// alignedTypes are the per-run time-series types that take align.
var alignedTypes = []string{QueryPacking, QueryPSI, QueryActiveActors, QueryWorkingSet}

// verdictTables answer a table of several rows per query (one per gate,
// key or change point), not a one-row summary.
var verdictTables = []string{QueryGates, QueryCompare, QueryChangePoints}

// validate checks the query type and its options the way the backend will
// read them (datasource.md "Query model"). Dashboards spell every option
// out: the backend's defaults would hide what a panel shows.
func (q densityQuery) validate() error {
	if !slices.Contains(queryTypes(), q.QueryType) {
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
	if runless && q.QueryType != QueryTests && len(refs) > 0 {
		return fmt.Errorf("refId %s: %s reads no run", q.RefID, q.QueryType)
	}
	if q.QueryType == QueryGates && (len(refs) != 1 || refs[0] == runs.IDRange) {
		return fmt.Errorf("refId %s: gates reads one stored run (an id, $run or latest)", q.RefID)
	}
	for _, r := range refs {
		if _, isVar := unresolvedVariable(r); isVar || r == runs.IDRange || r == runs.IDLatest {
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
	case QueryPSI:
		errs = append(errs, want("scope", q.Scope, "node", "pod"), want("resource", q.Resource, "cpu", "memory", "io"))
	default:
		errs = append(errs, forbid("scope", q.Scope), forbid("resource", q.Resource))
	}
	if q.QueryType == QueryPhases {
		errs = append(errs, want("op", q.Op, "", phases.OpRestore, phases.OpCheckpoint), want("layer", q.Layer, "", phases.LayerAtelet, phases.LayerAteom))
	} else {
		errs = append(errs, forbid("op", q.Op), forbid("layer", q.Layer))
	}
	if q.QueryType == QueryWorkingSet {
		errs = append(errs, want("block", q.Block, harvest.WorkingSetBlocks[:]...))
	} else {
		errs = append(errs, forbid("block", q.Block))
	}
	// testName/tag filter the list types; per-run types read testName only
	// for `latest`; changePoints needs it.
	switch {
	case q.QueryType == QueryChangePoints:
		if q.TestName == "" {
			errs = append(errs, fmt.Errorf("refId %s: changePoints needs testName", q.RefID))
		}
		errs = append(errs, forbid("tag", q.Tag))
	case !slices.Contains(listTypes, q.QueryType) && !(len(refs) == 1 && refs[0] == runs.IDLatest):
		errs = append(errs, forbid("testName", q.TestName), forbid("tag", q.Tag))
	}
	if slices.Contains(alignedTypes, q.QueryType) {
		if q.Align != "" {
			errs = append(errs, want("align", q.Align, alignAbsolute, alignElapsed))
		}
	} else {
		errs = append(errs, forbid("align", q.Align))
	}
	switch q.QueryType {
	case QueryCompare:
		if q.Baseline == "" || q.Candidate == "" {
			errs = append(errs, fmt.Errorf("refId %s: compare needs baseline and candidate", q.RefID))
		}
	case QueryGates:
		errs = append(errs, forbid("candidate", q.Candidate))
	default:
		errs = append(errs, forbid("baseline", q.Baseline), forbid("candidate", q.Candidate))
	}
	if q.QueryType != QueryChangePoints && len(q.Keys) > 0 {
		errs = append(errs, fmt.Errorf("refId %s: %s does not take keys", q.RefID, q.QueryType))
	}
	if q.QueryType != QueryAnnotations && (q.LadderSteps || q.ChangePoints) {
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
	if q.QueryType != QueryRuns && q.QueryType != QueryTests {
		return q, fmt.Errorf("variable queryType %q is not runs or tests", q.QueryType)
	}
	return q, nil
}

// ---------------------------------------------------------------------------
// Provisioning

type provDatasource struct {
	Name           string            `json:"name"`
	UID            string            `json:"uid"`
	Type           string            `json:"type"`
	Access         string            `json:"access"`
	OrgID          int               `json:"orgId"`
	URL            string            `json:"url"`
	IsDefault      bool              `json:"isDefault"`
	Editable       bool              `json:"editable"`
	JSONData       map[string]any    `json:"jsonData"`
	SecureJSONData map[string]string `json:"secureJsonData"`
}

// loadProvisioning reads provisioning/datasources/*.yml strictly (field
// names of Grafana's provisioning format that these files use).
func loadProvisioning(t *testing.T) map[string]provDatasource {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dashRepo, "provisioning", "datasources", "*.y*ml"))
	if len(paths) == 0 {
		t.Fatal("no provisioning/datasources/*.yml")
	}
	out := map[string]provDatasource{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			APIVersion  int              `json:"apiVersion"`
			Datasources []provDatasource `json:"datasources"`
		}
		if err := yaml.UnmarshalStrict(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, d := range f.Datasources {
			if d.UID == "" {
				t.Errorf("%s: datasource %q has no uid (dashboards reference uids)", p, d.Name)
			}
			if _, dup := out[d.UID]; dup {
				t.Errorf("%s: duplicate datasource uid %q", p, d.UID)
			}
			out[d.UID] = d
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Variables and interpolation

// builtinVars are Grafana's own $__ variables and macros the dashboards use.
var builtinVars = []string{"__all", "__value", "__data", "__url_time_range", "__from", "__to", "__interval", "__range"}

// varRefRe finds $name, ${name...} and [[name]].
var varRefRe = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)([.:][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\[\[([A-Za-z_][A-Za-z0-9_]*)\]\]`)

// strings walks every string of a JSON document (markdown included).
func jsonStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			jsonStrings(e, f)
		}
	case map[string]any:
		for _, e := range x {
			jsonStrings(e, f)
		}
	}
}

// varRefs returns the variable names a string references.
func varRefs(s string) []string {
	var out []string
	for _, m := range varRefRe.FindAllStringSubmatch(s, -1) {
		for _, g := range []string{m[1], m[3], m[4]} {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// dashVars is the resolved value of each variable.
type dashVars map[string][]string

// interpolate replaces variables the way Grafana's template service does
// for the formats the dashboards use; several values are joined with join.
func (vs dashVars) interpolate(s, join string) string {
	return varRefRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRefRe.FindStringSubmatch(m)
		name := sub[1] + sub[3] + sub[4]
		vals, ok := vs[name]
		if !ok {
			return m
		}
		if strings.HasPrefix(sub[2], ":") {
			switch sub[2][1:] {
			case "percentencode":
				out := make([]string, len(vals))
				for i, v := range vals {
					out[i] = encodeURIComponent(v)
				}
				return strings.Join(out, ",")
			case "csv":
				return strings.Join(vals, ",")
			}
		}
		return strings.Join(vals, join)
	})
}

// encodeURIComponent is JavaScript's (Grafana's percentencode format).
func encodeURIComponent(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// ---------------------------------------------------------------------------
// Static checks

func TestDashboardsStatic(t *testing.T) {
	dashes := loadDashboards(t)
	prov := loadProvisioning(t)
	uids := map[string]dashDoc{}
	for _, f := range dashes {
		uids[f.doc.UID] = f.doc
	}

	for _, f := range dashes {
		d := f.doc
		t.Run(f.file, func(t *testing.T) {
			if d.UID == "" || d.Title == "" {
				t.Errorf("uid %q title %q: both are required (links and provisioning use the uid)", d.UID, d.Title)
			}
			// Grafana 12 writes schemaVersion 41/42; an older one would be
			// migrated on every load.
			if d.SchemaVersion < 41 {
				t.Errorf("schemaVersion %d, want >= 41 (Grafana 12)", d.SchemaVersion)
			}

			defined := map[string]bool{}
			for _, v := range d.Templating.List {
				if defined[v.Name] {
					t.Errorf("variable %q defined twice", v.Name)
				}
				defined[v.Name] = true
			}
			// Every $reference anywhere in the dashboard is a variable of
			// this dashboard or a Grafana built-in.
			var doc any
			if err := json.Unmarshal(f.raw, &doc); err != nil {
				t.Fatal(err)
			}
			jsonStrings(doc, func(s string) {
				for _, name := range varRefs(s) {
					if !defined[name] && !slices.Contains(builtinVars, name) {
						t.Errorf("%q references $%s, which is not a variable of this dashboard", s, name)
					}
				}
			})

			dsVar := checkDatasourceVariable(t, d, prov)
			checkRef := func(where string, ref *dashRef) {
				t.Helper()
				if ref == nil {
					t.Errorf("%s: no datasource reference (the default datasource is not pinned)", where)
					return
				}
				uid := ref.UID
				if uid == "${"+dsVar+"}" || uid == "$"+dsVar {
					uid = "substrate-density"
					if v, ok := d.variable(dsVar); ok {
						uid = currentValues(t, v)[0]
					}
				}
				p, ok := prov[uid]
				if !ok {
					t.Errorf("%s: datasource uid %q (from %q) is not provisioned", where, uid, ref.UID)
					return
				}
				if ref.Type != p.Type {
					t.Errorf("%s: datasource type %q, provisioned %q is %q", where, ref.Type, uid, p.Type)
				}
			}

			for _, v := range d.Templating.List {
				if v.Type != "query" {
					continue
				}
				checkRef("variable "+v.Name, v.DS)
				if _, err := decodeVariableQuery(v.Query); err != nil {
					t.Errorf("variable %s: query %s: %v", v.Name, v.Query, err)
				}
			}
			for _, a := range d.Annotations.List {
				if a.BuiltIn == 1 {
					continue
				}
				checkRef("annotation "+a.Name, a.DS)
				q, err := decodeDensityQuery(a.Target)
				if err == nil {
					err = q.validate()
				}
				if err != nil {
					t.Errorf("annotation %s: %v", a.Name, err)
				} else if q.QueryType != QueryAnnotations {
					t.Errorf("annotation %s: queryType %q, want annotations", a.Name, q.QueryType)
				}
			}

			ids := map[int]string{}
			occupied := map[[2]int]string{} // grid cell -> panel
			for _, p := range d.flat() {
				where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
				if p.ID <= 0 {
					t.Errorf("%s: panel ids must be set (stable ids keep links and the smoke log meaningful)", where)
				}
				if other, dup := ids[p.ID]; dup {
					t.Errorf("%s: id also used by %q", where, other)
				}
				ids[p.ID] = p.Title
				g := p.GridPos
				if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
					t.Errorf("%s: gridPos %+v outside the 24-column grid", where, g)
				}
				for x := g.X; x < g.X+g.W; x++ {
					for y := g.Y; y < g.Y+g.H; y++ {
						c := [2]int{x, y}
						if o, ok := occupied[c]; ok {
							t.Errorf("%s overlaps %s at (%d,%d)", where, o, x, y)
						}
						occupied[c] = where
					}
				}
				if p.Type == "row" || p.Type == "text" {
					if len(p.Targets) > 0 {
						t.Errorf("%s: a %s panel has queries", where, p.Type)
					}
					continue
				}
				checkRef(where, p.DS)
				if len(p.Targets) == 0 {
					t.Errorf("%s: no queries", where)
				}
				refIDs := map[string]bool{}
				for _, raw := range p.Targets {
					q, err := decodeDensityQuery(raw)
					if err == nil {
						err = q.validate()
					}
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					if refIDs[q.RefID] {
						t.Errorf("%s: duplicate refId %s", where, q.RefID)
					}
					refIDs[q.RefID] = true
					checkRef(where+" "+q.RefID, q.Datasource)
				}
				checkPanelConfig(t, where, p, uids)
			}
		})
	}

	t.Run("plugin.json includes", func(t *testing.T) { checkIncludes(t, dashes) })
	t.Run("provisioning provider and compose", func(t *testing.T) { checkProviderAndCompose(t, prov) })
}

// checkDatasourceVariable finds the datasource variable (the dashboards'
// panels point at ${datasource}) and checks its default is provisioned.
func checkDatasourceVariable(t *testing.T, d dashDoc, prov map[string]provDatasource) string {
	t.Helper()
	for _, v := range d.Templating.List {
		if v.Type != "datasource" {
			continue
		}
		var pluginType string
		if err := json.Unmarshal(v.Query, &pluginType); err != nil || pluginType != dashPluginID {
			t.Errorf("datasource variable %s: query %s, want %q", v.Name, v.Query, dashPluginID)
		}
		cur := currentValues(t, v)
		if len(cur) != 1 || prov[cur[0]].Type != dashPluginID {
			t.Errorf("datasource variable %s: current %v is not a provisioned %s datasource", v.Name, cur, dashPluginID)
		}
		return v.Name
	}
	t.Errorf("no datasource variable: panels could only point at one fixed datasource")
	return ""
}

// currentValues is a variable's saved current value(s).
func currentValues(t *testing.T, v dashVar) []string {
	t.Helper()
	if len(v.Current) == 0 {
		return nil
	}
	var cur struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(v.Current, &cur); err != nil {
		t.Fatalf("variable %s current: %v", v.Name, err)
	}
	var s string
	if json.Unmarshal(cur.Value, &s) == nil {
		return []string{s}
	}
	var l []string
	if err := json.Unmarshal(cur.Value, &l); err != nil {
		t.Fatalf("variable %s current value %s: %v", v.Name, cur.Value, err)
	}
	return l
}

// grafanaUnits are the unit ids the dashboards may use (datasource.md
// "Frames" plus plain numbers); a typo would render raw numbers.
var grafanaUnits = []string{"", "none", "short", "percentunit", "percent", "gbytes", "mbytes", "MiBs", "s", "ms", "reqps"}

// knownTransforms are the transformations the smoke test emulates.
var knownTransforms = []string{"filterFieldsByName", "organize", "joinByField", "sortBy"}

// checkPanelConfig checks units, field-config strictness, transformations
// and data links of one panel.
func checkPanelConfig(t *testing.T, where string, p dashPanel, dashes map[string]dashDoc) {
	t.Helper()
	// The SDK decodes a panel's fieldConfig loosely; decode it strictly.
	var fcs sdkdashboard.FieldConfigSource
	if err := sdkError(fcs.UnmarshalJSONStrict(p.FieldConfig)); err != nil {
		t.Errorf("%s: fieldConfig: %v", where, err)
	}
	var fc dashFieldConfig
	if err := json.Unmarshal(p.FieldConfig, &fc); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if !slices.Contains(grafanaUnits, fc.Defaults.Unit) {
		t.Errorf("%s: unit %q is not one of %v", where, fc.Defaults.Unit, grafanaUnits)
	}
	for _, o := range fc.Overrides {
		if o.Matcher.ID != "byName" && o.Matcher.ID != "byRegexp" {
			t.Errorf("%s: override matcher %q (the smoke test knows byName and byRegexp)", where, o.Matcher.ID)
		}
		if o.Matcher.ID == "byRegexp" {
			if _, err := jsRegexp(o.Matcher.Options); err != nil {
				t.Errorf("%s: override regexp %q: %v", where, o.Matcher.Options, err)
			}
		}
		for _, prop := range o.Properties {
			switch prop.ID {
			case "unit":
				var u string
				_ = json.Unmarshal(prop.Value, &u)
				if !slices.Contains(grafanaUnits, u) {
					t.Errorf("%s: override unit %q", where, u)
				}
			case "links":
				var links []dashLink
				dec := json.NewDecoder(bytes.NewReader(prop.Value))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&links); err != nil {
					t.Errorf("%s: data links: %v", where, err)
				}
				for _, l := range links {
					checkLinkTarget(t, where, l.URL, dashes)
				}
			}
		}
	}
	if p.TimeFrom != "" {
		if _, err := time.ParseDuration(p.TimeFrom); err != nil {
			t.Errorf("%s: timeFrom %q is not a duration the smoke test reads: %v", where, p.TimeFrom, err)
		}
	}
	for _, tr := range p.Transformations {
		if !slices.Contains(knownTransforms, tr.ID) {
			t.Errorf("%s: transformation %q is not one the smoke test emulates (%v)", where, tr.ID, knownTransforms)
		}
	}
	if p.Type == "stat" || p.Type == "bargauge" {
		var o struct {
			ReduceOptions struct {
				Fields string `json:"fields"`
			} `json:"reduceOptions"`
		}
		_ = json.Unmarshal(p.Options, &o)
		if o.ReduceOptions.Fields != "" {
			if _, err := jsRegexp(o.ReduceOptions.Fields); err != nil {
				t.Errorf("%s: reduceOptions.fields %q: %v", where, o.ReduceOptions.Fields, err)
			}
		}
	}
}

// checkLinkTarget checks that a data link opens a provisioned dashboard
// with variables it has.
func checkLinkTarget(t *testing.T, where, raw string, dashes map[string]dashDoc) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Errorf("%s: link %q: %v", where, raw, err)
		return
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "d" {
		t.Errorf("%s: link %q is not a /d/<uid>/… dashboard link", where, raw)
		return
	}
	target, ok := dashes[parts[1]]
	if !ok {
		t.Errorf("%s: link %q opens dashboard uid %q, which is not in dashboards/", where, raw, parts[1])
		return
	}
	for k := range u.Query() {
		if name, ok := strings.CutPrefix(k, "var-"); ok {
			if _, ok := target.variable(name); !ok {
				t.Errorf("%s: link sets var-%s, which %q does not have", where, name, target.Title)
			}
		}
	}
}

// checkIncludes: src/plugin.json lists every dashboard (so the build
// bundles it and the datasource's Dashboards tab offers it) and nothing
// else; the dashboards have one home (no copy under src/).
func checkIncludes(t *testing.T, dashes []dashFile) {
	raw, err := os.ReadFile(filepath.Join(dashRepo, "src", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Includes []struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"includes"`
	}
	if err := json.Unmarshal(raw, &pj); err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, in := range pj.Includes {
		if in.Type == "dashboard" {
			listed[in.Path] = in.Name
		}
	}
	for _, f := range dashes {
		p := "dashboards/" + f.file
		name, ok := listed[p]
		if !ok {
			t.Errorf("src/plugin.json includes lack %s", p)
		} else if name != f.doc.Title {
			t.Errorf("src/plugin.json names %s %q, the dashboard is titled %q", p, name, f.doc.Title)
		}
		delete(listed, p)
	}
	for p := range listed {
		t.Errorf("src/plugin.json includes %s, which is not in dashboards/", p)
	}
	if m, _ := filepath.Glob(filepath.Join(dashRepo, "src", "dashboards", "*.json")); len(m) > 0 {
		t.Errorf("dashboards copied under src/: %v (keep one copy, in dashboards/)", m)
	}
}

// checkProviderAndCompose: the dashboards provider reads the directory
// docker-compose mounts dashboards/ at, and the results store of the
// provisioned datasource is the volume demo-init fills.
func checkProviderAndCompose(t *testing.T, prov map[string]provDatasource) {
	raw, err := os.ReadFile(filepath.Join(dashRepo, "provisioning", "dashboards", "dashboards.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var pf struct {
		APIVersion int `json:"apiVersion"`
		Providers  []struct {
			Name                  string `json:"name"`
			OrgID                 int    `json:"orgId"`
			Folder                string `json:"folder"`
			FolderUID             string `json:"folderUid"`
			Type                  string `json:"type"`
			DisableDeletion       bool   `json:"disableDeletion"`
			AllowUIUpdates        bool   `json:"allowUiUpdates"`
			UpdateIntervalSeconds int    `json:"updateIntervalSeconds"`
			Options               struct {
				Path                      string `json:"path"`
				FoldersFromFilesStructure bool   `json:"foldersFromFilesStructure"`
			} `json:"options"`
		} `json:"providers"`
	}
	if err := yaml.UnmarshalStrict(raw, &pf); err != nil {
		t.Fatalf("provisioning/dashboards/dashboards.yml: %v", err)
	}
	if len(pf.Providers) != 1 || pf.Providers[0].Type != "file" {
		t.Fatalf("want one file provider, got %+v", pf.Providers)
	}
	providerPath := pf.Providers[0].Options.Path

	raw, err = os.ReadFile(filepath.Join(dashRepo, "docker-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image   string   `json:"image"`
			Volumes []string `json:"volumes"`
			Command any      `json:"command"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	mounts := func(svc string) map[string]string { // container path -> source
		out := map[string]string{}
		for _, v := range compose.Services[svc].Volumes {
			parts := strings.Split(v, ":")
			if len(parts) >= 2 {
				out[parts[1]] = parts[0]
			}
		}
		return out
	}
	g := mounts("grafana")
	if g[providerPath] != "./dashboards" {
		t.Errorf("docker-compose grafana mounts %q at the provider path %s, want ./dashboards", g[providerPath], providerPath)
	}
	store, _ := prov["substrate-density"].JSONData["resultsStore"].(string)
	storePath := strings.TrimPrefix(store, "file://")
	if src := g[storePath]; src == "" || mounts("demo-init")["/results"] != src {
		t.Errorf("the results store %s is not the volume demo-init fills (grafana: %q, demo-init /results: %q)", store, src, mounts("demo-init")["/results"])
	}
	if mounts("prometheus")["/prometheus"] == "" || mounts("prometheus")["/prometheus"] != mounts("demo-init")["/prometheus"] {
		t.Errorf("prometheus does not serve the volume demo-init backfills")
	}
	if !strings.Contains(fmt.Sprint(compose.Services["prometheus"].Command), "retention.time=100y") {
		t.Errorf("prometheus must keep the 2024 demo blocks (--storage.tsdb.retention.time=100y)")
	}
	if u := prov["substrate-density"].URL; u != "http://prometheus:9090" || prov["prometheus"].URL != u {
		t.Errorf("datasource urls %q / %q, want the compose prometheus service", u, prov["prometheus"].URL)
	}
}

// jsRegexp converts a Grafana (JavaScript) regexp "/…/flags" or a bare
// pattern to Go.
func jsRegexp(s string) (*regexp.Regexp, error) {
	if strings.HasPrefix(s, "/") {
		if i := strings.LastIndex(s, "/"); i > 0 {
			flags := s[i+1:]
			s = s[1:i]
			if strings.Contains(flags, "i") {
				s = "(?i)" + s
			}
		}
	}
	return regexp.Compile(s)
}

// ---------------------------------------------------------------------------
// What Grafana does with frames

// displayName is Grafana's getFieldDisplayName for the cases the plugin's
// frames have: config displayName, then displayNameFromDS, a time field's
// own name, else (frame name when the frames' names differ +) field name
// (+ labels).
func displayName(f *data.Field, fr *data.Frame, all []*data.Frame) string {
	if f.Config != nil && f.Config.DisplayName != "" {
		return f.Config.DisplayName
	}
	if f.Config != nil && f.Config.DisplayNameFromDS != "" {
		return f.Config.DisplayNameFromDS
	}
	if isTimeField(f) && len(f.Labels) == 0 {
		if f.Name == "" {
			return "Time"
		}
		return f.Name
	}
	var parts []string
	for i := 1; i < len(all); i++ {
		if all[i].Name != all[i-1].Name && fr.Name != "" {
			parts = append(parts, fr.Name)
			break
		}
	}
	if f.Name != "" && f.Name != "Value" {
		parts = append(parts, f.Name)
	}
	if len(f.Labels) > 0 {
		parts = append(parts, f.Labels.String())
	}
	if len(parts) == 0 {
		return "Value"
	}
	return strings.Join(parts, " ")
}

func isTimeField(f *data.Field) bool { return f.Type().Time() }

func isNumberField(f *data.Field) bool { return f.Type().Numeric() }

// cellFloat reads a numeric cell (nil for null).
func cellFloat(f *data.Field, i int) *float64 {
	v, ok := f.ConcreteAt(i)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return nil
		}
		return &x
	case float32:
		y := float64(x)
		return &y
	case int64:
		y := float64(x)
		return &y
	case int32:
		y := float64(x)
		return &y
	case uint64:
		y := float64(x)
		return &y
	case int8, int16, uint8, uint16, uint32:
		y, _ := strconv.ParseFloat(fmt.Sprint(x), 64)
		return &y
	}
	return nil
}

// cellNull reports whether a cell of any type is null.
func cellNull(f *data.Field, i int) bool {
	_, ok := f.ConcreteAt(i)
	return !ok
}

// copyField copies a field with its config (transformations must not
// change the response's frames).
func copyField(f *data.Field) *data.Field {
	n := data.NewFieldFromFieldType(f.Type(), f.Len())
	n.Name = f.Name
	n.Labels = f.Labels.Copy()
	if f.Config != nil {
		cfg := *f.Config
		n.Config = &cfg
	}
	for i := 0; i < f.Len(); i++ {
		n.Set(i, f.CopyAt(i))
	}
	return n
}

func fieldMatches(names []string, pattern string, f *data.Field, fr *data.Frame, all []*data.Frame) (bool, error) {
	dn := displayName(f, fr, all)
	if slices.Contains(names, dn) {
		return true, nil
	}
	if pattern != "" {
		re, err := jsRegexp(pattern)
		if err != nil {
			return false, err
		}
		return re.MatchString(dn), nil
	}
	return false, nil
}

// applyTransforms applies a panel's transformations to its frames the way
// Grafana's transformers do (matching fields by display name).
func applyTransforms(frames []*data.Frame, trs []dashTransform) ([]*data.Frame, error) {
	for _, tr := range trs {
		if tr.Disabled {
			continue
		}
		applies := func(fr *data.Frame) bool {
			return tr.Filter == nil || (tr.Filter.ID == "byRefId" && fr.RefID == tr.Filter.Options)
		}
		if tr.Filter != nil && tr.Filter.ID != "byRefId" {
			return nil, fmt.Errorf("transformation %s: frame filter %q", tr.ID, tr.Filter.ID)
		}
		var next []*data.Frame
		switch tr.ID {
		case "filterFieldsByName":
			var o struct {
				Include *struct {
					Names   []string `json:"names"`
					Pattern string   `json:"pattern"`
				} `json:"include"`
				Exclude *struct {
					Names   []string `json:"names"`
					Pattern string   `json:"pattern"`
				} `json:"exclude"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			for _, fr := range frames {
				if !applies(fr) {
					next = append(next, fr)
					continue
				}
				var kept []*data.Field
				for _, f := range fr.Fields {
					keep := true
					if o.Include != nil {
						m, err := fieldMatches(o.Include.Names, o.Include.Pattern, f, fr, frames)
						if err != nil {
							return nil, err
						}
						keep = m
					}
					if o.Exclude != nil {
						m, err := fieldMatches(o.Exclude.Names, o.Exclude.Pattern, f, fr, frames)
						if err != nil {
							return nil, err
						}
						keep = keep && !m
					}
					if keep {
						kept = append(kept, f)
					}
				}
				// Grafana drops a frame left without fields.
				if len(kept) > 0 {
					n := data.NewFrame(fr.Name, kept...)
					n.RefID, n.Meta = fr.RefID, fr.Meta
					next = append(next, n)
				}
			}
		case "organize":
			var o struct {
				ExcludeByName map[string]bool   `json:"excludeByName"`
				IndexByName   map[string]int    `json:"indexByName"`
				RenameByName  map[string]string `json:"renameByName"`
				IncludeByName map[string]bool   `json:"includeByName"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			for _, fr := range frames {
				if !applies(fr) {
					next = append(next, fr)
					continue
				}
				type named struct {
					f    *data.Field
					name string
				}
				var kept []named
				for _, f := range fr.Fields {
					dn := displayName(f, fr, frames)
					if o.ExcludeByName[dn] || (len(o.IncludeByName) > 0 && !o.IncludeByName[dn]) {
						continue
					}
					kept = append(kept, named{f, dn})
				}
				if len(o.IndexByName) > 0 {
					sort.SliceStable(kept, func(i, j int) bool {
						a, okA := o.IndexByName[kept[i].name]
						b, okB := o.IndexByName[kept[j].name]
						if !okA {
							a = math.MaxInt
						}
						if !okB {
							b = math.MaxInt
						}
						return a < b
					})
				}
				var fields []*data.Field
				for _, k := range kept {
					f := k.f
					if r := o.RenameByName[k.name]; r != "" {
						f = copyField(f)
						if f.Config == nil {
							f.Config = &data.FieldConfig{}
						}
						f.Config.DisplayName = r
					}
					fields = append(fields, f)
				}
				n := data.NewFrame(fr.Name, fields...)
				n.RefID, n.Meta = fr.RefID, fr.Meta
				next = append(next, n)
			}
		case "sortBy":
			var o struct {
				Sort []struct {
					Field string `json:"field"`
					Desc  bool   `json:"desc"`
				} `json:"sort"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			if len(o.Sort) != 1 {
				return nil, fmt.Errorf("sortBy: want one sort field")
			}
			for _, fr := range frames {
				var key *data.Field
				for _, f := range fr.Fields {
					if displayName(f, fr, frames) == o.Sort[0].Field {
						key = f
					}
				}
				if key == nil || !applies(fr) {
					next = append(next, fr)
					continue
				}
				idx := make([]int, fr.Rows())
				for i := range idx {
					idx[i] = i
				}
				less := func(a, b int) bool {
					if isTimeField(key) {
						ta, _ := key.ConcreteAt(a)
						tb, _ := key.ConcreteAt(b)
						x, _ := ta.(time.Time)
						y, _ := tb.(time.Time)
						return x.Before(y)
					}
					x, y := cellFloat(key, a), cellFloat(key, b)
					return x != nil && (y == nil || *x < *y)
				}
				sort.SliceStable(idx, func(i, j int) bool {
					if o.Sort[0].Desc {
						return less(idx[j], idx[i])
					}
					return less(idx[i], idx[j])
				})
				var fields []*data.Field
				for _, f := range fr.Fields {
					n := copyField(f)
					for i, src := range idx {
						n.Set(i, f.CopyAt(src))
					}
					fields = append(fields, n)
				}
				n := data.NewFrame(fr.Name, fields...)
				n.RefID, n.Meta = fr.RefID, fr.Meta
				next = append(next, n)
			}
		case "joinByField":
			var o struct {
				ByField string `json:"byField"`
				Mode    string `json:"mode"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			if o.Mode != "outer" {
				return nil, fmt.Errorf("joinByField mode %q (the smoke test emulates outer)", o.Mode)
			}
			j, err := outerJoin(frames, o.ByField)
			if err != nil {
				return nil, err
			}
			next = []*data.Frame{j}
		default:
			return nil, fmt.Errorf("transformation %q is not emulated", tr.ID)
		}
		frames = next
	}
	return frames, nil
}

// outerJoin is Grafana's outer join on the field with the given display
// name: one row per distinct key (sorted), the key field first, then every
// other field of every frame with the frame's name as its `name` label.
func outerJoin(frames []*data.Frame, by string) (*data.Frame, error) {
	type src struct {
		fr  *data.Frame
		key *data.Field
	}
	var srcs []src
	var keys []string
	seen := map[string]bool{}
	for _, fr := range frames {
		var key *data.Field
		for _, f := range fr.Fields {
			if displayName(f, fr, frames) == by {
				key = f
				break
			}
		}
		if key == nil {
			return nil, fmt.Errorf("joinByField: frame %q has no field %q", fr.Name, by)
		}
		srcs = append(srcs, src{fr, key})
		for i := 0; i < key.Len(); i++ {
			k := fmt.Sprint(key.CopyAt(i))
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	row := map[string]int{}
	for i, k := range keys {
		row[k] = i
	}
	first := srcs[0].key
	keyField := data.NewFieldFromFieldType(first.Type(), len(keys))
	keyField.Name = first.Name
	if first.Config != nil {
		cfg := *first.Config
		keyField.Config = &cfg
	}
	fields := []*data.Field{keyField}
	filled := make([]bool, len(keys))
	for _, s := range srcs {
		for i := 0; i < s.key.Len(); i++ {
			r := row[fmt.Sprint(s.key.CopyAt(i))]
			if !filled[r] {
				keyField.Set(r, s.key.CopyAt(i))
				filled[r] = true
			}
		}
		for _, f := range s.fr.Fields {
			if f == s.key {
				continue
			}
			t := f.Type()
			if !t.Nullable() {
				t = t.NullableType()
			}
			n := data.NewFieldFromFieldType(t, len(keys))
			n.Name = f.Name
			n.Labels = f.Labels.Copy()
			if n.Labels == nil {
				n.Labels = data.Labels{}
			}
			if _, ok := n.Labels["name"]; !ok && s.fr.Name != "" {
				n.Labels["name"] = s.fr.Name
			}
			if f.Config != nil {
				cfg := *f.Config
				n.Config = &cfg
			}
			for i := 0; i < f.Len(); i++ {
				v, ok := f.ConcreteAt(i)
				if !ok {
					continue
				}
				n.SetConcrete(row[fmt.Sprint(s.key.CopyAt(i))], v)
			}
			fields = append(fields, n)
		}
	}
	return data.NewFrame("joined", fields...), nil
}

// graphable is Grafana's timeseries panel input: the frames with a time
// field and at least one number field (others are ignored).
func graphable(frames []*data.Frame) []*data.Frame {
	var out []*data.Frame
	for _, fr := range frames {
		hasTime, hasNum := false, false
		for _, f := range fr.Fields {
			hasTime = hasTime || isTimeField(f)
			hasNum = hasNum || isNumberField(f)
		}
		if hasTime && hasNum {
			out = append(out, fr)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Smoke test

// smokeEnv is the demo run behind a plugin served over gRPC.
type smokeEnv struct {
	truth  *simrun.Truth
	now    time.Time
	runID  string
	client *datasourcetest.TestPluginClient
	pc     backend.PluginContext
	// serverKeys are the demo run's stats.jsonl server_summary measurements
	// as the export wrote them (the oracle of the all-keys table).
	serverKeys map[string]*string
	trialKeys  map[string]*string
}

// newSmokeEnv loads a simulated run (the demo run; the ladder scenario for
// the Ladder dashboard) into Prometheus, runs the export on it (`mage
// demo`) and lays the result out as a results-store run, as
// docker-compose's demo-init does; then starts the plugin with the
// provisioned settings pointed at them.
func newSmokeEnv(t *testing.T, prov map[string]provDatasource, scenario string) *smokeEnv {
	t.Helper()
	r, srv := promCache.Prometheus(t, scenario)
	tr := r.Truth
	root, dir := storeRun(t, r)
	// The export's artifacts (server_summary.json, stats.jsonl), written
	// into the store run the way `mage demo` writes them into ./demo-run.
	var stdout, stderr bytes.Buffer
	args := []string{
		"--run-dir", dir, "--prometheus-url", srv.URL, "--test-name", tr.TestName, "--tag", tr.Tag,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10),
		"--atelet-lag-s", strconv.FormatInt(tr.LagS, 10), "--no-cluster-facts", "--timeout", "30s",
	}
	if tr.Phases != nil {
		args = append(args, "--phase-logs", filepath.Join(r.Dir, simrun.PhaseLogDir))
	}
	o, err := export.ParseFlags(args, &stderr)
	if err != nil {
		t.Fatalf("export flags: %v", err)
	}
	now := time.Unix(tr.End+3600, 0)
	env := export.DefaultEnv(&stdout, &stderr)
	env.Getenv = func(string) string { return "" }
	env.Now = func() time.Time { return now }
	if _, code := export.Execute(context.Background(), o, env); code != export.ExitOK {
		t.Fatalf("export exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}

	e := &smokeEnv{truth: tr, now: now, runID: runs.StoreRunID(tr.TestName, tr.Start, tr.Tag)}
	e.serverKeys, e.trialKeys = readStatsJSONL(t, filepath.Join(dir, runs.FileStatsJSONL))

	// The provisioned datasource, pointed at this Prometheus and store. A
	// longer timeout than the default: the race detector on two shared
	// cores slows the harvest, not Prometheus.
	p := prov["substrate-density"]
	jd := map[string]any{}
	for k, v := range p.JSONData {
		jd[k] = v
	}
	jd["resultsStore"] = "file://" + root
	jd["timeoutSeconds"] = 30
	jb, _ := json.Marshal(jd)
	// A fresh Updated time makes the SDK build a new instance: it reuses a
	// cached one while Updated is unchanged, and a repeated run (-count=N)
	// has a new store directory.
	s := backend.DataSourceInstanceSettings{ID: 1, UID: p.UID, Name: p.Name, Type: p.Type, URL: srv.URL, JSONData: jb, Updated: time.Now()}
	if _, err := LoadSettings(s); err != nil {
		t.Fatalf("the provisioned jsonData is not valid settings: %v", err)
	}
	e.pc = backend.PluginContext{OrgID: 1, PluginID: dashPluginID, DataSourceInstanceSettings: &s}

	// The SDK registers its gRPC metrics globally, so the test binary has
	// one plugin server (env_test.go); this instance gets its clock there.
	clocks.Store(s.UID, now)
	e.client = pluginClient
	return e
}

func readStatsJSONL(t *testing.T, path string) (server, trial map[string]*string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var row struct {
			Metric       string             `json:"metric"`
			Measurements map[string]*string `json:"measurements"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		switch row.Metric {
		case "server_summary":
			server = row.Measurements
		case "trial_summary":
			trial = row.Measurements
		}
	}
	if len(server) != 80 {
		t.Fatalf("stats.jsonl server_summary has %d keys, want 80", len(server))
	}
	return server, trial
}

// query sends one panel's queries in one request, as Grafana does, and
// returns the frames with their refIds (Grafana sets them from the
// response keys) and the notices.
func (e *smokeEnv) query(t *testing.T, targets []densityQuery, vars dashVars, from, to int64) ([]*data.Frame, []string, error) {
	t.Helper()
	req := &backend.QueryDataRequest{PluginContext: e.pc}
	for _, q := range targets {
		if q.Hide {
			continue
		}
		m := applyTemplateVariables(q, vars)
		m["intervalMs"] = 10000
		m["maxDataPoints"] = 1000
		b, _ := json.Marshal(m)
		req.Queries = append(req.Queries, backend.DataQuery{RefID: q.RefID, QueryType: q.QueryType, JSON: b,
			TimeRange: backend.TimeRange{From: time.Unix(from, 0), To: time.Unix(to, 0)}, Interval: 10 * time.Second, MaxDataPoints: 1000})
	}
	resp, err := e.client.QueryData(context.Background(), req)
	if err != nil {
		t.Fatalf("QueryData over gRPC: %v", err)
	}
	var (
		frames  []*data.Frame
		notices []string
	)
	for _, q := range req.Queries {
		r, ok := resp.Responses[q.RefID]
		if !ok {
			return nil, nil, fmt.Errorf("no response for refId %s", q.RefID)
		}
		if r.Error != nil {
			return nil, nil, fmt.Errorf("refId %s (%s): %v (status %d, source %s)", q.RefID, q.QueryType, r.Error, r.Status, r.ErrorSource)
		}
		for _, f := range r.Frames {
			f.RefID = q.RefID
			if f.Meta != nil {
				for _, n := range f.Meta.Notices {
					notices = append(notices, n.Text)
				}
			}
			frames = append(frames, f)
		}
	}
	return frames, notices, nil
}

// applyTemplateVariables is the frontend's (src/datasource.ts): run is
// interpolated, a multi-value becoming a list of ids; testName and tag in
// csv format; the datasource reference resolved.
func applyTemplateVariables(q densityQuery, vars dashVars) map[string]any {
	m := map[string]any{"refId": q.RefID, "queryType": q.QueryType}
	if q.Datasource != nil {
		m["datasource"] = map[string]string{"type": q.Datasource.Type, "uid": vars.interpolate(q.Datasource.UID, ",")}
	}
	refs, _ := q.runs()
	var ids []string
	for _, r := range refs {
		for _, id := range strings.Split(vars.interpolate(r, "\x00"), "\x00") {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	switch {
	case len(ids) == 1 && len(q.Run) > 0 && q.Run[0] == '"':
		m["run"] = ids[0]
	case len(ids) > 0:
		m["run"] = ids
	}
	for k, v := range map[string]string{"scope": q.Scope, "resource": q.Resource, "block": q.Block, "op": q.Op, "layer": q.Layer} {
		if v != "" {
			m[k] = v
		}
	}
	if q.TestName != "" {
		m["testName"] = vars.interpolate(q.TestName, ",")
	}
	if q.Tag != "" {
		m["tag"] = vars.interpolate(q.Tag, ",")
	}
	if q.LadderSteps {
		m["ladderSteps"] = true
	}
	if q.ChangePoints {
		m["changePoints"] = true
	}
	if q.Align != "" {
		m["align"] = q.Align
	}
	// baseline and candidate take one run each (a multi-value variable
	// gives its first value).
	for k, v := range map[string]string{"baseline": q.Baseline, "candidate": q.Candidate} {
		if v != "" {
			m[k] = strings.Split(vars.interpolate(v, "\x00"), "\x00")[0]
		}
	}
	if len(q.Keys) > 0 {
		var keys any
		_ = json.Unmarshal(q.Keys, &keys)
		m["keys"] = keys
	}
	return m
}

// resolveVariables does what Grafana does on dashboard load: the
// datasource variable takes its saved value; each query variable runs its
// query (runs / tests through the plugin) and keeps its saved value, All,
// or the first option.
func (e *smokeEnv) resolveVariables(t *testing.T, d dashDoc, from, to int64) (dashVars, []string) {
	t.Helper()
	vars := dashVars{}
	var log []string
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			vars[v.Name] = currentValues(t, v)
		case "query":
			vq, err := decodeVariableQuery(v.Query)
			if err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			q := densityQuery{RefID: "variable", QueryType: vq.QueryType, Run: json.RawMessage(`"range"`),
				TestName: vq.TestName, Tag: vq.Tag, Datasource: v.DS}
			frames, _, err := e.query(t, []densityQuery{q}, vars, from, to)
			if err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			opts := metricFindValues(frames, vq.QueryType)
			if len(opts) == 0 {
				t.Fatalf("variable %s offers no value over the demo run's range", v.Name)
			}
			cur := currentValues(t, v)
			switch {
			case v.IncludeAll && slices.Equal(cur, []string{"$__all"}):
				vars[v.Name] = opts
			case len(cur) > 0 && !slices.ContainsFunc(cur, func(c string) bool { return !slices.Contains(opts, c) }):
				vars[v.Name] = cur
			default:
				vars[v.Name] = opts[:1]
			}
		default:
			t.Fatalf("variable %s: type %q is not resolved by the smoke test", v.Name, v.Type)
		}
		log = append(log, fmt.Sprintf("$%s = %v", v.Name, vars[v.Name]))
	}
	return vars, log
}

// metricFindValues is the frontend's framesToMetricFindValues: run ids
// from a runs table, else the first string field.
func metricFindValues(frames []*data.Frame, kind string) []string {
	var out []string
	for _, fr := range frames {
		var col *data.Field
		for _, f := range fr.Fields {
			if kind == QueryRuns && f.Name == "id" {
				col = f
				break
			}
			if col == nil && f.Type() == data.FieldTypeString {
				col = f
			}
		}
		if col == nil {
			continue
		}
		for i := 0; i < col.Len(); i++ {
			if v, ok := col.ConcreteAt(i); ok {
				if s := fmt.Sprint(v); s != "" && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// expectedNull lists, per dashboard uid and panel id, the displayed
// fields that are null on the demo run and why: it has no Kubernetes
// cluster behind it (datasource kubernetesAccess off, export
// --no-cluster-facts), so cluster facts, the frontiers built on them and
// the Kubernetes OOM counts are not measured; the simulator writes no
// status.json, so the Locust exit code is unknown. Every other displayed
// field must have data. "*" means every field of the panel.
var expectedNull = map[string]map[int][]string{
	"density-run-overview": {
		2: {"actors per node"}, 3: {"actors per vcpu"}, 4: {"actors per gb ram"},
		5: {"actors per pod p50"}, 6: {"actors per pod p99"}, 7: {"multi actor worker"},
		9:  {"Locust exit code"},
		38: {"Worker restarts", "OOM-killed worker pods", "Evicted pods", "Worker pods lost"},
		39: {"*"},
	},
	"density-runs-over-time": {
		2: {"actors per node"}, 3: {"actors per vcpu"}, 4: {"actors per gb ram"},
		5:  {"actors per pod p50", "actors per pod p90", "actors per pod p99"},
		14: {"Actors / node", "Actors / vCPU", "Actors / GiB", "Actors / pod p50", "Actors / pod p90", "Actors / pod p99", "Multi-actor worker", "Locust exit code"},
		15: {"Actors / node"},
	},
}

// kubeNull are the expected nulls that must come with a notice saying why
// (Kubernetes facts); the exit code has no notice.
var kubeNullExempt = []string{"Locust exit code"}

// panelResult is one line of the smoke log.
type panelResult struct {
	dash, title, kind string
	id                int
	frames, rows      int
	fields            int
	nulls             []string
	err               string
}

func (r panelResult) String() string {
	status := "ok"
	if r.err != "" {
		status = "FAIL: " + r.err
	}
	nulls := ""
	if len(r.nulls) > 0 {
		nulls = fmt.Sprintf("; null as expected: %s", strings.Join(r.nulls, ", "))
	}
	return fmt.Sprintf("%-22s #%-2d %-52q %-10s → %d frame(s), %d row(s), %d field(s)%s; %s",
		r.dash, r.id, r.title, r.kind, r.frames, r.rows, r.fields, nulls, status)
}

// smokeScenario is the simulated run a dashboard is smoke-tested on when
// it is not the demo run.
var smokeScenario = map[string]string{"density-ladder": "ladder-steps"}

func TestDashboardsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Prometheus with the demo run")
	}
	dashes := loadDashboards(t)
	prov := loadProvisioning(t)
	envs := map[string]*smokeEnv{}
	uids := map[string]dashDoc{}
	for _, f := range dashes {
		uids[f.doc.UID] = f.doc
	}

	var results []panelResult
	for _, f := range dashes {
		d := f.doc
		scenario := smokeScenario[d.UID]
		if scenario == "" {
			scenario = "demo"
		}
		e := envs[scenario]
		if e == nil {
			e = newSmokeEnv(t, prov, scenario)
			envs[scenario] = e
		}
		clocks.Store(e.pc.DataSourceInstanceSettings.UID, e.now)
		// The dashboard range: the demo run for the overview; a week
		// around it for the trend (a nightly range holding the run).
		from, to := e.truth.Start-600, e.truth.End+600
		if d.UID == "density-runs-over-time" {
			from, to = e.truth.Start-7*86400, e.truth.End+86400
		}
		vars, varLog := e.resolveVariables(t, d, from, to)
		for _, l := range varLog {
			t.Logf("%s: %s", d.UID, l)
		}
		if got := vars["run"]; !slices.Contains(got, e.runID) {
			t.Errorf("%s: $run resolved to %v, want the demo run %s", d.UID, got, e.runID)
		}
		vars["__url_time_range"] = []string{fmt.Sprintf("from=%d&to=%d", from*1000, to*1000)}

		t.Run(d.UID+"/annotations", func(t *testing.T) { e.checkAnnotations(t, d, vars, from, to) })

		for _, p := range d.flat() {
			if p.Type == "row" || p.Type == "text" {
				continue
			}
			res := panelResult{dash: d.UID, id: p.ID, title: p.Title, kind: p.Type, err: "not run (-run filter)"}
			t.Run(fmt.Sprintf("%s/%d %s", d.UID, p.ID, p.Title), func(t *testing.T) {
				res.err = ""
				defer func() {
					if t.Failed() && res.err == "" {
						res.err = "see test log"
					}
				}()
				e.smokePanel(t, &res, d, p, vars, from, to, uids)
			})
			results = append(results, res)
		}
	}

	var b strings.Builder
	counts := map[string]int{}
	for _, r := range results {
		counts[r.dash]++
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	t.Logf("dashboard smoke results (%v data panels):\n%s", counts, b.String())
}

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
		// A table shows one frame at a time (frameIndex 0 first).
		if len(frames) == 0 || frames[0].Rows() == 0 {
			t.Fatalf("the table has no rows: %s", describeFrames(frames))
		}
		fr := frames[0]
		res.frames, res.rows = len(frames), fr.Rows()
		for _, f := range fr.Fields {
			fields = append(fields, shown{f, fr})
		}
		// A per-run table is a one-row summary, except the ladder's steps
		// and the phase groups (one row each).
		perRun := slices.ContainsFunc(targets, func(q densityQuery) bool {
			return !slices.Contains(listTypes, q.QueryType) && q.QueryType != QueryLadder && q.QueryType != QueryPhases &&
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
			continue // a PSI panel's bands show only above maxSeries series (TestPSIBands)
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
		e.checkAllKeys(t, frames[0])
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

// checkLinks resolves every data link of the panel on its first row the
// way Grafana's link interpolation does and checks where it goes.
func (e *smokeEnv) checkLinks(t *testing.T, p dashPanel, fc dashFieldConfig, frames []*data.Frame, vars dashVars, dashes map[string]dashDoc) {
	t.Helper()
	if len(frames) == 0 {
		return
	}
	fr := frames[0]
	for _, o := range fc.Overrides {
		for _, prop := range o.Properties {
			if prop.ID != "links" {
				continue
			}
			var links []dashLink
			_ = json.Unmarshal(prop.Value, &links)
			var field *data.Field
			for _, f := range fr.Fields {
				if o.Matcher.ID == "byName" && displayName(f, fr, frames) == o.Matcher.Options {
					field = f
				}
			}
			if field == nil {
				t.Errorf("link override on %q matches no field of %s", o.Matcher.Options, describeFrames(frames))
				continue
			}
			for _, l := range links {
				u := e.interpolateLink(t, l.URL, fr, field, 0, vars)
				t.Logf("data link %q on %q → %s", l.Title, o.Matcher.Options, u)
				pu, err := url.Parse(u)
				if err != nil {
					t.Errorf("link %q: %v", u, err)
					continue
				}
				qv := pu.Query()
				if got := qv.Get("var-run"); got != e.runID {
					t.Errorf("link sets run %q, want %q", got, e.runID)
				}
				if got := qv.Get("var-datasource"); got != "substrate-density" {
					t.Errorf("link sets datasource %q", got)
				}
				if strings.Contains(l.URL, "__data.fields.start") {
					// The run's window, in ms.
					if qv.Get("from") != strconv.FormatInt(e.truth.Start*1000, 10) || qv.Get("to") != strconv.FormatInt(e.truth.End*1000, 10) {
						t.Errorf("link range from=%s to=%s, want the run window %d..%d (ms)", qv.Get("from"), qv.Get("to"), e.truth.Start*1000, e.truth.End*1000)
					}
				}
				checkLinkTarget(t, "link", u, dashes)
			}
		}
	}
}

var macroRe = regexp.MustCompile(`\$\{(__value\.raw|__data\.fields\.([A-Za-z0-9_]+)(\.(numeric|text|raw))?)(:([a-z]+))?\}`)

// interpolateLink replaces the data-link macros (__value.raw,
// __data.fields.<name>[.numeric]) for one row, then dashboard variables.
func (e *smokeEnv) interpolateLink(t *testing.T, raw string, fr *data.Frame, field *data.Field, row int, vars dashVars) string {
	t.Helper()
	out := macroRe.ReplaceAllStringFunc(raw, func(m string) string {
		sub := macroRe.FindStringSubmatch(m)
		var val string
		if sub[1] == "__value.raw" {
			v, _ := field.ConcreteAt(row)
			val = fmt.Sprint(v)
		} else {
			// Grafana's field proxy: by name, then config displayName,
			// then the `name` label.
			var f *data.Field
			for _, c := range fr.Fields {
				if c.Name == sub[2] {
					f = c
					break
				}
			}
			if f == nil {
				t.Errorf("link macro %s: no field %q in %s", m, sub[2], describeFrames([]*data.Frame{fr}))
				return m
			}
			v, ok := f.ConcreteAt(row)
			if !ok {
				t.Errorf("link macro %s: null at row %d", m, row)
				return m
			}
			if ts, isTime := v.(time.Time); isTime && sub[4] == "numeric" {
				val = strconv.FormatInt(ts.UnixMilli(), 10)
			} else {
				val = fmt.Sprint(v)
			}
		}
		if sub[6] == "percentencode" {
			val = encodeURIComponent(val)
		}
		return val
	})
	out = vars.interpolate(out, ",")
	if strings.Contains(out, "${") || strings.Contains(out, "$__") {
		t.Errorf("link %q left %q unresolved", raw, out)
	}
	return out
}

// checkAnnotations runs the annotation queries and checks Grafana's
// region fields: the run and its steady window, both inside the run.
func (e *smokeEnv) checkAnnotations(t *testing.T, d dashDoc, vars dashVars, from, to int64) {
	for _, a := range d.Annotations.List {
		if a.BuiltIn == 1 || !a.Enable {
			continue
		}
		q, err := decodeDensityQuery(a.Target)
		if err != nil {
			t.Fatal(err)
		}
		q.Datasource = a.DS
		frames, _, err := e.query(t, []densityQuery{q}, vars, from, to)
		if err != nil {
			t.Fatalf("annotation %s: %v", a.Name, err)
		}
		if len(frames) != 1 {
			t.Fatalf("annotation %s: %d frames", a.Name, len(frames))
		}
		fr := frames[0]
		get := func(name string) *data.Field {
			f, _ := fr.FieldByName(name)
			if f == nil {
				t.Fatalf("annotation %s: no %q field (Grafana maps time, timeEnd, title, text, tags)", a.Name, name)
			}
			return f
		}
		ts, te, title, tags := get("time"), get("timeEnd"), get("title"), get("tags")
		_ = get("text")
		var runRegion, steady bool
		ladderRegions, changePoints := 0, 0
		for i := 0; i < fr.Rows(); i++ {
			s, _ := ts.ConcreteAt(i)
			en, _ := te.ConcreteAt(i)
			st, et := s.(time.Time).Unix(), en.(time.Time).Unix()
			tg, _ := tags.ConcreteAt(i)
			ti, _ := title.ConcreteAt(i)
			tagList := strings.Split(fmt.Sprint(tg), ",")
			switch {
			case slices.Contains(tagList, "run"):
				runRegion = runRegion || (st == e.truth.Start && et == e.truth.End)
			case slices.Contains(tagList, "steady"):
				steady = steady || (st >= e.truth.Start && et <= e.truth.End && st < et)
			case slices.Contains(tagList, "ladder"):
				if st >= e.truth.Start && et <= e.truth.End && st < et {
					ladderRegions++
				}
			case slices.Contains(tagList, "change-point"):
				// A point at a run start in the range, saying its kind.
				changePoints++
				if st != et || st < from || st > to || !(slices.Contains(tagList, "regression") || slices.Contains(tagList, "improvement")) {
					t.Errorf("annotation %s: change point %q %d..%d tags %v: want a point in the range tagged regression or improvement", a.Name, ti, st, et, tagList)
				}
			}
			t.Logf("annotation %s: %q %s..%s tags %v", a.Name, ti, time.Unix(st, 0).UTC().Format(time.RFC3339), time.Unix(et, 0).UTC().Format(time.RFC3339), tagList)
		}
		if !runRegion || !steady {
			t.Errorf("annotation %s: want the demo run region %d..%d and a steady region inside it (run %v, steady %v)",
				a.Name, e.truth.Start, e.truth.End, runRegion, steady)
		}
		if q.ChangePoints {
			// The smoke store holds one run of the test: a change needs
			// --min-runs runs on each side, so none is expected.
			t.Logf("annotation %s: %d change points over the stored runs of %s", a.Name, changePoints, vars.interpolate(q.TestName, ","))
			if changePoints != 0 {
				t.Errorf("annotation %s: %d change points over a single stored run", a.Name, changePoints)
			}
		}
		if q.LadderSteps {
			want := 0
			if e.truth.Ladder != nil {
				want = len(e.truth.Ladder.Rows)
			}
			if want == 0 || ladderRegions != want {
				t.Errorf("annotation %s: %d ladder step regions inside the run, want one per step row of the simulated ladder (%d)", a.Name, ladderRegions, want)
			}
		}
	}
}

func describeFrames(frames []*data.Frame) string {
	var parts []string
	for _, fr := range frames {
		var names []string
		for _, f := range fr.Fields {
			names = append(names, fmt.Sprintf("%s(%s)", displayName(f, fr, frames), f.Type()))
		}
		parts = append(parts, fmt.Sprintf("%q[%d rows: %s]", fr.Name, fr.Rows(), strings.Join(names, ", ")))
	}
	if len(parts) == 0 {
		return "no frames"
	}
	return strings.Join(parts, "; ")
}
