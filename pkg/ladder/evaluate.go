package ladder

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// RangeStep is the step of gauge range reads inside a window (seconds).
const RangeStep = 10

// Options are the ladder flags of the export (ladder-steps.md); zero
// fields take the defaults.
type Options struct {
	TrimStartS, TrimEndS int64   // default 30, 5
	MinAchieved          float64 // default 0.95 (× target_rps)
	MaxFailureRatio      float64 // default 0.01
	ResumeName           string  // default ResumeActorCold (the knee's failures)
}

// DefaultOptions are the spec's defaults.
func DefaultOptions() Options {
	return Options{
		TrimStartS: runs.DefaultLadderTrimStartS, TrimEndS: runs.DefaultLadderTrimEndS,
		MinAchieved: 0.95, MaxFailureRatio: 0.01, ResumeName: DefaultVars()["resume_name"],
	}
}

// Value is one key of a step row. V is the unrounded value (nil = null);
// Int marks integer text.
type Value struct {
	Key string
	V   *float64
	Int bool
}

// StepRow is one evaluated step.
type StepRow struct {
	Step   runs.LadderStep
	Window runs.StepWindow
	Values []Value // the profile's figures, in row order
}

// Get returns the value of key (nil when absent or null).
func (r StepRow) Get(key string) *float64 {
	for _, v := range r.Values {
		if v.Key == key {
			return v.V
		}
	}
	return nil
}

// Summary is the ladder_summary row.
type Summary struct {
	Steps, StepsSkipped int64
	MaxSustainedRPS     *float64
	KneeStep            *int64
	FirstShortStep      *int64
}

// Result is a ladder evaluation. Err set means a read failed: Rows is nil
// and no ladder row may be written (never a ladder with gaps).
type Result struct {
	Rows    []StepRow
	Summary Summary
	Notices []string
	Err     error
	// Skipped are the steps without a window (their notices are in
	// Notices).
	Skipped []runs.LadderStep
}

// readKey identifies one read shared by the figures of a step.
type readKey struct {
	growth bool
	query  string
}

type readOut struct {
	g      promql.Growth
	series []promql.Series
	err    error
}

// Evaluate reads the profile (expanded and validated) over every step
// window of lad. A ladder with no steps gives an empty Result (not a
// ladder run). Reads of all steps run concurrently, bounded by the
// client's in-flight limit; figures sharing a selector share one read.
func Evaluate(ctx context.Context, c *promql.Client, lad runs.Ladder, prof Profile, o Options) Result {
	o = o.withDefaults()
	res := Result{Notices: append([]string(nil), lad.Notices...)}
	if len(lad.Steps) == 0 {
		return res
	}
	type stepReads struct {
		row   StepRow
		reads map[readKey]*readOut
	}
	var todo []*stepReads
	for _, st := range lad.Steps {
		w := st.Window(o.TrimStartS, o.TrimEndS)
		if w.Skipped != "" {
			res.Notices = append(res.Notices, w.Skipped)
			res.Skipped = append(res.Skipped, st)
			continue
		}
		sr := &stepReads{row: StepRow{Step: st, Window: w}, reads: map[readKey]*readOut{}}
		for _, f := range prof {
			sr.reads[keyOf(f)] = &readOut{}
		}
		todo = append(todo, sr)
	}
	var wg sync.WaitGroup
	for _, sr := range todo {
		a, b := sr.row.Window.A, sr.row.Window.B
		for k, out := range sr.reads {
			wg.Go(func() {
				if k.growth {
					out.g, out.err = c.WindowGrowth(ctx, k.query, a, b)
					if out.err != nil {
						out.err = fmt.Errorf("window growth of %s over (%d, %d]: %w", k.query, a, b, out.err)
					}
					return
				}
				out.series, out.err = c.Range(ctx, k.query, a, b, RangeStep)
				if out.err != nil {
					out.err = fmt.Errorf("range read of %s over [%d, %d]: %w", k.query, a, b, out.err)
				}
			})
		}
	}
	wg.Wait()
	restarted := 0
	for _, sr := range todo {
		for _, out := range sr.reads {
			if out.err != nil {
				res.Err = fmt.Errorf("ladder step %d/%d: %w", sr.row.Step.Number, sr.row.Step.Of, out.err)
				res.Notices = append(res.Notices, "ladder: a read failed, no ladder rows written: "+out.err.Error())
				return res
			}
			restarted += out.g.Restarted
		}
	}
	if restarted > 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("ladder: %d counter series restarted inside step windows (growth counted across the restart)", restarted))
	}
	for _, sr := range todo {
		W := float64(sr.row.Window.B - sr.row.Window.A)
		for _, f := range prof {
			sr.row.Values = append(sr.row.Values, figureValues(f, sr.reads[keyOf(f)], W, presence(sr.reads, f))...)
		}
		res.Rows = append(res.Rows, sr.row)
	}
	res.Summary, res.Notices = summarize(res.Rows, int64(len(res.Skipped)), prof, o, res.Notices)
	return res
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.TrimStartS == 0 && o.TrimEndS == 0 {
		o.TrimStartS, o.TrimEndS = d.TrimStartS, d.TrimEndS
	}
	if o.MinAchieved == 0 {
		o.MinAchieved = d.MinAchieved
	}
	if o.MaxFailureRatio == 0 {
		o.MaxFailureRatio = d.MaxFailureRatio
	}
	if o.ResumeName == "" {
		o.ResumeName = d.ResumeName
	}
	return o
}

