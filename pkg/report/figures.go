package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/verdicts"
)

// figure is one shown value with its artifact key.
type figure struct {
	Key, Label, Unit string
	Value            string // shown text; "" when null
	Null             bool
	// Ref numbers the null's reason in the summary's list; Why is the
	// reason itself (the cell's tooltip).
	Ref      int
	Why      string
	Base     string // baseline value ("" none or null)
	BaseNull bool
	Verdict  string // better, worse, same, changed or "" (no baseline)
	Delta    string // the change against the baseline, "+1.23 %"; "" none
}

// reason is one numbered reason of the summary's null list and the keys
// it explains.
type reason struct {
	N    int
	Text []string
	Keys []string
}

// compared is one figure compared with the baseline.
type compared struct {
	Key, Verdict, Delta string
	abs                 float64
}

// figures makes the page's figures: their values, their baseline and
// verdict, and the reason of each null (numbered once per distinct
// reason, in the order the page shows them).
type figures struct {
	in        Input
	values    map[string]artifact.Measurement
	base      map[string]artifact.Measurement
	baseTrial frontier.Measurements
	reasons   []*reason
	byText    map[string]*reason
	compared  []compared
}

func newFigures(in Input) *figures {
	f := &figures{in: in, values: flat(in.Result), byText: map[string]*reason{}}
	if in.Baseline != nil && in.Baseline.Result != nil {
		f.base = flat(in.Baseline.Result)
		f.baseTrial = in.Baseline.Trial
	}
	return f
}

// server is the server_summary figure key.
func (f *figures) server(key, label, unit string) figure {
	fg := figure{Key: key, Label: label, Unit: unit}
	m := f.values[key]
	fg.Value, fg.Null = measurementText(m)
	if fg.Null {
		f.explain(&fg, key, func(n artifact.Notice) bool { return noticeCovers(n, key) })
	}
	if f.base != nil {
		b := f.base[key]
		fg.Base, fg.BaseNull = measurementText(b)
		f.compare(&fg, m.Number(), b.Number())
	}
	return fg
}

// integer is a count the flat keys do not hold (node_psi.nodes, ...).
func (f *figures) integer(key, label string, v *int64, block string) figure {
	fg := figure{Key: key, Label: label}
	if v == nil {
		fg.Null = true
		f.explain(&fg, key, func(n artifact.Notice) bool { return n.Block == block })
	} else {
		fg.Value = strconv.FormatInt(*v, 10)
	}
	return fg
}

// trial is a trial_summary figure.
func (f *figures) trial(m frontier.Measurement) figure {
	fg := figure{Key: m.Key, Label: m.Key}
	if m.Value == nil {
		fg.Null = true
		f.explain(&fg, "trial_summary."+m.Key, func(n artifact.Notice) bool {
			return (n.Block == "trial_summary" || n.Block == "cluster_facts") && n.Field == m.Key
		})
	} else {
		fg.Value = *m.Value
	}
	if f.base != nil {
		bv, ok := f.baseTrial.Get(m.Key)
		if ok && bv != nil {
			fg.Base = *bv
		} else {
			fg.BaseNull = true
		}
		f.compare(&fg, parseNum(m.Value), parseNum(bv))
	}
	return fg
}

// row is one value of a stats.jsonl row, numbers at about three
// significant digits; block names the notices.json block that explains
// its nulls.
func (f *figures) row(metric, key string, v any, block string) figure {
	fg := figure{Key: metric + "." + key, Label: key}
	switch x := v.(type) {
	case string:
		fg.Value = sig3(x)
	case *string:
		if x != nil {
			fg.Value = sig3(*x)
		} else {
			fg.Null = true
		}
	case nil:
		fg.Null = true
	default:
		fg.Value = fmt.Sprint(x)
	}
	if fg.Null {
		f.explain(&fg, fg.Key, func(n artifact.Notice) bool {
			return n.Block == block && (n.Field == "" || n.Field == key) && n.Severity == artifact.SeverityWarning
		})
	}
	return fg
}

// explain numbers the reason of the null figure: the notices that cover
// it, or why none does.
func (f *figures) explain(fg *figure, listed string, covers func(artifact.Notice) bool) {
	// The reason's text without its block.field: the list names the
	// fields, so equal reasons of several fields read as one.
	var texts []string
	for _, n := range f.in.Notices {
		if covers(n) && !slices.Contains(texts, n.Text) {
			texts = append(texts, n.Text)
		}
	}
	if len(texts) == 0 {
		why := "no notice recorded"
		if f.in.NoNotices != "" {
			why += " (" + f.in.NoNotices + ")"
		}
		texts = []string{why}
	}
	id := strings.Join(texts, "\n")
	r, ok := f.byText[id]
	if !ok {
		r = &reason{N: len(f.reasons) + 1, Text: texts}
		f.reasons = append(f.reasons, r)
		f.byText[id] = r
	}
	r.Keys = append(r.Keys, listed)
	fg.Ref, fg.Why = r.N, strings.Join(texts, "; ")
}

