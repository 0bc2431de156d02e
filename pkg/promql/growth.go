package promql

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// lookbackSeconds is Prometheus's default lookback delta (5 min): the raw
// read reaches this far before A so that it holds v_A's sample too.
const lookbackSeconds = 300

// maxRegexValues bounds one raw read's label regex; more candidates are read
// in several requests.
const maxRegexValues = 100

// rawSampleInterval is the scrape interval raw reads are sized for: the
// finest the benchmark clusters use (10 s), so a raw window of W seconds is
// taken to hold W/10 samples per series when batching raw reads under
// MaxSeriesPoints.
const rawSampleInterval = 10

// growthSeries is the working state of one series in WindowGrowth.
type growthSeries struct {
	labels     map[string]string
	vA, vB     float64
	hasA, hasB bool // a finite value at A / at B
	nanA       bool // present at A but NaN/±Inf: v_A is taken from raw samples
	candidate  bool // needs the raw-sample walk
	samples    []Sample
}

// WindowGrowth computes the spec's per-series restart-aware growth of the
// counter selector sel over (a, b] (server-telemetry.md, "Window counter
// deltas"). sel is a plain series selector (`name`, `name{...}` or `{...}`,
// no range, offset or @); it may match _bucket, _sum and _count at once, e.g.
// `{__name__=~"x_(bucket|sum|count)"}`. Labels keep __name__ so callers can
// tell the families apart. If b <= a the growth is zero for every series
// present at b (never a zero-length range selector).
//
// Reads: sel at a and at b (instant), then `resets(R) + sum_over_time(R) * 0`
// with R = `sel[<b-a+300>s] @ b` (one per metric name when sel starts with
// "{", because both functions drop the name and _sum/_count would collide;
// in shards by label value when one would scan more than MaxSeriesPoints
// samples, see resetShards),
// and raw samples `sel'[<b-a+300>s] @ b` only for candidate series (resets >
// 0, a NaN sample in the window, present at a but not at b, seen only inside
// the window, or v_B < v_A), where sel' narrows sel with a regex on the one
// label that singles the candidates out best. Series born inside the window
// have v_A = 0, including ones that stopped exporting more than the lookback
// before b (the resets listing finds them). A v_A that is NaN is replaced by
// the latest finite raw sample at or before a.
func (c *Client) WindowGrowth(ctx context.Context, sel string, a, b int64) (Growth, error) {
	sel = strings.TrimSpace(sel)
	if b <= a {
		atB, err := c.Instant(ctx, sel, b)
		if err != nil {
			return Growth{}, fmt.Errorf("window growth: reading values at B: %w", err)
		}
		g := Growth{Series: make([]SeriesGrowth, 0, len(atB))}
		for _, s := range atB {
			sg := SeriesGrowth{Labels: s.Labels}
			if len(s.Samples) > 0 {
				v := s.Samples[0].V
				sg.End = &v
			}
			g.Series = append(g.Series, sg)
		}
		sortSeries(g.Series, func(s *SeriesGrowth) map[string]string { return s.Labels })
		return g, nil
	}

	window := b - a + lookbackSeconds
	braced := strings.HasPrefix(sel, "{")
	var atA, atB []Series
	err := parallel(ctx, 2, func(ctx context.Context, i int) error {
		var err error
		switch i {
		case 0:
			if atA, err = c.Instant(ctx, sel, a); err != nil {
				return fmt.Errorf("window growth: reading v_A: %w", err)
			}
		case 1:
			if atB, err = c.Instant(ctx, sel, b); err != nil {
				return fmt.Errorf("window growth: reading v_B: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Growth{}, err
	}

	index := make(map[string]*growthSeries, len(atB))
	var all []*growthSeries
	get := func(ls map[string]string) *growthSeries {
		k := labelKey(ls)
		gs, ok := index[k]
		if !ok {
			gs = &growthSeries{labels: ls}
			index[k] = gs
			all = append(all, gs)
		}
		return gs
	}
	for _, s := range atA {
		gs := get(s.Labels)
		if len(s.Samples) > 0 {
			gs.vA, gs.hasA = s.Samples[0].V, true
		} else {
			gs.nanA = true
		}
	}
	for _, s := range atB {
		gs := get(s.Labels)
		if len(s.Samples) > 0 {
			gs.vB, gs.hasB = s.Samples[0].V, true
		}
	}
	if len(all) == 0 {
		return Growth{}, nil // the family is absent
	}

	names := metricNames(all)
	if !braced && len(names) != 1 {
		return Growth{}, fmt.Errorf("window growth: selector %q matched %d metric names", sel, len(names))
	}
	resets, err := c.listResets(ctx, sel, braced, all, names, window, b)
	if err != nil {
		return Growth{}, err
	}
	for _, s := range resets {
		gs := get(s.Labels)
		// No value: NaN, i.e. a NaN sample in the window (see resetsQuery).
		if len(s.Samples) == 0 || s.Samples[0].V > 0 {
			gs.candidate = true
		}
	}
	var cands []*growthSeries
	for _, gs := range all {
		// Absent at B (stopped, or born and gone inside the window), NaN at A,
		// or a drop between A and B that resets somehow did not report.
		if !gs.hasB || gs.nanA || gs.vB < gs.vA {
			gs.candidate = true
		}
		if gs.candidate {
			cands = append(cands, gs)
		}
	}

	if len(cands) > 0 {
		if err := c.readRaw(ctx, sel, all, cands, index, window, b); err != nil {
			return Growth{}, err
		}
	}

	g := Growth{Series: make([]SeriesGrowth, 0, len(all))}
	for _, gs := range all {
		// A series with no finite value at A, at B or in between measured
		// nothing (NaN samples are skipped): leave it out, so a family
		// whose every sample is NaN/±Inf reads as absent (null), not as a
		// growth of 0.
		if !gs.hasA && !gs.hasB && len(gs.samples) == 0 {
			continue
		}
		sg := SeriesGrowth{Labels: gs.labels}
		if gs.hasB {
			v := gs.vB
			sg.End = &v
		}
		if gs.candidate {
			vA := gs.vA
			if gs.nanA {
				vA = latestAtOrBefore(gs.samples, a)
			}
			sg.Growth, sg.Restarted = walk(vA, gs.samples, a, b)
		} else {
			sg.Growth = gs.vB - gs.vA
		}
		if sg.Restarted {
			g.Restarted++
		}
		g.Series = append(g.Series, sg)
	}
	sortSeries(g.Series, func(s *SeriesGrowth) map[string]string { return s.Labels })
	return g, nil
}

// walk is the spec's growth over (a, b] from vA: next-prev when next >= prev,
// next when next < prev (a restart). It sums whole segments between restarts
// (last - first) rather than every step, so a series without a drop gives
// exactly v_last - v_A.
func walk(vA float64, samples []Sample, a, b int64) (growth float64, restarted bool) {
	base, prev := vA, vA
	for _, s := range samples {
		if s.T <= a || s.T > b {
			continue
		}
		if s.V < prev {
			growth += prev - base
			base = 0
			restarted = true
		}
		prev = s.V
	}
	return growth + prev - base, restarted
}

func latestAtOrBefore(samples []Sample, a int64) float64 {
	v := 0.0
	for _, s := range samples {
		if s.T > a {
			break
		}
		v = s.V
	}
	return v
}

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

// withMatcher adds one label matcher to a plain selector.
func withMatcher(sel, m string) string {
	if strings.HasSuffix(sel, "}") {
		body := strings.TrimRightFunc(sel[:len(sel)-1], unicode.IsSpace)
		if strings.HasSuffix(body, "{") || strings.HasSuffix(body, ",") {
			return body + m + "}"
		}
		return body + ", " + m + "}"
	}
	return sel + "{" + m + "}"
}

// withName narrows a braced selector to some of the metric names it matches:
// its own __name__ matchers are dropped and m (a matcher on __name__ that
// admits only names sel matches, so the result selects the same series as
// sel plus m) goes first. One name matcher rather than two because
// VictoriaMetrics (v1.8x, checked against /usr/bin/victoria-metrics) answers
// nothing, without an error, for a selector holding two __name__ matchers and
// another label matcher unless the exact name comes first: e.g.
// {__name__=~"a_(sum|count)", job="x", __name__="a_sum"} is empty there. A
// selector this parser does not understand gets m appended, which Prometheus
// reads the same way.
func withName(sel, m string) string {
	ms, ok := splitMatchers(sel)
	if !ok {
		return withMatcher(sel, m)
	}
	out := []string{m}
	for _, x := range ms {
		if x.label != "__name__" {
			out = append(out, x.text)
		}
	}
	return "{" + strings.Join(out, ", ") + "}"
}

// matcherText is one label matcher of a selector, as written.
type matcherText struct{ label, text string }

// splitMatchers splits a braced selector `{l op "v", ...}` into its matchers
// (values quoted with ", ' or `, backslash escapes inside the first two).
// ok is false for anything else, including a selector with a metric name
// before the brace.
func splitMatchers(sel string) (ms []matcherText, ok bool) {
	s := strings.TrimSpace(sel)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	i := 0
	skip := func() {
		for i < len(body) && strings.IndexByte(" \t\r\n", body[i]) >= 0 {
			i++
		}
	}
	isName := func(c byte, first bool) bool {
		return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
	}
	for {
		skip()
		if i == len(body) {
			return ms, true
		}
		start := i
		for i < len(body) && isName(body[i], i == start) {
			i++
		}
		if i == start {
			return nil, false
		}
		label := body[start:i]
		skip()
		switch {
		case strings.HasPrefix(body[i:], "=~"), strings.HasPrefix(body[i:], "!="), strings.HasPrefix(body[i:], "!~"):
			i += 2
		case strings.HasPrefix(body[i:], "="):
			i++
		default:
			return nil, false
		}
		skip()
		if i == len(body) {
			return nil, false
		}
		q := body[i]
		if q != '"' && q != '\'' && q != '`' {
			return nil, false
		}
		for i++; i < len(body) && body[i] != q; i++ {
			if body[i] == '\\' && q != '`' {
				i++
			}
		}
		if i >= len(body) {
			return nil, false
		}
		i++
		ms = append(ms, matcherText{label, body[start:i]})
		skip()
		if i == len(body) {
			return ms, true
		}
		if body[i] != ',' {
			return nil, false
		}
		i++
	}
}

// alternation is a regex matching exactly the given strings (Prometheus
// anchors label regexes).
func alternation(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(q, "|")
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

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