func keyOf(f Figure) readKey {
	switch f.Reduce {
	case ReduceMean, ReduceMax, ReduceMin:
		return readKey{query: strings.TrimSpace(f.Query)}
	}
	return readKey{growth: true, query: strings.TrimSpace(f.Query)}
}

func ptr(x float64) *float64 { return &x }

// presence says whether another growth read of the step selects a value
// of f.By (its query holds the matcher by="value") and found series: a
// listed value without series of its own is 0 only then (the success
// series of the operation are present), else null.
func presence(reads map[readKey]*readOut, f Figure) func(value string) bool {
	return func(value string) bool {
		m := fmt.Sprintf("%s=%q", f.By, value)
		for k, out := range reads {
			if k.growth && k.query != strings.TrimSpace(f.Query) && strings.Contains(k.query, m) && len(out.g.Series) > 0 {
				return true
			}
		}
		return false
	}
}

// figureValues turns one read into the figure's key(s); present says
// whether a listed value without series counts as 0 (else it has no key).
func figureValues(f Figure, out *readOut, W float64, present func(string) bool) []Value {
	if f.By == "" {
		v, isInt := reduce(f, out.g.Series, out.series, W)
		return []Value{{Key: f.Key, V: v, Int: isInt}}
	}
	groups := map[string]*groupOf{}
	get := func(v string) *groupOf {
		g := groups[v]
		if g == nil {
			g = &groupOf{}
			groups[v] = g
		}
		return g
	}
	for _, s := range out.g.Series {
		if v, ok := s.Labels[f.By]; ok {
			g := get(v)
			g.growth = append(g.growth, s)
		}
	}
	for _, s := range out.series {
		if v, ok := s.Labels[f.By]; ok {
			g := get(v)
			g.series = append(g.series, s)
		}
	}
	listed := map[string]bool{}
	for _, v := range f.Values {
		listed[v] = true
	}
	keys := map[string]bool{}
	byKey := map[string]Value{}
	for v := range groups {
		keys[v] = true
	}
	for v := range listed {
		keys[v] = true
	}
	for _, v := range sortedStrings(keys) {
		g := groups[v]
		var val Value
		if g == nil {
			if !present(v) {
				// Neither its own nor the operation's series: nothing was
				// measured, so the row has no key (ladder-steps.md, Decisions).
				continue
			}
			if f.Reduce == ReduceGrowth || f.Reduce == ReduceGrowthRate {
				val = Value{V: ptr(0), Int: f.Reduce == ReduceGrowth}
			}
		} else {
			val.V, val.Int = reduce(f, g.growth, g.series, W)
		}
		val.Key = fanKey(f.Key, v)
		if _, dup := byKey[val.Key]; !dup {
			byKey[val.Key] = val
		}
	}
	out2 := make([]Value, 0, len(byKey))
	for _, k := range sortedValueKeys(byKey) {
		out2 = append(out2, byKey[k])
	}
	return out2
}

type groupOf struct {
	growth []promql.SeriesGrowth
	series []promql.Series
}

