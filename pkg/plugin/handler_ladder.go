package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/ladder"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// Grafana unit ids of the ladder figures.
const (
	unitReqPS = "reqps"
	unitMs    = "ms"
	unitShort = "short"
)

// handleLadder answers `ladder` (ladder-steps.md): a one-row summary frame
// (numeric-wide, first for alert rules) and a table with one row per load
// step (step, steps, users, target_rps, the window and every figure of the
// step rows, as numbers). A stored run's come from its stats.jsonl ladder rows, without a
// Prometheus request; a stored run without them (or with preferStored off)
// has its logs.txt evaluated over Prometheus with the profile of the
// setting ladderProfile, else the built-in one. Any other run gets empty
// frames with a notice saying why. With format numeric: ladderNumeric.
func (d *Datasource) handleLadder(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, o, err := parseNumericQuery(q)
	if err != nil {
		return errorResponse(err)
	}
	if o.numeric {
		return d.ladderNumeric(ctx, q, m, o)
	}
	return d.perRun(ctx, q, nil, d.ladderFrames)
}

func (d *Datasource) ladderFrames(ctx context.Context, _ queryModel, e runs.Entry, label string) (runFrames, error) {
	lr := d.runLadder(ctx, e)
	set := []*data.Frame{numericWide(data.NewFrame(frameName("ladder summary", label))), table(data.NewFrame(frameName("ladder steps", label)))}
	if lr.found {
		set = ladderTables(lr.steps, lr.sum, label)
	}
	return runFrames{frames: set, queries: lr.queries, notices: textNotices(lr.notes)}, nil
}

// ladderRead is a run's ladder as the datasource shows it.
type ladderRead struct {
	steps   []ladder.StepRow
	sum     ladder.Summary
	found   bool
	queries []string
	notes   []string
	// failed: a read failed (the stored logs.txt, or Prometheus).
	failed bool
}

// runLadder reads a run's ladder: the stored rows first, else the stored
// logs.txt evaluated over Prometheus (cached like a block: immutable for a
// finished run).
func (d *Datasource) runLadder(ctx context.Context, e runs.Entry) ladderRead {
	var lr ladderRead
	if e.Source != runs.SourceStore {
		lr.notes = append(lr.notes, fmt.Sprintf("run %s is outside the results store: it has no %s and no stored ladder rows, so no ladder steps", e.ID, runs.FileLogs))
		return lr
	}
	if d.settings.PreferStored {
		s := d.storedRows(ctx, e)
		lr.notes = append(lr.notes, problems(s.problem)...)
		if lr.steps, lr.sum, lr.found = ladder.FromRows(s.ladder); lr.found {
			lr.notes = append(lr.notes, fmt.Sprintf("source: results store (the ladder rows of the stored %s of run %s)", runs.FileStatsJSONL, e.ID))
			return lr
		}
	}
	if !e.Artifacts.Logs {
		lr.notes = append(lr.notes, fmt.Sprintf("run %s has no ladder rows in its stored %s and no %s: not a ladder run", e.ID, runs.FileStatsJSONL, runs.FileLogs))
		return lr
	}
	ev, _, err := d.cache.ladders.get(ctx, d.key(keyLadder, e, ""), func(ctx context.Context) (ladderRead, outcome) {
		ev := d.evaluateLadder(ctx, e)
		switch {
		case ev.failed:
			return ev, failedRead
		case !e.EndKnown || !d.finished(e, d.now().Unix()):
			return ev, liveRun
		}
		return ev, finishedOK
	})
	if err != nil {
		ev.notes = []string{fmt.Sprintf("run %s: the ladder read was cancelled: %v", e.ID, err)}
	}
	ev.notes = append(lr.notes, ev.notes...)
	return ev
}

// evaluateLadder evaluates a stored run's logs.txt over Prometheus.
func (d *Datasource) evaluateLadder(ctx context.Context, e runs.Entry) ladderRead {
	var lr ladderRead
	lad, err := d.storedLadderLog(ctx, e)
	if err != nil {
		lr.notes = append(lr.notes, err.Error())
		lr.failed = true
		return lr
	}
	if len(lad.Steps) == 0 {
		lr.notes = append(lr.notes, fmt.Sprintf("run %s: its %s has no ladder lines: not a ladder run", e.ID, runs.FileLogs))
		return lr
	}
	prof, err := d.ladderProfile()
	if err != nil {
		lr.notes = append(lr.notes, err.Error())
		return lr
	}
	log := &promql.Log{}
	res := *engine.Run(ctx, engine.Input{Ladder: &engine.Ladder{Client: d.prom.Recording(log), Log: lad, Profile: prof,
		Options: ladder.DefaultOptions()}}, engine.PartLadder).Ladder
	lr.queries = distinctSorted(log.Queries())
	lr.notes = append(lr.notes, res.Notices...)
	if res.Err != nil {
		lr.notes = append(lr.notes, fmt.Sprintf("run %s: a ladder read failed, so no ladder steps are shown (never a ladder with gaps): %v", e.ID, res.Err))
		lr.failed = true
		return lr
	}
	// The engine's values are rounded as the artifact's rows are.
	lr.steps, lr.sum, lr.found = res.Rows, res.Summary, len(res.Rows) > 0 || len(res.Skipped) > 0
	lr.notes = append(lr.notes, fmt.Sprintf("source: the %s of stored run %s evaluated over Prometheus (no stored ladder rows)", runs.FileLogs, e.ID))
	return lr
}

