package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/substrate/density/pkg/promql"
)

// Discovery defaults (runs.md).
const (
	DefaultUserCountQuery = "sum(locust_users)"
	DefaultRunGap         = 120
	// discoveryGrid is the finest step and the alignment of every
	// discovery read: aligning to it makes run ids (prom-<start>) the same
	// whatever dashboard range found the run.
	discoveryGrid = 10
	// maxDiscoveryPoints keeps one series under Prometheus's 11,000 points.
	maxDiscoveryPoints = 10000
	// edgeChunk is how far one read looks for a run edge outside the
	// range (8,640 points at 10 s), and edgeLimit how far in total.
	edgeChunk = 24 * 3600
	edgeLimit = 30 * 24 * 3600
)

// Discovery finds runs in the user-count series: a run is a maximal
// stretch in which the series is > 0; two consecutive positive samples more
// than Gap seconds apart (the series stayed at 0 or was absent in between)
// split it. Edges sit on the 10 s grid: Start is the first grid instant
// with users > 0, End the last one (Prometheus's 5-minute lookback makes a
// series that stopped without a final 0 and without a staleness marker, as
// backfilled data, end up to 5 minutes late). The steady window comes from
// the samples inside [Start, End].
type Discovery struct {
	client *promql.Client
	query  string
	gap    int64
}

// NewDiscovery returns discovery over client with the user-count query
// (default sum(locust_users)) and gap in seconds (default 120).
func NewDiscovery(client *promql.Client, query string, gap int64) *Discovery {
	if query == "" {
		query = DefaultUserCountQuery
	}
	if gap <= 0 {
		gap = DefaultRunGap
	}
	return &Discovery{client: client, query: query, gap: gap}
}

// Query is the user-count query.
func (d *Discovery) Query() string { return d.query }

// DiscoveryStep is max(10s, range/10000), rounded up to the 10 s grid.
func DiscoveryStep(rangeS int64) int64 {
	step := (rangeS + maxDiscoveryPoints - 1) / maxDiscoveryPoints
	step = (step + discoveryGrid - 1) / discoveryGrid * discoveryGrid
	return max(step, discoveryGrid)
}

func floorGrid(t int64) int64 { return t - mod(t, discoveryGrid) }
func ceilGrid(t int64) int64  { return floorGrid(t + discoveryGrid - 1) }
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// span is a run found in a read: first and last positive grid instants.
type span struct{ start, end int64 }

// read returns the user-count samples at 10 s over [from, to] (aligned).
// Several result series (a query without an aggregation) are summed per
// instant.
func (d *Discovery) read(ctx context.Context, from, to int64) ([]promql.Sample, error) {
	series, err := d.client.Range(ctx, d.query, floorGrid(from), ceilGrid(to), discoveryGrid)
	if err != nil {
		return nil, fmt.Errorf("reading the user-count series: %w", err)
	}
	return sumSeries(series), nil
}

func sumSeries(series []promql.Series) []promql.Sample {
	if len(series) == 1 {
		return series[0].Samples
	}
	sum := map[int64]float64{}
	for _, s := range series {
		for _, p := range s.Samples {
			sum[p.T] += p.V
		}
	}
	out := make([]promql.Sample, 0, len(sum))
	for t, v := range sum {
		out = append(out, promql.Sample{T: t, V: v})
	}
	sortSamples(out)
	return out
}

func sortSamples(s []promql.Sample) {
	slices.SortFunc(s, func(a, b promql.Sample) int { return cmp.Compare(a.T, b.T) })
}

// split cuts samples into runs with the gap rule.
func (d *Discovery) split(samples []promql.Sample) []span {
	var out []span
	for _, p := range samples {
		if !(p.V > 0) {
			continue
		}
		if n := len(out); n > 0 && p.T-out[n-1].end <= d.gap {
			out[n-1].end = p.T
			continue
		}
		out = append(out, span{p.T, p.T})
	}
	return out
}

