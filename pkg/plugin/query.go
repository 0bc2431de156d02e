package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/runs"
)

// Query types (datasource.md "Query model").
const (
	QueryRuns         = "runs"
	QueryPacking      = "packing"
	QueryPSI          = "psi"
	QuerySnapshots    = "snapshots"
	QueryActiveActors = "activeActors"
	QueryWorkingSet   = "workingSet"
	QueryOOMEvents    = "oomEvents"
	QueryClusterFacts = "clusterFacts"
	QueryFrontier     = "frontier"
	QuerySummary      = "summary"
	QueryTests        = "tests"
	QueryAnnotations  = "annotations"
	QueryGates        = "gates"
	QueryCompare      = "compare"
	QueryChangePoints = "changePoints"
	QueryLadder       = "ladder"
	QueryPhases       = "phases"
	QueryFreshness    = "freshness"
)

// queryModel is the query JSON (datasource.md): refId, queryType, run and
// the per-type keys. Unknown keys (datasource, hide, intervalMs, …) are
// ignored.
type queryModel struct {
	QueryType string `json:"queryType"`
	Run       runRef `json:"run"`
	Scope     string `json:"scope"`
	Resource  string `json:"resource"`
	Block     string `json:"block"`
	TestName  string `json:"testName"`
	Tag       string `json:"tag"`
	// Series is how per-node and per-pod panels show many series: bands
	// (distribution bands and the top series), all, or "" (bands above
	// maxSeries).
	Series string `json:"series,omitempty"`
	// Align is how per-run time series lie on the time axis: absolute (the
	// default, "") or elapsed (each run's steady start on the range's from).
	Align string `json:"align,omitempty"`
	// LadderSteps adds a region per ladder step to `annotations`.
	LadderSteps bool `json:"ladderSteps,omitempty"`
	// ChangePoints adds a point per change point to `annotations`.
	ChangePoints bool `json:"changePoints,omitempty"`
	// grid is the request's panel resolution (Interval, MaxDataPoints).
	grid panelGrid
	// Baseline and Candidate are the run ids of `compare`.
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// Keys limits `changePoints` and the numeric frames (a list or a
	// comma-separated string).
	Keys runRef `json:"keys"`
	// Format is table (the default, "") or numeric: numeric-multi frames
	// of one number each for alert rules (summary, gates, ladder).
	Format string `json:"format,omitempty"`
	// Labels is "" (stable labels only) or run: the numeric frames carry
	// run and tag labels too.
	Labels string `json:"labels,omitempty"`
	// MinRuns is the change points' --min-runs (nil: the default 3; 1
	// judges the newest run alone).
	MinRuns *int `json:"minRuns,omitempty"`
}

// runRef is `run`: one id, `latest`, `range`, or a list of ids (a
// multi-value variable). Absent, null, "" and [] all mean `range`.
type runRef []string

func (r *runRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*r = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = splitRunList(s)
		return nil
	case len(b) > 0 && b[0] == '[':
		var ss []string
		if err := json.Unmarshal(b, &ss); err != nil {
			return errors.New(`"run" must be a string or a list of strings`)
		}
		var out []string
		for _, s := range ss {
			out = append(out, splitRunList(s)...)
		}
		*r = out
		return nil
	}
	return errors.New(`"run" must be a string or a list of strings`)
}