// compare sets the figure's verdict and change against the baseline, and
// counts it for the summary.
func (f *figures) compare(fg *figure, v, b *float64) {
	fg.Verdict = verdict(fg.Key, v, b)
	if fg.Verdict == "" {
		f.compared = append(f.compared, compared{Key: fg.Key})
		return
	}
	d, abs := deltaPct(v, b)
	fg.Delta = d
	f.compared = append(f.compared, compared{Key: fg.Key, Verdict: fg.Verdict, Delta: d, abs: abs})
}

// deltaPct is (v − b) / |b| as signed percent text, and its magnitude;
// "" when b is 0.
func deltaPct(v, b *float64) (string, float64) {
	if v == nil || b == nil || *b == 0 {
		return "", 0
	}
	d := (*v - *b) / math.Abs(*b) * 100
	s := sig3(strconv.FormatFloat(d, 'f', -1, 64))
	if d > 0 {
		s = "+" + s
	}
	return s + " %", math.Abs(d)
}

// tally counts the baseline comparison: worse, better, same (changed
// included) and not compared; the worse and better figures, largest
// change first.
func (f *figures) tally() (worse, better []compared, same, notCompared int) {
	for _, c := range f.compared {
		switch c.Verdict {
		case "worse":
			worse = append(worse, c)
		case "better":
			better = append(better, c)
		case "same", "changed":
			same++
		default:
			notCompared++
		}
	}
	for _, l := range [][]compared{worse, better} {
		sort.SliceStable(l, func(i, j int) bool { return l[i].abs > l[j].abs })
	}
	return worse, better, same, notCompared
}

// sig3 is a number's text at about three significant digits (integers
// whole, never an exponent); text that is no number is kept.
func sig3(s string) string {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return s
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	digits := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	out := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	if out == "-0" {
		out = "0"
	}
	return out
}

// flat indexes the 80 flat server_summary measurements by key.
func flat(r *harvest.Result) map[string]artifact.Measurement {
	vs := artifact.ServerSummaryValues(r)
	m := make(map[string]artifact.Measurement, len(vs))
	for _, v := range vs {
		m[v.Key] = v
	}
	return m
}

// measurementText is the value as the artifact writes it.
func measurementText(m artifact.Measurement) (string, bool) {
	switch {
	case m.Int != nil:
		return strconv.FormatInt(*m.Int, 10), false
	case m.Float != nil && !math.IsNaN(*m.Float) && !math.IsInf(*m.Float, 0):
		return artifact.FormatFloat(*m.Float), false
	}
	return "", true
}

// NoisePct is the compare column's noise band: |Δ%| at most this is same
// (verdicts.md's default noise_pct).
const NoisePct = verdicts.DefaultNoisePct

// direction is which way a figure improves (pkg/verdicts' key table):
// "higher", "lower", "none" (shown as changed / same), or "" for keys left
// out of comparison (timestamps, metadata).
func direction(key string) string {
	if verdicts.Excluded(key) {
		return ""
	}
	return verdicts.DirectionOf(key).String()
}

// verdict compares a figure with the baseline's: same when |Δ%| ≤
// NoisePct, else better or worse by the key's direction (changed for a key
// without one); "" when either is null or the key is not compared.
func verdict(key string, v, b *float64) string {
	dir := direction(key)
	if v == nil || b == nil || dir == "" {
		return ""
	}
	d := *v - *b
	if d == 0 || (*b != 0 && math.Abs(d)/math.Abs(*b)*100 <= NoisePct) {
		return "same"
	}
	switch {
	case dir == "none":
		return "changed"
	case (d > 0) == (dir == "higher"):
		return "better"
	}
	return "worse"
}

// noticeCovers says whether a notice explains the null flat key.
func noticeCovers(n artifact.Notice, key string) bool {
	switch n.Block {
	case "":
		return n.Severity == artifact.SeverityWarning
	case harvest.BlockSnapshots:
		if !(strings.HasPrefix(key, "snapshot_") || strings.HasPrefix(key, "restore_") || strings.HasPrefix(key, "checkpoint")) {
			return false
		}
	default:
		p := flatPrefix(n.Block)
		if p == "" || !strings.HasPrefix(key, p) {
			return false
		}
	}
	if n.Field == "" {
		return true
	}
	stem := strings.TrimSuffix(n.Field, "_pct")
	return strings.Contains(key, stem)
}

// flatPrefix is the prefix of a block's flat keys ("" for a block without
// one).
func flatPrefix(block string) string {
	switch block {
	case harvest.BlockPacking:
		return "cluster_packing_"
	case harvest.BlockNodePSI:
		return "psi_"
	case harvest.BlockPodPSI:
		return "pod_psi_"
	case harvest.BlockActiveActors:
		return "active_actors_"
	case harvest.BlockWorkingSet:
		return "working_set_"
	case harvest.BlockOOM:
		return "oom_events_"
	}
	return ""
}

func parseNum(s *string) *float64 {
	if s == nil {
		return nil
	}
	v, err := strconv.ParseFloat(*s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
