package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/ladder"
	"github.com/substrate/density/pkg/runs"
)

// Grafana unit ids of the ladder figures.
const (
	unitReqPS = "reqps"
	unitMs    = "ms"
	unitShort = "short"
)

// handleLadder answers `ladder` (ladder-steps.md): a table with one row
// per load step (step, steps, users, target_rps, the window and every
// figure of the step rows, as numbers) and a one-row summary frame. A
// stored run's come from its stats.jsonl ladder rows, without a
// Prometheus request; a run without stored ladder rows gets empty frames
// with a notice saying why.
func (d *Datasource) handleLadder(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.perRun(ctx, q, nil, d.ladderFrames)
}

func (d *Datasource) ladderFrames(ctx context.Context, _ queryModel, e runs.Entry, label string) (runFrames, error) {
	var (
		set   []*data.Frame
		notes []string
	)
	switch {
	case e.Source != runs.SourceStore:
		notes = append(notes, fmt.Sprintf("run %s is outside the results store: it has no logs.txt and no stored ladder rows, so no ladder steps", e.ID))
	case !d.settings.PreferStored:
		notes = append(notes, fmt.Sprintf("run %s: the ladder is read from the results store only (the setting preferStored is off)", e.ID))
	default:
		s := d.storedArtifacts(ctx, e)
		notes = append(notes, s.problems...)
		steps, sum, found := ladder.FromRows(s.ladder)
		if found {
			set = ladderTables(steps, sum, label)
			notes = append(notes, fmt.Sprintf("source: results store (the ladder rows of the stored %s of run %s)", runs.FileStatsJSONL, e.ID))
			break
		}
		notes = append(notes, fmt.Sprintf("run %s has no ladder rows in its stored %s: not a ladder run, or exported without them", e.ID, runs.FileStatsJSONL))
	}
	if set == nil {
		set = []*data.Frame{data.NewFrame(frameName("ladder steps", label)), data.NewFrame(frameName("ladder summary", label))}
	}
	return runFrames{frames: set, notices: textNotices(notes)}, nil
}

// ladderTables are the steps table and the summary frame of read-back
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
	table := data.NewFrame(frameName("ladder steps", label), fields...)

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
	return []*data.Frame{table, summary}
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
