package promql

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// Range evaluates query over [start, end] at step seconds (if end <= start,
// end = start+1) and joins the chunks RangeEach reads per label set. Series
// are sorted by label set the way Prometheus sorts a matrix; a series whose
// samples were all NaN/±Inf is kept with no samples.
func (c *Client) Range(ctx context.Context, query string, start, end, step int64) ([]Series, error) {
	return c.rangeJoined(ctx, query, 0, start, end, step)
}

// RangeOver is Range for a query that aggregates over inputs series (a
// distribution band such as quantile(0.5, q) over every pod): its chunks
// are sized by the series the server evaluates, not by the few it answers,
// so that each request stays within the timeout however many series fan
// in. inputs <= 0 is Range.
func (c *Client) RangeOver(ctx context.Context, query string, inputs, start, end, step int64) ([]Series, error) {
	return c.rangeJoined(ctx, query, inputs, start, end, step)
}

func (c *Client) rangeJoined(ctx context.Context, query string, inputs, start, end, step int64) ([]Series, error) {
	var parts [][]Series
	err := c.rangeEach(ctx, query, inputs, start, end, step, func(chunk []Series) error {
		parts = append(parts, chunk)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return joinChunks(parts), nil
}

// countAbovePoints: a range read with more evaluation points than this (one
// hour at 10 s) first counts its series; shorter reads go out whole unless
// MaxPoints cuts them.
const countAbovePoints = 361

// RangeEach evaluates query over [start, end] at step seconds (if end <=
// start, end = start+1) in consecutive time chunks and hands each chunk's
// series to visit, in time order, from the calling goroutine; a chunk is not
// referenced after visit returns, so a caller that folds chunks into
// running figures never holds the whole answer. Each chunk's series are
// sorted like a Prometheus matrix; a series missing from a chunk had no
// point in it.
//
// Chunks hold at most MaxPoints points per series (Prometheus refuses more
// than 11,000) and at most MaxSeriesPoints points in all, so neither the
// response-size limit nor the server's sample budget is reached by a long
// read over many series: a read longer than an hour first counts its series
// with one instant `count(query)` at the middle of the range, and every
// chunk re-sizes the next by the most series seen so far (series come and
// go). A chunk the server still refuses for its sample budget is halved (see
// rangeSpan). The first failing chunk fails the read; the chunks visited
// before it must then be discarded by the caller, as must the whole read
// when visit returns an error (which is returned as is).
func (c *Client) RangeEach(ctx context.Context, query string, start, end, step int64, visit func(chunk []Series) error) error {
	return c.rangeEach(ctx, query, 0, start, end, step, visit)
}

// rangeEach is RangeEach with the chunks sized by inputs series when
// inputs > 0 (RangeOver), by the answer's own series otherwise.
func (c *Client) rangeEach(ctx context.Context, query string, inputs, start, end, step int64, visit func(chunk []Series) error) error {
	if step <= 0 {
		return c.wrap(KindRange, query, fmt.Errorf("step must be positive, got %d", step))
	}
	if end <= start {
		end = start + 1
	}
	idx := c.log.add(Entry{Kind: KindRange, Query: query, Start: start, End: end, Step: step})
	target := c.effective(c.cfg.RangeTimeout) / 4
	series, scale := int64(1), 1.0
	if points := (end-start)/step + 1; inputs > 0 || points > countAbovePoints {
		series = inputs
		if inputs <= 0 {
			n, err := c.countSeries(ctx, query, start+(end-start)/step/2*step, idx)
			if err != nil {
				return c.wrap(KindRange, query, fmt.Errorf("counting its series to size the chunks: %w", err))
			}
			series = max(n, 1)
		}
		// A read the series budget binds (not MaxPoints) starts at a quarter
		// of it, and at least one TSDB chunk per series (minFeedbackPoints):
		// its cost per point is unknown until a chunk comes back, and a
		// first chunk that times out costs a whole timeout.
		if int64(c.cfg.MaxSeriesPoints)/series < int64(c.cfg.MaxPoints) {
			scale = min(1, max(0.25, float64(minFeedbackPoints*series)/float64(c.cfg.MaxSeriesPoints)))
		}
	}
	// Chunks are sized by points and then by time: one that takes more than
	// a quarter of the timeout shrinks the next in proportion (a loaded
	// server evaluates slower than the budget assumes; a series fanning in
	// from many, like `and on (instance)` over every pod, costs more than its
	// answer shows), a fast one lets them grow back, and one that times out
	// is tried again at a quarter of its size, at most maxShrinks times per
	// read, if it was big (over a tenth of the budget: a small read that
	// times out means a stuck server, and retrying would only hang the
	// caller longer). Each request thereby stays within the timeout the spec
	// gives it.
	ceiling, shrinks := 1.0, 0
	for from, k := start, 1; from <= end; {
		points := min(int64(c.cfg.MaxPoints), max(int64(float64(c.cfg.MaxSeriesPoints)*scale)/series, 1))
		sp := nextSpan(from, end, step, points)
		began := time.Now()
		parts, err := c.rangeSpan(ctx, query, sp, step, idx)
		size := ((sp.end-sp.start)/step + 1) * series
		if err != nil && timedOut(err) && ctx.Err() == nil && size > int64(c.cfg.MaxSeriesPoints)/10 && shrinks < maxShrinks {
			shrinks++
			scale = float64(max((sp.end-sp.start)/step+1, 4)/4*series) / float64(c.cfg.MaxSeriesPoints)
			ceiling = 2 * scale // never grow back to the size that timed out
			continue
		}
		if err != nil {
			if sp.start != start || sp.end != end {
				left := (end - sp.end + points*step - 1) / (points * step)
				err = fmt.Errorf("chunk %d/%d [%d, %d]: %w", k, int64(k)+left, sp.start, sp.end, err)
			}
			return c.wrap(KindRange, query, err)
		}
		if took := time.Since(began); took > target {
			// Not below one TSDB chunk of 10 s samples per series: thinner
			// slices make the server decode the same chunks again for every
			// request (measured: 20-point slices of a 5,000-series read cost
			// Prometheus 1.7x the CPU of 360-point ones).
			floor := float64(min(minFeedbackPoints, points)*series) / float64(c.cfg.MaxSeriesPoints)
			scale = max(scale*max(float64(target)/float64(took), 1.0/8), min(floor, scale))
		} else if took < target/4 {
			scale = min(scale*2, ceiling)
		}
		for _, p := range parts {
			sortSeries(p, func(s *Series) map[string]string { return s.Labels })
			series = max(series, int64(len(p)))
			if err := visit(p); err != nil {
				return err
			}
		}
		from = sp.end + step
		k++
	}
	return nil
}

// maxShrinks bounds how often one range read re-sizes a timed-out chunk.
const maxShrinks = 2

// minFeedbackPoints is the fewest points per series the time feedback cuts a
// chunk to: one Prometheus TSDB chunk (120 samples) at a 10 s scrape.
const minFeedbackPoints = 120

// countSeries is how many series query gives at t (0 when none). Like the
// chunks, it belongs to the range read's log entry idx (the log lists the
// queries a caller asked for, not how they were cut).
func (c *Client) countSeries(ctx context.Context, query string, t int64, idx int) (int64, error) {
	a, err := c.instant(ctx, "count("+query+")", t, idx)
	if err != nil {
		return 0, err
	}
	if a.resultType != "vector" {
		return 0, fmt.Errorf("count: unexpected result type %q (want vector)", valueType(a))
	}
	if len(a.series) == 0 || len(a.series[0].Samples) == 0 {
		return 0, nil
	}
	return int64(a.series[0].Samples[0].V), nil
}

// rangeSpan reads one span. When the server refuses it for loading too many
// samples (Prometheus --query.max-samples, VictoriaMetrics
// -search.maxSamplesPerQuery), the span is halved on the step grid and each
// half read in turn, down to single points; the parts come back in time
// order.
func (c *Client) rangeSpan(ctx context.Context, query string, sp span, step int64, idx int) ([][]Series, error) {
	args := url.Values{"query": {query}, "start": {strconv.FormatInt(sp.start, 10)},
		"end": {strconv.FormatInt(sp.end, 10)}, "step": {strconv.FormatInt(step, 10)}}
	v, err := c.call(ctx, c.cfg.RangeTimeout, idx, epQueryRange, args)
	if err != nil {
		points := (sp.end-sp.start)/step + 1
		if points < 2 || !tooManySamples(err) {
			return nil, err
		}
		mid := sp.start + (points/2-1)*step
		left, err := c.rangeSpan(ctx, query, span{sp.start, mid}, step, idx)
		if err != nil {
			return nil, err
		}
		right, err := c.rangeSpan(ctx, query, span{mid + step, sp.end}, step, idx)
		if err != nil {
			return nil, err
		}
		return append(left, right...), nil
	}
	if v.resultType != "matrix" {
		return nil, fmt.Errorf("unexpected result type %q (want matrix)", valueType(v))
	}
	return [][]Series{v.series}, nil
}

// tooManySamples recognises a refusal for the server's sample budget.
func tooManySamples(err error) bool {
	var ae *v1.Error
	if !errors.As(err, &ae) {
		return false
	}
	return strings.Contains(ae.Msg, "too many samples") || strings.Contains(ae.Msg, "maxSamplesPerQuery")
}

// span is one request's [start, end] of a split range query.
type span struct{ start, end int64 }

// nextSpan is the span of at most points evaluation points (at least one)
// that starts at from and ends no later than end. RangeEach starts each
// span one step after the previous one ends, so the spans evaluate exactly
// the unsplit query's grid (start + k*step), no point twice.
func nextSpan(from, end, step, points int64) span {
	return span{from, min(from+(max(points, 1)-1)*step, end)}
}

// joinChunks concatenates per-chunk answers per label set, in chunk order,
// and sorts the series the way Prometheus sorts a matrix.
func joinChunks(parts [][]Series) []Series {
	if len(parts) == 1 {
		out := parts[0]
		sortSeries(out, func(s *Series) map[string]string { return s.Labels })
		return out
	}
	// First pass: the label sets and their total sample counts, so that
	// each joined series is allocated once.
	index := map[string]int{}
	keys := make([][]string, len(parts))
	var out []Series
	var sizes []int
	for pi, part := range parts {
		keys[pi] = make([]string, len(part))
		for si, s := range part {
			k := labelKey(s.Labels)
			keys[pi][si] = k
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, Series{Labels: s.Labels})
				sizes = append(sizes, 0)
			}
			sizes[i] += len(s.Samples)
		}
	}
	for i := range out {
		if sizes[i] > 0 {
			out[i].Samples = make([]Sample, 0, sizes[i])
		}
	}
	for pi, part := range parts {
		for si, s := range part {
			i := index[keys[pi][si]]
			// Defensive: a backend that aligns chunk edges to its own grid
			// could answer a boundary point twice; keep time strictly
			// increasing.
			cur := out[i].Samples
			for _, p := range s.Samples {
				if len(cur) == 0 || p.T > cur[len(cur)-1].T {
					cur = append(cur, p)
				}
			}
			out[i].Samples = cur
		}
	}
	sortSeries(out, func(s *Series) map[string]string { return s.Labels })
	return out
}