func sortedValueKeys(m map[string]Value) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reduce applies a figure's reduction; nil means unmeasured (an absent
// family, no finite sample, a quantile with no event).
func reduce(f Figure, gs []promql.SeriesGrowth, series []promql.Series, W float64) (*float64, bool) {
	switch f.Reduce {
	case ReduceGrowth, ReduceGrowthRate:
		if len(gs) == 0 {
			return nil, false
		}
		sum := 0.0
		for _, s := range gs {
			sum += s.Growth
		}
		if f.Reduce == ReduceGrowthRate {
			if W <= 0 {
				return nil, false
			}
			return ptr(sum / W), false
		}
		return ptr(sum), sum == math.Trunc(sum) && math.Abs(sum) < 1e15
	case ReduceMean, ReduceMax, ReduceMin:
		n, sum := 0, 0.0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range series {
			for _, p := range s.Samples {
				n++
				sum += p.V
				lo, hi = min(lo, p.V), max(hi, p.V)
			}
		}
		if n == 0 {
			return nil, false
		}
		switch f.Reduce {
		case ReduceMean:
			return ptr(sum / float64(n)), false
		case ReduceMax:
			return ptr(hi), false
		}
		return ptr(lo), false
	}
	q, _ := f.Quantile()
	byLE := map[float64]float64{}
	for _, s := range gs {
		le, err := parseLE(s.Labels["le"])
		if err != nil {
			continue
		}
		byLE[le] += s.Growth
	}
	if len(byLE) == 0 {
		return nil, false
	}
	buckets := make([]promql.Bucket, 0, len(byLE))
	for le, n := range byLE {
		buckets = append(buckets, promql.Bucket{UpperBound: le, Count: n})
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].UpperBound < buckets[j].UpperBound })
	v := promql.HistogramQuantile(q, buckets)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, false
	}
	return ptr(v), false
}

func parseLE(s string) (float64, error) {
	if s == "+Inf" || s == "Inf" || s == "inf" || s == "+inf" {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("le %q", s)
	}
	return v, nil
}

func snake(s string) string { return frontier.Snake(s) }

// summarize is the ladder_summary rule on unrounded values.
func summarize(rows []StepRow, skipped int64, prof Profile, o Options, notices []string) (Summary, []string) {
	s := Summary{Steps: int64(len(rows)), StepsSkipped: skipped}
	has := map[string]bool{}
	for _, r := range rows {
		for _, v := range r.Values {
			has[v.Key] = true
		}
	}
	failKey := "failures_" + snake(o.ResumeName)
	profKeys := map[string]bool{}
	for _, f := range prof {
		profKeys[f.Key] = true
	}
	if !profKeys[KeyResumeRPS] {
		return s, append(notices, "ladder_summary: the profile has no resume_rps; max_sustained_rps, knee_step and first_short_step are null")
	}
	checkFailures := profKeys[KeyResumeRequests] && (has[failKey] || len(rows) == 0)
	if !checkFailures {
		notices = append(notices, "ladder_summary: the profile gives no "+KeyResumeRequests+" or "+failKey+"; the knee cannot check the failure ratio and is null")
	}
	for _, r := range rows {
		t, rps := r.Step.TargetRPS, r.Get(KeyResumeRPS)
		if t == nil || *t <= 0 || rps == nil {
			continue
		}
		achieved := *rps >= o.MinAchieved**t
		if !achieved && s.FirstShortStep == nil {
			n := r.Step.Number
			s.FirstShortStep = &n
		}
		if !achieved || !checkFailures {
			continue
		}
		succ, fail := r.Get(KeyResumeRequests), r.Get(failKey)
		if succ == nil || fail == nil {
			continue
		}
		ratio := 0.0
		if tot := *succ + *fail; tot > 0 {
			ratio = *fail / tot
		}
		if ratio > o.MaxFailureRatio {
			continue
		}
		if s.MaxSustainedRPS == nil || *rps > *s.MaxSustainedRPS {
			v, n := *rps, r.Step.Number
			s.MaxSustainedRPS, s.KneeStep = &v, &n
		}
	}
	return s, notices
}

// round4 is the spec's rounding of float figures.
func round4(x float64) float64 { return percentile.Round4(x) }