// List returns the runs that start in [from, to], oldest first. A run that
// began before from is found whole but left out; one still going at now is
// Live. Ranges longer than 10,000 steps are first scanned at a coarser step
// with max_over_time over a 10 s subquery (so a short run between two
// coarse points is not missed), then each active stretch is read at 10 s.
func (d *Discovery) List(ctx context.Context, from, to, now int64) ([]Entry, error) {
	if to < from {
		return nil, fmt.Errorf("run discovery over [%d, %d]: end before start", from, to)
	}
	from, to = floorGrid(from), ceilGrid(to)
	if now != 0 {
		to = min(to, ceilGrid(now))
	}
	step := DiscoveryStep(to - from)
	regions := []span{{from, to}}
	if step > discoveryGrid {
		var err error
		if regions, err = d.coarse(ctx, from, to, step); err != nil {
			return nil, err
		}
	}
	seen := map[int64]bool{}
	var out []Entry
	for _, reg := range regions {
		samples, err := d.read(ctx, reg.start, reg.end)
		if err != nil {
			return nil, err
		}
		for _, sp := range d.split(samples) {
			e, err := d.complete(ctx, sp, reg, now)
			if err != nil {
				return nil, err
			}
			if seen[e.Start] || e.Start < from || e.Start > to {
				continue
			}
			seen[e.Start] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// coarse finds the stretches of [from, to] with any positive sample, read
// at step; each is returned widened by one step (the subquery looks back
// one step) and by the gap on both sides.
func (d *Discovery) coarse(ctx context.Context, from, to, step int64) ([]span, error) {
	q := "max_over_time((" + d.query + ")[" + strconv.FormatInt(step, 10) + "s:" + strconv.Itoa(discoveryGrid) + "s])"
	// The last point must reach to: each point only covers the step before it.
	last := from + (to-from+step-1)/step*step
	series, err := d.client.Range(ctx, q, from, last, step)
	if err != nil {
		return nil, fmt.Errorf("scanning the user-count series: %w", err)
	}
	var out []span
	for _, p := range sumSeries(series) {
		if !(p.V > 0) {
			continue
		}
		lo, hi := max(from, p.T-step-d.gap), min(to, p.T+d.gap)
		if n := len(out); n > 0 && lo <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, hi)
			continue
		}
		out = append(out, span{lo, hi})
	}
	return out, nil
}

// complete turns a span found inside region into an Entry, reading past the
// region when the run may continue beyond it.
func (d *Discovery) complete(ctx context.Context, sp span, region span, now int64) (Entry, error) {
	start, end := sp.start, sp.end
	var err error
	if start-region.start <= d.gap {
		if start, err = d.findStart(ctx, start); err != nil {
			return Entry{}, err
		}
	}
	live := false
	if region.end-end <= d.gap {
		if end, live, err = d.findEnd(ctx, end, now); err != nil {
			return Entry{}, err
		}
	}
	return d.entry(ctx, start, end, live)
}

// findStart walks back from a positive instant t to the run's first
// positive instant.
func (d *Discovery) findStart(ctx context.Context, t int64) (int64, error) {
	first := t
	for cursor := t; t-cursor < edgeLimit; cursor -= edgeChunk {
		lo := cursor - edgeChunk
		samples, err := d.read(ctx, lo, cursor)
		if err != nil {
			return 0, err
		}
		for i := len(samples) - 1; i >= 0; i-- {
			p := samples[i]
			if p.T >= first || !(p.V > 0) {
				continue
			}
			if first-p.T > d.gap {
				return first, nil
			}
			first = p.T
		}
		if first-lo > d.gap {
			return first, nil
		}
	}
	return first, nil
}

// findEnd walks forward from a positive instant t to the run's last
// positive instant; live is true when the run is still going at now.
func (d *Discovery) findEnd(ctx context.Context, t, now int64) (end int64, live bool, err error) {
	last := t
	for cursor := t; cursor-t < edgeLimit; cursor += edgeChunk {
		hi := cursor + edgeChunk
		if now != 0 {
			hi = min(hi, ceilGrid(now))
		}
		if hi <= cursor {
			break
		}
		samples, err := d.read(ctx, cursor, hi)
		if err != nil {
			return 0, false, err
		}
		for _, p := range samples {
			if p.T <= last || !(p.V > 0) {
				continue
			}
			if p.T-last > d.gap {
				return last, false, nil
			}
			last = p.T
		}
		if hi-last > d.gap {
			return last, false, nil
		}
		if now != 0 && hi >= ceilGrid(now) {
			break
		}
	}
	return last, now != 0 && ceilGrid(now)-last <= d.gap, nil
}

// entry reads the run's samples for its steady window and peak.
func (d *Discovery) entry(ctx context.Context, start, end int64, live bool) (Entry, error) {
	samples, err := d.read(ctx, start, end)
	if err != nil {
		return Entry{}, err
	}
	st := ComputeSteady(userSamples(samples, start, end), start, end)
	e := Entry{
		Run: Run{ID: PromRunID(start), Start: start, End: end,
			SteadyStart: st.Start, SteadyEnd: st.End, SteadyFromSamples: st.FromSamples, PeakUsers: st.Peak},
		Source: SourcePrometheus, EndKnown: true, Live: live, SteadyWhy: st.Why,
		WindowFrom: "the user-count series " + d.query,
	}
	return e, nil
}

func userSamples(samples []promql.Sample, start, end int64) []UserSample {
	out := make([]UserSample, 0, len(samples))
	for _, p := range samples {
		if p.T >= start && p.T <= end {
			out = append(out, UserSample{Timestamp: p.T, Users: p.V})
		}
	}
	return out
}

// Get resolves prom-<start>: a run must start exactly at start (the
// series is > 0 there and was not > 0 within the gap before).
func (d *Discovery) Get(ctx context.Context, start, now int64) (Entry, error) {
	id := PromRunID(start)
	if start != floorGrid(start) {
		return Entry{}, fmt.Errorf("run %s: %w: Prometheus run starts lie on the 10 s grid", id, ErrRunNotFound)
	}
	samples, err := d.read(ctx, start-d.gap-discoveryGrid, start)
	if err != nil {
		return Entry{}, fmt.Errorf("run %s: %w", id, err)
	}
	atStart := false
	for _, p := range samples {
		switch {
		case p.T == start && p.V > 0:
			atStart = true
		case p.T < start && p.V > 0 && start-p.T <= d.gap:
			return Entry{}, fmt.Errorf("run %s: %w: the user count was already > 0 at %d", id, ErrRunNotFound, p.T)
		}
	}
	if !atStart {
		return Entry{}, fmt.Errorf("run %s: %w: the user count is not > 0 at %d", id, ErrRunNotFound, start)
	}
	end, live, err := d.findEnd(ctx, start, now)
	if err != nil {
		return Entry{}, fmt.Errorf("run %s: %w", id, err)
	}
	return d.entry(ctx, start, end, live)
}

// Range is the ad hoc run [from, to] with the steady window of the
// user-count samples inside it (the run window when there are none).
func (d *Discovery) Range(ctx context.Context, from, to int64) (Entry, error) {
	e := Entry{Run: Run{ID: IDRange, Start: from, End: to, SteadyStart: from, SteadyEnd: to},
		Source: SourceRange, EndKnown: true, WindowFrom: "the dashboard time range"}
	samples, err := d.read(ctx, from, to)
	if err != nil {
		// The window is still usable; the caller shows why the steady
		// window is the run window.
		e.SteadyWhy = SteadyNoSamples
		e.Problems = append(e.Problems, err.Error())
		return e, nil
	}
	st := ComputeSteady(userSamples(samples, from, to), from, to)
	e.SteadyStart, e.SteadyEnd, e.SteadyFromSamples, e.SteadyWhy, e.PeakUsers = st.Start, st.End, st.FromSamples, st.Why, st.Peak
	return e, nil
}

// errNoDiscovery is returned when discovery has no client.
var errNoDiscovery = errors.New("no Prometheus client")

// Check verifies the user-count query parses and runs (instant at now).
func (d *Discovery) Check(ctx context.Context, now int64) error {
	if d.client == nil {
		return errNoDiscovery
	}
	if _, err := d.client.Instant(ctx, d.query, now); err != nil {
		return fmt.Errorf("user-count query: %w", err)
	}
	return nil
}

// Samples returns the user-count samples at 10 s over [from, to] (the
// observed user counts of a run outside the results store).
func (d *Discovery) Samples(ctx context.Context, from, to int64) ([]UserSample, error) {
	samples, err := d.read(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return userSamples(samples, from, to), nil
}
