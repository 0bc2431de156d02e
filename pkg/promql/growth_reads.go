package promql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// maxRegexValues bounds one raw read's label regex; more candidates are read
// in several requests.
const maxRegexValues = 100

// rawSampleInterval is the scrape interval raw reads are sized for: the
// finest the benchmark clusters use (10 s), so a raw window of W seconds is
// taken to hold W/10 samples per series when batching raw reads under
// MaxSeriesPoints.
const rawSampleInterval = 10

// resetsQuery lists the series whose raw window needs a walk. resets()
// counts a drop only between two comparable samples: in Prometheus 2.42 a NaN
// between the old and new value (115, NaN, 1) compares false both ways and the
// restart goes uncounted, while the spec skips NaN and sees 115 -> 1 as a
// drop. So the same query adds `sum_over_time(...) * 0`, which is 0 for a
// finite window and NaN when the window holds a NaN (or ±Inf) sample: such a
// series comes back without a value and is made a candidate. This costs no
// extra request (one range read more on the server side); VictoriaMetrics
// drops NaN at ingestion, so there the term is always 0 and resets alone
// decides.
func resetsQuery(sel string, window, b int64) string {
	r := fmt.Sprintf("%s[%ds] @ %d", sel, window, b)
	return fmt.Sprintf("resets(%s) + sum_over_time(%s) * 0", r, r)
}

