package plugin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// maxAcksBytes bounds a stored acks.yaml.
const maxAcksBytes = 1 << 20

// handleChangePoints answers `changePoints`: the change points (verdicts.md)
// across the stored runs of testName starting in the dashboard range, with
// the store's acks.yaml and the setting acks applied (acknowledged points
// stay in the table, acknowledged true); option keys limits the keys
// searched, option minRuns sets --min-runs (1 judges the newest run).
// With run latest a first frame holds one number for alert rules:
// unacknowledged_regressions, the unacknowledged regressions whose run
// started within the last 30 days (verdicts.DefaultSince): the rule that
// makes `density regressions` exit 4, so an alert keeps firing until the
// regression is acknowledged or ages out.
func (d *Datasource) handleChangePoints(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, err := parseQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	if m.TestName == "" {
		return errorResponse(badRequest("changePoints needs testName"))
	}
	ids := m.Run.ids() // only latest means something here: the range is searched
	latest := len(ids) == 1 && ids[0] == runs.IDLatest
	cps, searched, notices, err := d.changePoints(ctx, m.TestName, m.Keys, m.MinRuns, q.TimeRange)
	if err != nil {
		return errorResponse(err)
	}
	n := len(cps)
	var (
		at                                   = make([]time.Time, n)
		key, run, tag, prevTag, kind, cohort = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		before, after, pValue                = make([]float64, n), make([]float64, n), make([]float64, n)
		pct                                  = make([]*float64, n)
		acked                                = make([]bool, n)
		title                                = make([]string, n)
	)
	for i, cp := range cps {
		at[i] = time.Unix(cp.Start, 0).UTC()
		key[i], run[i], tag[i], prevTag[i], kind[i], cohort[i] = cp.Key, cp.Run, cp.Tag, cp.PreviousTag, cp.Kind, cp.Cohort
		before[i], after[i], pValue[i], pct[i], acked[i] = cp.MeanBefore, cp.MeanAfter, cp.PValue, cp.DeltaPct, cp.Acknowledged
		title[i] = cp.Title()
	}
	f := data.NewFrame("changePoints",
		data.NewField("time", nil, at),
		data.NewField("key", nil, key),
		data.NewField("run", nil, run),
		data.NewField("tag", nil, tag),
		data.NewField("previous_tag", nil, prevTag),
		data.NewField("mean_before", nil, before),
		data.NewField("mean_after", nil, after),
		configured(data.NewField("delta_pct", nil, pct), "Δ %", "percent"),
		data.NewField("p_value", nil, pValue),
		data.NewField("kind", nil, kind),
		data.NewField("acknowledged", nil, acked),
		data.NewField("cohort", nil, cohort),
		data.NewField("title", nil, title),
	)
	frames := data.Frames{table(f)}
	if latest {
		// First: alert rules read a response by its first frame.
		rule := verdicts.FailRule{Since: d.now().Add(-verdicts.DefaultSince).Unix()}
		failing := float64(len(verdicts.Failing(cps, rule)))
		frames = append(data.Frames{numericWide(data.NewFrame("unacknowledged_regressions",
			data.NewField("unacknowledged_regressions", nil, []float64{failing})))}, frames...)
	}
	notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo,
		Text: fmt.Sprintf("%d stored runs of %s up to the end of the range searched", searched, m.TestName)})
	setMeta(frames, nil, notices)
	return backend.DataResponse{Frames: frames}
}

