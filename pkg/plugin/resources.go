package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/runs"
)

// defaultResourceRange is what GET /runs lists without from/to.
const defaultResourceRange = 7 * 24 * time.Hour

// runInfo is a run in the resource answers (snake_case, times in Unix
// seconds, as the editors read them).
type runInfo struct {
	ID             string          `json:"id"`
	Source         string          `json:"source"`
	TestName       string          `json:"test_name"`
	Tag            string          `json:"tag"`
	Start          int64           `json:"start"`
	End            *int64          `json:"end"`
	SteadyStart    *int64          `json:"steady_start"`
	SteadyEnd      *int64          `json:"steady_end"`
	SteadyFrom     string          `json:"steady_from"`
	WindowFrom     string          `json:"window_from"`
	Live           bool            `json:"live"`
	PeakUsers      *float64        `json:"peak_users"`
	LocustExitCode *int64          `json:"locust_exit_code"`
	Artifacts      map[string]bool `json:"artifacts,omitempty"`
	Files          []runs.File     `json:"files,omitempty"`
	Problems       []string        `json:"problems,omitempty"`
}

func toRunInfo(e runs.Entry, detail bool) runInfo {
	r := runInfo{ID: e.ID, Source: e.Source, TestName: e.TestName, Tag: e.Tag, Start: e.Start, Live: e.Live,
		WindowFrom: e.WindowFrom, PeakUsers: e.PeakUsers, LocustExitCode: e.ExitCode, Problems: e.Problems}
	if e.EndKnown {
		end, ss, se := e.End, e.SteadyStart, e.SteadyEnd
		r.End, r.SteadyStart, r.SteadyEnd = &end, &ss, &se
	}
	r.SteadyFrom = "samples"
	if !e.SteadyFromSamples {
		r.SteadyFrom = "run window: " + e.SteadyWhy
	}
	if detail {
		r.Files = e.Files
		if e.Source == runs.SourceStore {
			r.Artifacts = map[string]bool{}
			for _, f := range runs.ArtifactFiles() {
				r.Artifacts[f] = e.Artifacts.Has(f)
			}
		}
	}
	return r
}

// resourceMux serves the editors' resources. It routes on the raw path
// itself: http.ServeMux would clean "/runs/../x" into a redirect, while a
// run id is data and gets validated (and rejected) as such.
func (d *Datasource) resourceMux() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		switch {
		case p == "/runs" || p == "/runs/":
			d.serveRuns(w, r)
		case strings.HasPrefix(p, "/runs/"):
			d.serveRun(w, r)
		case p == "/tests" || p == "/tests/":
			d.serveTests(w, r)
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no resource " + r.URL.Path + " (have GET /runs, /runs/{id}, /tests)"})
		}
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (d *Datasource) resourceGuard(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "only GET is supported"})
		return false
	}
	if d.settingsErr != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the datasource settings are invalid: " + d.settingsErr.Error()})
		return false
	}
	return true
}

// timeParam reads a from/to parameter in Unix seconds or milliseconds (the
// frontend sends the dashboard range in ms).
func timeParam(q url.Values, key string, def time.Time) (int64, error) {
	s := q.Get(key)
	if s == "" {
		return def.Unix(), nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s %q is not a Unix time", key, s)
	}
	if v > 1e11 { // milliseconds
		v /= 1000
	}
	return v, nil
}

// serveRuns is GET /runs?from=&to=&testName=&tag=: the runs starting in the
// range (default the last 7 days), newest first.
func (d *Datasource) serveRuns(w http.ResponseWriter, r *http.Request) {
	if !d.resourceGuard(w, r) {
		return
	}
	now := d.now()
	q := r.URL.Query()
	from, err := timeParam(q, "from", now.Add(-defaultResourceRange))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	to, err := timeParam(q, "to", now)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if to < from {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "to is before from"})
		return
	}
	if err := validNames(q.Get("testName"), q.Get("tag")); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	l, err := d.catalogs.List(r.Context(), runs.ListOptions{From: from, To: to, TestName: q.Get("testName"), Tag: q.Get("tag"), Now: now.Unix()})
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	out := make([]runInfo, len(l.Runs))
	for i, e := range l.Runs {
		out[i] = toRunInfo(e, false)
	}
	problems := append(l.Problems, d.listingBounds(l)...)
	if d.storeErr != nil {
		problems = append(problems, "results store: "+d.storeErr.Error())
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out, "problems": problems})
}

// serveRun is GET /runs/{id}: one run with its windows and artifacts. The
// id may be sent raw (test/ts/tag, parts escaped) or URL-encoded as one
// segment.
func (d *Datasource) serveRun(w http.ResponseWriter, r *http.Request) {
	if !d.resourceGuard(w, r) {
		return
	}
	raw := strings.TrimPrefix(r.URL.EscapedPath(), "/runs/")
	id, err := url.PathUnescape(raw)
	if err != nil {
		id = raw
	}
	if id == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "no run id"})
		return
	}
	rid, err := runs.ParseRunID(id)
	if err != nil || rid.Kind == runs.KindRange {
		msg := "run " + strconv.Quote(id) + " is not a catalogued run id"
		if err != nil {
			msg = err.Error()
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": msg})
		return
	}
	var e runs.Entry
	if rid.Kind == runs.KindLatest {
		testName := r.URL.Query().Get("testName")
		if err := validNames(testName, ""); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		e, err = d.latestRun(r.Context(), testName, false)
	} else {
		e, err = d.catalogs.Get(r.Context(), rid, d.now().Unix())
	}
	if err != nil {
		writeJSON(w, resourceStatus(err), map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, toRunInfo(e, true))
}

func resourceStatus(err error) int {
	var qe *queryError
	if errors.As(catalogError(err), &qe) {
		return int(qe.status)
	}
	return http.StatusBadGateway
}

// serveTests is GET /tests: the results store's test names.
func (d *Datasource) serveTests(w http.ResponseWriter, r *http.Request) {
	if !d.resourceGuard(w, r) {
		return
	}
	if d.catalogs.Store == nil && d.storeErr != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": d.storeUnavailable().Error()})
		return
	}
	names, err := d.catalogs.Tests(r.Context())
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tests": names})
}

// storeUnavailable is the error of a results store that could not be
// opened.
func (d *Datasource) storeUnavailable() error {
	return withStatus(backend.StatusBadGateway, fmt.Errorf("the results store %s could not be opened: %v", endpoint.Redact(d.settings.ResultsStore), d.storeErr))
}
