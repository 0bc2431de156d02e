package verdicts

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/substrate/density/pkg/percentile"
)

// CohortKeys are the trial_summary keys that keep runs apart when recorded
// (a fresh slice each call).
func CohortKeys() []string { return []string{"sandbox_class", "machine_type", "node_count"} }

// Cohort is the runs of one test name and one set of cohort values,
// ordered by start.
type Cohort struct {
	Label string // e.g. "nightly machine_type=n2-standard-8 node_count=3"
	Runs  []*Run
}

// Cohorts groups runs by test name and the recorded values of CohortKeys
// plus extra; each cohort is ordered by start (then id), cohorts by their
// first run.
func Cohorts(runs []*Run, extra []string) []Cohort {
	keys := append(CohortKeys(), extra...)
	byLabel := map[string]int{}
	var out []Cohort
	sorted := append([]*Run(nil), runs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Start != sorted[j].Start {
			return sorted[i].Start < sorted[j].Start
		}
		return sorted[i].ID < sorted[j].ID
	})
	for _, r := range sorted {
		parts := []string{r.TestName}
		for _, k := range keys {
			if v, ok := r.Text(k); ok {
				parts = append(parts, k+"="+v)
			}
		}
		label := strings.Join(parts, " ")
		i, ok := byLabel[label]
		if !ok {
			i = len(out)
			byLabel[label] = i
			out = append(out, Cohort{Label: label})
		}
		out[i].Runs = append(out[i].Runs, r)
	}
	return out
}

// Kinds of change points.
const (
	Regression  = "regression"
	Improvement = "improvement"
)

// ChangePoint is one change of one key across a cohort's runs.
type ChangePoint struct {
	Key         string   `json:"key"`
	Run         string   `json:"run"`
	Start       int64    `json:"start"`
	Tag         string   `json:"tag"`
	PreviousTag string   `json:"previous_tag"`
	MeanBefore  float64  `json:"mean_before"`
	MeanAfter   float64  `json:"mean_after"`
	DeltaPct    *float64 `json:"delta_pct"`
	PValue      float64  `json:"p_value"`
	Kind        string   `json:"kind"`
	Cohort      string   `json:"cohort"`
	// Position is the run's index in its cohort, CohortRuns the cohort size.
	Position     int    `json:"position"`
	CohortRuns   int    `json:"cohort_runs"`
	Acknowledged bool   `json:"acknowledged"`
	AckReason    string `json:"ack_reason,omitempty"`
	// segmentEnd is the cohort position where the next change of the key
	// begins (or CohortRuns).
	segmentEnd int
}

// Ack acknowledges a change point: the point of Key whose segment holds Run.
type Ack struct {
	Key    string `json:"key"`
	Run    string `json:"run"`
	Reason string `json:"reason"`
}

// ParseAcks reads an acks.yaml: a list of {key, run, reason}, strictly.
func ParseAcks(data []byte) ([]Ack, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var acks []Ack
	if err := yaml.UnmarshalStrict(data, &acks); err != nil {
		return nil, fmt.Errorf("acks file: %w", err)
	}
	for i, a := range acks {
		if a.Key == "" || a.Run == "" {
			return nil, fmt.Errorf("acks file: entry %d needs key and run", i+1)
		}
	}
	return acks, nil
}

// DefaultKeys are the keys searched when none are named: the numeric keys
// with a direction of the server_summary, trial_summary and *_summary
// rows, in first-seen order.
func DefaultKeys(runs []*Run) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range runs {
		for _, v := range r.Values {
			k := v.Key
			if seen[k] || Excluded(k) || DirectionOf(k) == None {
				continue
			}
			if i := strings.IndexByte(k, '.'); i >= 0 && !strings.HasSuffix(k[:i], "_summary") {
				continue
			}
			if _, ok := v.Number(); !ok {
				continue
			}
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// ChangePoints searches every key of every cohort (keys nil: DefaultKeys
// of the cohort) and marks acknowledged points. Keys without a direction
// are not searched. Null values are skipped per key.
func ChangePoints(cohorts []Cohort, keys []string, o Options, acks []Ack) []ChangePoint {
	var out []ChangePoint
	for _, c := range cohorts {
		ks := keys
		if ks == nil {
			ks = DefaultKeys(c.Runs)
		}
		for _, k := range ks {
			dir := DirectionOf(k)
			if dir == None || Excluded(k) {
				continue
			}
			var xs []float64
			var pos []int
			for i, r := range c.Runs {
				if x, ok := r.Number(k); ok {
					xs = append(xs, x)
					pos = append(pos, i)
				}
			}
			splits := Detect(xs, o)
			for si, s := range splits {
				at, prev := pos[s.Index], pos[s.Index-1]
				end := len(c.Runs)
				if si+1 < len(splits) {
					end = pos[splits[si+1].Index]
				}
				cp := ChangePoint{
					Key: k, Run: c.Runs[at].ID, Start: c.Runs[at].Start,
					Tag: c.Runs[at].Tag, PreviousTag: c.Runs[prev].Tag,
					MeanBefore: s.MeanBefore, MeanAfter: s.MeanAfter, PValue: s.PValue,
					Kind: Improvement, Cohort: c.Label, Position: at, CohortRuns: len(c.Runs),
					segmentEnd: end,
				}
				if s.MeanBefore != 0 {
					d := percentile.Round((s.MeanAfter-s.MeanBefore)/math.Abs(s.MeanBefore)*100, 4)
					cp.DeltaPct = &d
				}
				if worse(dir, s.MeanAfter-s.MeanBefore) {
					cp.Kind = Regression
				}
				for _, a := range acks {
					if a.Key != k {
						continue
					}
					for p := at; p < end; p++ {
						if c.Runs[p].ID == a.Run {
							cp.Acknowledged, cp.AckReason = true, a.Reason
						}
					}
				}
				out = append(out, cp)
			}
		}
	}
	return out
}

// DefaultSince is how long an unacknowledged regression keeps failing:
// the default of `density regressions --since` and the window of the
// datasource's unacknowledged_regressions.
const DefaultSince = 30 * 24 * time.Hour

// FailRule selects the change points that fail a nightly job (`density
// regressions` exits 4) and that the datasource counts for alert rules:
// unacknowledged regressions whose run started at or after Since and,
// when Recent > 0, lies among the newest Recent runs of its cohort. A
// regression keeps failing until someone acknowledges it or it ages out,
// so a missed night does not lose it.
type FailRule struct {
	Since  int64 // Unix seconds
	Recent int   // 0: any run since Since
}

// Failing returns the change points of cps that r selects.
func Failing(cps []ChangePoint, r FailRule) []ChangePoint {
	var out []ChangePoint
	for _, cp := range cps {
		if cp.Kind != Regression || cp.Acknowledged || cp.Start < r.Since {
			continue
		}
		if r.Recent > 0 && cp.Position < cp.CohortRuns-r.Recent {
			continue
		}
		out = append(out, cp)
	}
	return out
}

// Title is the annotation title of a change point:
// "<key> +12.3 % (regression)".
func (cp ChangePoint) Title() string {
	d := "n/a"
	if cp.DeltaPct != nil {
		d = fmt.Sprintf("%+.1f %%", *cp.DeltaPct)
	}
	return fmt.Sprintf("%s %s (%s)", cp.Key, d, cp.Kind)
}