// changePoints searches the stored runs of testName up to tr's end, the
// newest maxRunsPerQuery of each cohort (cohortRuns), with the spec's
// defaults (minRuns, when set, replacing --min-runs), keys empty meaning
// the default keys, and the store's acks.yaml (kept liveTTL, as a listing
// is: an edit shows within that); it returns the points whose
// run starts in tr, the number of runs searched and notices (an acks.yaml
// that does not parse is ignored with a warning).
func (d *Datasource) changePoints(ctx context.Context, testName string, keyList []string, minRuns *int, tr backend.TimeRange) ([]verdicts.ChangePoint, int, []data.Notice, error) {
	if v, ok := unresolvedVariable(testName); ok {
		return nil, 0, nil, badRequest("changePoints: the dashboard variable $%s is not set", v)
	}
	o := verdicts.DefaultOptions()
	if minRuns != nil {
		if *minRuns < 1 {
			return nil, 0, nil, badRequest("changePoints: minRuns is %d, want at least 1", *minRuns)
		}
		o.MinRuns = *minRuns
	}
	if d.catalogs.Store == nil {
		return nil, 0, nil, badRequest("changePoints reads stored runs: configure a results store")
	}
	from, to := tr.From.Unix(), tr.To.Unix()
	keys := splitKeys(keyList)
	searched, found, capped, err := d.cohortRuns(ctx, testName, to, keys)
	if err != nil {
		return nil, 0, nil, err
	}
	var notices []data.Notice
	if limit := d.settings.MaxRunsPerQuery; capped {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: fmt.Sprintf("only the newest %d of %d stored runs of %s up to the end of the range were searched (maxRunsPerQuery): at most the newest %d of each cohort", len(searched), found, testName, limit)})
	}
	ackText, err := d.readTestFile(ctx, testName, "acks.yaml", maxAcksBytes)
	if err != nil {
		return nil, 0, nil, withStatus(backend.StatusBadGateway, err)
	}
	acks, err := verdicts.ParseAcks(ackText)
	if err != nil {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: "acks.yaml ignored: " + err.Error()})
	}
	// The setting was checked when the settings were loaded.
	if extra, err := verdicts.ParseAcks([]byte(d.settings.Acks)); err == nil {
		acks = append(acks, extra...)
	}
	all := verdicts.ChangePoints(verdicts.Cohorts(searched, nil), keys, o, acks)
	inRange := all[:0]
	for _, cp := range all {
		if cp.Start >= from && cp.Start <= to {
			inRange = append(inRange, cp)
		}
	}
	return inRange, len(searched), notices, nil
}

// cohortRuns are the runs changePoints searches, oldest first: of the
// stored runs of testName that start at or before to, the newest
// maxRunsPerQuery of each cohort (verdicts.Cohorts; 0: every run), found
// from the store's directory names and read newest first through the
// stored-run cache, holding at least keys. No run after to is read. The
// listing grows (maxRunsPerQuery, then twice as many, …) until every
// cohort met holds maxRunsPerQuery runs or no older run is left; found is
// how many runs the listing passed, capped whether the bound left some of
// them out.
func (d *Datasource) cohortRuns(ctx context.Context, testName string, to int64, keys []string) (searched []*verdicts.Run, found int, capped bool, err error) {
	limit := max(d.settings.MaxRunsPerQuery, 0)
	opts := runs.ListOptions{TestName: testName, To: to}
	read, perCohort := map[string]bool{}, map[string]int{}
	for listed := limit; ; listed *= 2 {
		var es []runs.Entry
		es, found, err = d.listStore(ctx, opts, listed)
		if err != nil {
			return nil, 0, false, withStatus(backend.StatusBadGateway, err)
		}
		for _, e := range es { // newest first
			if read[e.ID] || !e.Artifacts.StatsJSONL {
				continue
			}
			read[e.ID] = true
			r, err := d.loadRunKeys(ctx, e, keys, false)
			if err != nil {
				return nil, 0, false, withStatus(backend.StatusBadGateway, err)
			}
			label := verdicts.Cohorts([]*verdicts.Run{r}, nil)[0].Label
			if limit > 0 && perCohort[label] >= limit {
				capped = true
				continue
			}
			perCohort[label]++
			searched = append(searched, r)
		}
		full := true
		for _, n := range perCohort {
			full = full && n >= limit
		}
		if listed == 0 || found <= listed || full {
			slices.Reverse(searched) // oldest first, as the search wants
			return searched, found, capped || found > listed && listed > 0, nil
		}
	}
}
