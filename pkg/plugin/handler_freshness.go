package plugin

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// Names of the freshness fields.
const (
	freshHours = "hours_since_last_run"
	freshRuns  = "runs_last_7d"
)

// freshWindow is the span of runs_last_7d.
const freshWindow = 7 * 24 * time.Hour

// handleFreshness answers `freshness`, for alert rules such as "no nightly
// for 25 h": per test name and cohort (the recorded cohort keys of its
// stored runs, read through the stored-run cache), hours_since_last_run
// (now − the end of the newest stored run with a known end, in hours, 2
// decimals; null when no run's end is known) and runs_last_7d (runs whose
// start lies in the 7 × 24 h up to now). One numeric-wide frame whose
// fields carry test_name and the cohort keys as labels. The query's time
// range is ignored; testName, when set, keeps one test; keys keeps one of
// the two numbers (an alert rule thresholds one). The newest
// maxRunsPerQuery stored runs are read.
func (d *Datasource) handleFreshness(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, err := parseQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	if d.catalogs.Store == nil {
		if d.storeErr != nil {
			return errorResponse(withStatus(backend.StatusBadGateway, fmt.Errorf("freshness: the results store could not be opened: %v", d.storeErr)))
		}
		return errorResponse(badRequest("freshness reads stored runs: configure a results store"))
	}
	keys := splitKeys(m.Keys)
	if err := checkFreshnessKeys(keys); err != nil {
		return errorResponse(err)
	}
	limit := d.settings.MaxRunsPerQuery
	es, found, err := d.listStore(ctx, runs.ListOptions{TestName: m.TestName}, limit)
	if err != nil {
		return errorResponse(withStatus(backend.StatusBadGateway, fmt.Errorf("freshness: listing the results store: %w", err)))
	}
	var notes []runNote
	if limit > 0 && found > limit {
		notes = append(notes, note(fmt.Sprintf("only the newest %d of %d stored runs were read (maxRunsPerQuery): an older cohort may be missing", limit, found)))
	}
	now := d.now()
	groups, left := d.freshnessGroups(ctx, es, now)
	notes = append(notes, left...)
	frame := numericWide(data.NewFrame(QueryFreshness, freshnessFields(groups, keys, now)...))
	setMeta(data.Frames{frame}, nil, noticesMeta(notes, nil))
	return backend.DataResponse{Frames: data.Frames{frame}}
}

// checkFreshnessKeys refuses a key that is not one of the two numbers.
func checkFreshnessKeys(keys []string) error {
	for _, k := range keys {
		if k != freshHours && k != freshRuns {
			return badRequest("keys: %q is not a key of freshness (%s, %s)", k, freshHours, freshRuns)
		}
	}
	return nil
}

// freshGroup is one test name and cohort: the newest known end of its runs
// and how many started in the window.
type freshGroup struct {
	labels data.Labels
	end    int64
	ended  bool
	recent int64
}

// freshnessGroups groups the stored runs by test name and cohort, ordered
// by test name, then labels. A run whose cohort cannot be read is left out
// with a warning note.
func (d *Datasource) freshnessGroups(ctx context.Context, es []runs.Entry, now time.Time) ([]*freshGroup, []runNote) {
	var notes []runNote
	var groups []*freshGroup
	byID := map[string]*freshGroup{}
	for _, e := range es {
		text := func(string) (string, bool) { return "", false }
		if e.Artifacts.StatsJSONL {
			// The cohort keys are in the run's head: nothing is decoded.
			r, err := d.loadRunKeys(ctx, e, verdicts.CohortKeys(), false)
			if err != nil {
				// Its cohort is unknown: counting it under another would
				// make a run of one cohort hide a silent other.
				notes = append(notes, runNote{run: e.ID, text: fmt.Sprintf("left out of freshness: its cohort could not be read: %v", err), warn: true})
				continue
			}
			text = r.Text
		}
		l := runLabels(e.TestName, text, "", "", numericOptions{})
		id := l.String()
		g := byID[id]
		if g == nil {
			g = &freshGroup{labels: l}
			byID[id] = g
			groups = append(groups, g)
		}
		g.add(e, now)
	}
	slices.SortFunc(groups, func(a, b *freshGroup) int {
		if c := strings.Compare(a.labels[labelTestName], b.labels[labelTestName]); c != 0 {
			return c
		}
		return strings.Compare(a.labels.String(), b.labels.String())
	})
	return groups, notes
}

// add counts one stored run into its group.
func (g *freshGroup) add(e runs.Entry, now time.Time) {
	if e.EndKnown && (!g.ended || e.End > g.end) {
		g.end, g.ended = e.End, true
	}
	if start := time.Unix(e.Start, 0); !start.After(now) && now.Sub(start) <= freshWindow {
		g.recent++
	}
}

// freshnessFields is the two numbers of each group (those of keys, all when
// keys is empty); hours is null when no run's end is known.
func freshnessFields(groups []*freshGroup, keys []string, now time.Time) []*data.Field {
	want := func(k string) bool { return len(keys) == 0 || slices.Contains(keys, k) }
	var fields []*data.Field
	for _, g := range groups {
		var hours *float64
		if g.ended {
			h := math.Round(now.Sub(time.Unix(g.end, 0)).Hours()*100) / 100
			hours = &h
		}
		recent := float64(g.recent)
		if want(freshHours) {
			fields = append(fields, configured(data.NewField(freshHours, g.labels, []*float64{hours}), "", "h"))
		}
		if want(freshRuns) {
			fields = append(fields, configured(data.NewField(freshRuns, g.labels, []*float64{&recent}), "", unitShort))
		}
	}
	return fields
}