// listResets lists every series' restarts over the window: per metric name
// for a braced selector (resets drops __name__, so a selector over _sum and
// _count would otherwise produce colliding series), and in shards when one
// listing would scan more than MaxSeriesPoints raw samples (see
// resetShards). The listed series get their __name__ back.
func (c *Client) listResets(ctx context.Context, sel string, braced bool, all []*growthSeries, names []string, window, b int64) ([]Series, error) {
	type part struct{ name, query string }
	var parts []part
	for _, name := range names {
		named := sel
		if braced {
			named = withName(sel, "__name__="+strconv.Quote(name))
		}
		var group []*growthSeries
		for _, gs := range all {
			if gs.labels["__name__"] == name {
				group = append(group, gs)
			}
		}
		for _, shard := range resetShards(named, group, window, c.cfg.MaxSeriesPoints) {
			parts = append(parts, part{name, resetsQuery(shard, window, b)})
		}
	}
	res := make([][]Series, len(parts))
	err := parallel(ctx, len(parts), func(ctx context.Context, i int) error {
		var err error
		if res[i], err = c.Instant(ctx, parts[i].query, b); err != nil {
			return fmt.Errorf("window growth: listing restarts: %w", err)
		}
		for j := range res[i] {
			res[i][j].Labels["__name__"] = parts[i].name
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Series
	for _, r := range res {
		out = append(out, r...)
	}
	return out, nil
}

// resetShards cuts one metric's restart listing into selectors that each
// scan at most budget raw samples (at rawSampleInterval): by one label's
// values known at A and B, in batches, plus one shard for every other value
// (series born and gone inside the window, which only the listing can find)
// with a negative matcher over all the known ones. Together the shards
// select exactly what sel selects. The label is the one with the fewest
// distinct values that still allows shards that small (instance rather than
// pod or cgroup id: shorter regexes), else the one with the most.
func resetShards(sel string, group []*growthSeries, window int64, budget int) []string {
	perSeries := max(window/rawSampleInterval, 1)
	total := int64(len(group)) * perSeries
	if total <= int64(budget) {
		return []string{sel}
	}
	need := int((total + int64(budget) - 1) / int64(budget))
	label, values := "", []string(nil)
	for _, l := range labelNames(group) {
		if l == "__name__" || l == "le" {
			continue
		}
		set := map[string]bool{}
		for _, gs := range group {
			set[gs.labels[l]] = true
		}
		n := len(set)
		better := n > len(values) // more shards possible
		if len(values) >= need {
			better = n >= need && n < len(values) // enough shards, shorter regex
		}
		if better {
			label, values = l, sortedKeys(set)
		}
	}
	if len(values) < 2 {
		return []string{sel}
	}
	out := valueBatches(sel, label, values, len(group), window, budget, len(values))
	return append(out, withMatcher(sel, label+"!~"+strconv.Quote(alternation(values))))
}

// valueBatches narrows sel to batches of label's values, each batch expected
// to scan at most budget samples over window (the matched series spread
// evenly over the values) and to hold at most most values.
func valueBatches(sel, label string, values []string, matched int, window int64, budget, most int) []string {
	perValue := (int64(matched) + int64(len(values)) - 1) / int64(len(values))
	per := int(min(int64(most), max(1, int64(budget)/(perValue*max(window/rawSampleInterval, 1)))))
	var out []string
	for i := 0; i < len(values); i += per {
		out = append(out, withMatcher(sel, label+"=~"+strconv.Quote(alternation(values[i:min(i+per, len(values))]))))
	}
	return out
}

// readRaw reads raw samples of the candidate series into their state.
func (c *Client) readRaw(ctx context.Context, sel string, all, cands []*growthSeries, index map[string]*growthSeries, window, b int64) error {
	queries := rawQueries(sel, all, cands, window, b, c.cfg.MaxSeriesPoints)
	parts := make([][]Series, len(queries))
	err := parallel(ctx, len(queries), func(ctx context.Context, i int) error {
		res, err := c.instantMatrix(ctx, queries[i], b)
		if err != nil {
			return fmt.Errorf("window growth: reading raw samples: %w", err)
		}
		parts[i] = res
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range parts {
		for _, s := range p {
			if gs, ok := index[labelKey(s.Labels)]; ok && gs.candidate && gs.samples == nil {
				gs.samples = s.Samples
			}
		}
	}
	return nil
}

// rawQueries builds the raw reads for the candidates: sel narrowed by the
// candidates' metric names (braced selectors) and by a regex on the label
// that matches the fewest known series while covering every candidate
// (typically instance or pod: a restart affects all series of a process).
//
// A batch covers at most maxRegexValues values and, at the expected samples
// per series, at most budget samples: at 24 h one restarted atelet's
// histograms are tens of series of ~8,700 samples each.
func rawQueries(sel string, all, cands []*growthSeries, window, b int64, budget int) []string {
	braced := strings.HasPrefix(sel, "{")
	base := sel
	nameOK := func(*growthSeries) bool { return true }
	if braced {
		cn := metricNames(cands)
		if len(cn) < len(metricNames(all)) {
			set := toSet(cn)
			nameOK = func(gs *growthSeries) bool { return set[gs.labels["__name__"]] }
			base = withName(sel, "__name__=~"+strconv.Quote(alternation(cn)))
		}
	}
	universe := 0
	for _, gs := range all {
		if nameOK(gs) {
			universe++
		}
	}

	bestLabel, bestMatched := "", universe
	var bestValues []string
	for _, l := range labelNames(cands) {
		if l == "__name__" {
			continue
		}
		values := map[string]bool{}
		for _, gs := range cands {
			values[gs.labels[l]] = true
		}
		matched := 0
		for _, gs := range all {
			if nameOK(gs) && values[gs.labels[l]] {
				matched++
			}
		}
		if matched < bestMatched || (matched == bestMatched && bestLabel != "" && len(values) < len(bestValues)) {
			bestLabel, bestMatched = l, matched
			bestValues = sortedKeys(values)
		}
	}

	rangeOf := func(s string) string { return fmt.Sprintf("%s[%ds] @ %d", s, window, b) }
	if bestLabel == "" {
		return []string{rangeOf(base)}
	}
	out := valueBatches(base, bestLabel, bestValues, bestMatched, window, budget, maxRegexValues)
	for i := range out {
		out[i] = rangeOf(out[i])
	}
	return out
}

func metricNames(gs []*growthSeries) []string {
	set := map[string]bool{}
	for _, s := range gs {
		set[s.labels["__name__"]] = true
	}
	return sortedKeys(set)
}

func labelNames(gs []*growthSeries) []string {
	set := map[string]bool{}
	for _, s := range gs {
		for k := range s.labels {
			set[k] = true
		}
	}
	return sortedKeys(set)
}

func toSet(xs []string) map[string]bool {
	set := make(map[string]bool, len(xs))
	for _, x := range xs {
		set[x] = true
	}
	return set
}