// splitRunList accepts "{a,b}" (Grafana's default multi-value format) and a
// single id. Run ids never contain "," or braces (store parts are
// escaped), so the split is unambiguous.
func splitRunList(s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && len(s) >= 2 {
		var out []string
		for _, p := range strings.Split(s[1:len(s)-1], ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	if s == "" {
		return nil
	}
	return []string{s}
}

// ids returns the run references with duplicates removed, defaulting to
// range.
func (r runRef) ids() []string {
	var out []string
	for _, s := range r {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{runs.IDRange}
	}
	return out
}

// variableRe finds an unresolved dashboard variable: $name, ${name…} or
// [[name]].
var variableRe = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)|\[\[([A-Za-z_][A-Za-z0-9_]*)`)

// unresolvedVariable returns the name of the first variable left in s.
func unresolvedVariable(s string) (string, bool) {
	m := variableRe.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	if m[1] != "" {
		return m[1], true
	}
	return m[2], true
}

// parseQuery decodes and checks a query's JSON. Every error is a 400
// downstream error saying what is wrong.
func parseQuery(q backend.DataQuery) (queryModel, error) {
	var m queryModel
	if len(bytes.TrimSpace(q.JSON)) > 0 {
		if err := json.Unmarshal(q.JSON, &m); err != nil {
			return queryModel{}, badRequest("query %s: malformed query JSON: %v", q.RefID, err)
		}
	}
	if m.QueryType == "" {
		m.QueryType = q.QueryType
	}
	fields := []struct{ name, v string }{{"testName", m.TestName}, {"tag", m.Tag}, {"scope", m.Scope}, {"resource", m.Resource}, {"block", m.Block}}
	for _, r := range m.Run {
		fields = append(fields, struct{ name, v string }{"run", r})
	}
	for _, f := range fields {
		if name, ok := unresolvedVariable(f.v); ok {
			return queryModel{}, badRequest("query %s: %s %q holds the dashboard variable $%s, which was not resolved: check that the variable exists on this dashboard and has a value", q.RefID, f.name, f.v, name)
		}
	}
	if err := validNames(m.TestName, m.Tag); err != nil {
		return queryModel{}, badRequest("query %s: %v", q.RefID, err)
	}
	return m, nil
}

// validNames checks a test name and tag filter ("" is none) against the
// store's rule for a path segment: "..", "/", control characters and more
// than 255 bytes are refused.
func validNames(testName, tag string) error {
	for _, f := range []struct{ name, v string }{{"testName", testName}, {"tag", tag}} {
		if f.v == "" {
			continue
		}
		if err := runs.ValidSegment(f.v); err != nil {
			return fmt.Errorf("%s is not a valid name: %v", f.name, err)
		}
	}
	return nil
}

func unknownTypeResponse(t string) backend.DataResponse {
	if t == "" {
		return errorResponse(badRequest("the query has no queryType (want one of %s)", strings.Join(QueryTypes(), ", ")))
	}
	return errorResponse(badRequest("unknown queryType %q (want one of %s)", t, strings.Join(QueryTypes(), ", ")))
}

// timeRange is a query's dashboard range in Unix seconds.
func timeRange(q backend.DataQuery) (from, to int64) {
	return q.TimeRange.From.Unix(), q.TimeRange.To.Unix()
}

// resolveRun resolves one run reference for a per-run query type: range is
// the dashboard range as an ad hoc run, latest the newest catalogued run
// (of testName when set), anything else a catalogued id.
func (d *Datasource) resolveRun(ctx context.Context, ref string, q backend.DataQuery, testName string) (runs.Entry, error) {
	from, to := timeRange(q)
	now := d.now().Unix()
	switch ref {
	case runs.IDRange:
		e, err := d.catalogs.Range(ctx, from, min(to, now))
		if errors.Is(err, runs.ErrRangeTooLong) {
			return runs.Entry{}, badRequest("%v: narrow the dashboard range to maxRangeDays (%d) or less, or pick a run", err, d.settings.MaxRangeDays)
		}
		if err != nil {
			return runs.Entry{}, badRequest("ad hoc run: %v", err)
		}
		return e, nil
	case runs.IDLatest:
		e, err := d.latestRun(ctx, testName, false)
		if err != nil {
			return runs.Entry{}, catalogError(err)
		}
		return e, nil
	}
	id, err := runs.ParseRunID(ref)
	if err != nil {
		return runs.Entry{}, badRequest("%v", err)
	}
	if id.Kind == runs.KindStore && d.catalogs.Store == nil && d.storeErr != nil {
		return runs.Entry{}, withStatus(backend.StatusBadGateway, fmt.Errorf("run %s: the results store could not be opened: %v", ref, d.storeErr))
	}
	e, err := d.catalogs.Get(ctx, id, now)
	if err != nil {
		return runs.Entry{}, catalogError(err)
	}
	return e, nil
}

// catalogError gives catalog errors their status: an unknown run is 404, a
// missing catalog 400, a failing store or Prometheus 502.
func catalogError(err error) error {
	switch {
	case errors.Is(err, runs.ErrRunNotFound):
		return withStatus(backend.StatusNotFound, err)
	case errors.Is(err, runs.ErrInvalidRunID), errors.Is(err, runs.ErrNoCatalog):
		return withStatus(backend.StatusBadRequest, err)
	}
	return withStatus(backend.StatusBadGateway, err)
}

// resolveRuns resolves every reference of a per-run query.
func (d *Datasource) resolveRuns(ctx context.Context, m queryModel, q backend.DataQuery) ([]runs.Entry, error) {
	var out []runs.Entry
	for _, ref := range m.Run.ids() {
		e, err := d.resolveRun(ctx, ref, q, m.TestName)
		if err != nil {
			return nil, err
		}
		if !e.EndKnown {
			return nil, withStatus(backend.StatusValidationFailed, fmt.Errorf(
				"run %s has no end time (%s): it cannot be harvested; pick the dashboard range as the run window (run: range) instead", e.ID, e.WindowFrom))
		}
		out = append(out, e)
	}
	return out, nil
}

// listingBounds says where maxRangeDays and maxRunsPerQuery cut a listing
// short.
func (d *Datasource) listingBounds(l runs.Listing) []string {
	var out []string
	if l.DiscoveryFrom != 0 {
		out = append(out, fmt.Sprintf("Prometheus run discovery covered only the newest %d days of the range (from %s; maxRangeDays)",
			d.settings.MaxRangeDays, time.Unix(l.DiscoveryFrom, 0).UTC().Format(time.RFC3339)))
	}
	if n := d.settings.MaxRunsPerQuery; l.StoredFound > n {
		out = append(out, fmt.Sprintf("only the newest %d of %d stored runs in the range were read (maxRunsPerQuery)", n, l.StoredFound))
	}
	return out
}

// listRuns is the catalogued runs a list-type query (runs, frontier,
// summary, annotations) covers: with run range, every run starting in the
// dashboard range (filtered by testName/tag); otherwise the named runs.
func (d *Datasource) listRuns(ctx context.Context, m queryModel, q backend.DataQuery) ([]runs.Entry, []string, error) {
	ids := m.Run.ids()
	if len(ids) == 1 && ids[0] == runs.IDRange {
		from, to := timeRange(q)
		l, err := d.listCatalogs(ctx, runs.ListOptions{From: from, To: to, TestName: m.TestName, Tag: m.Tag, Now: d.now().Unix()})
		if err != nil {
			return nil, nil, withStatus(backend.StatusBadGateway, fmt.Errorf("listing runs: %w", err))
		}
		problems := append(l.Problems, d.listingBounds(l)...)
		if d.storeErr != nil {
			problems = append(problems, "results store: "+d.storeErr.Error())
		}
		return l.Runs, problems, nil
	}
	var out []runs.Entry
	for _, ref := range ids {
		if ref == runs.IDRange {
			return nil, nil, badRequest("run %q cannot be mixed with run ids in one query", runs.IDRange)
		}
		e, err := d.resolveRun(ctx, ref, q, m.TestName)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, e)
	}
	return out, nil, nil
}