// ladderProfile is the profile of the setting ladderProfile, else the
// built-in one, expanded with the default names and namespaces.
func (d *Datasource) ladderProfile() (ladder.Profile, error) {
	if strings.TrimSpace(d.settings.LadderProfile) == "" {
		p, err := ladder.Builtin().Expand(ladder.DefaultVars())
		if err == nil {
			err = p.Validate()
		}
		return p, err
	}
	p, err := ladder.ParseProfile([]byte(d.settings.LadderProfile), ladder.DefaultVars())
	if err != nil {
		return nil, fmt.Errorf("the setting ladderProfile: %w", err)
	}
	return p, nil
}

// ladderTables are the summary frame and the steps table of read-back
// ladder rows.
func ladderTables(steps []ladder.StepRow, sum ladder.Summary, label string) []*data.Frame {
	n := len(steps)
	col := func(key string, get func(ladder.StepRow) *float64) *data.Field {
		v := make([]*float64, n)
		for i, r := range steps {
			v[i] = get(r)
		}
		return configured(data.NewField(key, nil, v), withPrefix(label, strings.ReplaceAll(key, "_", " ")), ladderUnit(key))
	}
	intOf := func(f func(ladder.StepRow) int64) func(ladder.StepRow) *float64 {
		return func(r ladder.StepRow) *float64 { x := float64(f(r)); return &x }
	}
	fields := []*data.Field{
		col("step", intOf(func(r ladder.StepRow) int64 { return r.Step.Number })),
		col("steps", intOf(func(r ladder.StepRow) int64 { return r.Step.Of })),
		col("users", intOf(func(r ladder.StepRow) int64 { return r.Step.Users })),
		col("target_rps", func(r ladder.StepRow) *float64 { return r.Step.TargetRPS }),
		col("window_start", intOf(func(r ladder.StepRow) int64 { return r.Window.A })),
		col("window_end", intOf(func(r ladder.StepRow) int64 { return r.Window.B })),
		col("window_s", intOf(func(r ladder.StepRow) int64 { return r.Window.B - r.Window.A })),
	}
	// The figures: the union of the rows' keys in first-seen order (a
	// failures_<op> key may exist in some steps only: null elsewhere).
	var keys []string
	for _, r := range steps {
		for _, v := range r.Values {
			if !slices.Contains(keys, v.Key) {
				keys = append(keys, v.Key)
			}
		}
	}
	for _, k := range keys {
		fields = append(fields, col(k, func(r ladder.StepRow) *float64 { return r.Get(k) }))
	}
	stepsTable := table(data.NewFrame(frameName("ladder steps", label), fields...))

	i64 := func(p *int64) *float64 {
		if p == nil {
			return nil
		}
		x := float64(*p)
		return &x
	}
	steps64, skipped := float64(sum.Steps), float64(sum.StepsSkipped)
	one := func(key string, v *float64) *data.Field {
		return configured(data.NewField(key, nil, []*float64{v}), withPrefix(label, strings.ReplaceAll(key, "_", " ")), ladderUnit(key))
	}
	summary := data.NewFrame(frameName("ladder summary", label),
		one("steps", &steps64),
		one("steps_skipped", &skipped),
		one("max_sustained_rps", sum.MaxSustainedRPS),
		one("knee_step", i64(sum.KneeStep)),
		one("first_short_step", i64(sum.FirstShortStep)),
	)
	// The summary first: alert rules read a response by its first frame.
	return []*data.Frame{numericWide(summary), stepsTable}
}

// ladderUnit is the Grafana unit of a ladder key: rates reqps, latencies
// ms, memory gbytes, everything else short.
func ladderUnit(key string) string {
	switch {
	case strings.HasSuffix(key, "_rps"), strings.HasSuffix(key, "_per_s"):
		return unitReqPS
	case strings.HasSuffix(key, "_ms"):
		return unitMs
	case strings.Contains(key, "_memory_gb"):
		return unitGiB
	}
	return unitShort
}
