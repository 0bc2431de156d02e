package harvest

import (
	"context"
	"errors"
	"fmt"

	"github.com/substrate/density/pkg/promql"
)

// DefaultSeriesPoints is the export's Params.SeriesPoints: at most this
// many points of per-node or per-pod series per PSI resource are kept for
// psi_series.json's top series (a 24 h run over 5,000 pods has 43 M).
const DefaultSeriesPoints = 500_000

// readEach streams a range query's chunks to visit (see promql.RangeEach),
// with readRange's error text. On error the caller drops what visit folded.
func readEach(ctx context.Context, c *promql.Client, q string, start, end int64, visit func([]promql.Series)) error {
	err := c.RangeEach(ctx, q, start, end, Step, func(chunk []promql.Series) error {
		visit(chunk)
		return nil
	})
	return rangeError(q, start, end, err)
}

// rangeError names the window a range query's error came from (nil stays
// nil); the promql.QueryError in it names the query.
func rangeError(q string, start, end int64, err error) error {
	if err == nil {
		return nil
	}
	if qe := (*promql.QueryError)(nil); errors.As(err, &qe) {
		return fmt.Errorf("range read over [%d, %d]: %w", start, end, err)
	}
	return fmt.Errorf("range query %s over [%d, %d]: %w", q, start, end, err)
}

// seriesKeeper keeps the per-series samples of a streamed read for panels,
// within a budget of points (Params.SeriesPoints): when the first chunk's
// series times the range's steps exceed it, each series keeps one point per
// stride, the maximum of the samples in it (like Grafana's max
// consolidation, so stalls stay visible), stamped with the stride's start
// on the 10 s grid. The block's statistics never use these points.
type seriesKeeper struct {
	budget     int // < 0: keep nothing; 0: keep every sample
	start, end int64
	stride     int64 // seconds per kept point; 0 until the first chunk
	index      map[string]int
	out        []promql.Series
}

func newSeriesKeeper(budget int, start, end int64) *seriesKeeper {
	return &seriesKeeper{budget: budget, start: start, end: end, index: map[string]int{}}
}

func (k *seriesKeeper) add(chunk []promql.Series) {
	if k.budget < 0 {
		return
	}
	if k.stride == 0 {
		k.stride = Step
		points := (max(k.end, k.start+1)-k.start)/Step + 1
		if total := int64(len(chunk)) * points; k.budget > 0 && total > int64(k.budget) {
			k.stride = Step * ((total + int64(k.budget) - 1) / int64(k.budget))
		}
	}
	for _, s := range chunk {
		key := s.Key()
		i, ok := k.index[key]
		if !ok {
			i = len(k.out)
			k.index[key] = i
			k.out = append(k.out, promql.Series{Labels: s.Labels})
			if k.stride == Step {
				k.out[i].Samples = s.Samples // the chunk is not reused after visit
				continue
			}
		}
		dst := &k.out[i]
		if k.stride == Step {
			dst.Samples = append(dst.Samples, s.Samples...)
			continue
		}
		for _, smp := range s.Samples {
			t := k.start + (smp.T-k.start)/k.stride*k.stride
			if n := len(dst.Samples); n > 0 && dst.Samples[n-1].T == t {
				dst.Samples[n-1].V = max(dst.Samples[n-1].V, smp.V)
			} else {
				dst.Samples = append(dst.Samples, promql.Sample{T: t, V: smp.V})
			}
		}
	}
}

// series returns the kept series sorted like a Prometheus matrix (nil when
// the budget keeps none).
func (k *seriesKeeper) series() []promql.Series {
	if k.budget < 0 {
		return nil
	}
	promql.SortSeries(k.out)
	if k.out == nil {
		return []promql.Series{}
	}
	return k.out
}

// downsampled is the notice for a keeper that thinned its series, or nil.
func (k *seriesKeeper) downsampled(block, field string) *Notice {
	if k.stride <= Step {
		return nil
	}
	return &Notice{Block: block, Field: field, Reason: fmt.Sprintf(
		"panel series thinned to one point per %d s (the maximum of each interval): %d series at %d s exceed %d points; the summary uses every %d s sample",
		k.stride, len(k.out), Step, k.budget, Step)}
}
