// Package harvest computes the server_summary blocks (docs/artifacts.md;
// the spec's server-telemetry.md) from Prometheus: cluster packing, node and
// pod PSI, snapshot window figures, active actors, working sets and OOM
// events. It knows nothing of Grafana or of files: the plugin turns a Result
// into frames, pkg/artifact into server_summary.json and the flat row.
//
// Every field that could not be measured is a nil pointer (or an all-nil
// percentile.Summary) and comes with a Notice saying why; nothing unmeasured
// ever reads as zero.
package harvest

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/substrate/density/pkg/promql"
)

// Step is the range-query resolution of every block, in seconds.
const Step = 10

// Block names, as the JSON keys of server_summary.json; Notice.Block holds one.
const (
	BlockPacking      = "cluster_packing"
	BlockNodePSI      = "node_psi"
	BlockPodPSI       = "pod_psi"
	BlockSnapshots    = "snapshots"
	BlockActiveActors = "active_actors"
	BlockWorkingSet   = "working_set"
	BlockOOM          = "oom_events"
)

// Selectors name the Substrate objects the queries select (all configurable).
type Selectors struct {
	WorkerPool      string // ate_workerpool_name of the benchmark pool
	WorkerNamespace string
	WorkerContainer string
	WorkerPodRegex  string // a RE2 regex matched against the whole pod name
	AteletNamespace string
	AteletContainer string
}

// DefaultSelectors are the spec's defaults (server-telemetry.md): the one
// home of the selector defaults of the datasource settings, the export
// flags and pkg/cluster's options.
func DefaultSelectors() Selectors {
	return Selectors{
		WorkerPool:      "benchmark-ateom",
		WorkerNamespace: "benchmark-workloads",
		WorkerContainer: "ateom",
		WorkerPodRegex:  "benchmark-ateom.*",
		AteletNamespace: "ate-system",
		AteletContainer: "atelet",
	}
}

// DefaultLagS is the default atelet export lag in seconds (the datasource's
// ateletLagSeconds, the export's --atelet-lag-s).
const DefaultLagS = 70

// Params is one run as the harvest sees it. Times are Unix seconds.
type Params struct {
	Start, End             int64 // the run window
	SteadyStart, SteadyEnd int64 // the steady-state window (pkg/runs)
	LagS                   int64 // atelet lag; shift = LagS / 2
	Sel                    Selectors
	// Now, when non-zero, is the current time: a run that ended less than
	// LagS before Now gets a notice that atelet data may be incomplete (the
	// datasource never waits; the export waits before harvesting and leaves
	// it zero).
	Now int64
	// SeriesPoints bounds the per-node and per-pod samples a PSI block keeps
	// (PSIResource.Series, the top series of psi_series.json), in points per
	// resource: 0 keeps every sample, a negative value none (the datasource
	// reads its panels' series at panel resolution), a positive one thins
	// the series to fit (DefaultSeriesPoints for the export). A block that
	// keeps series also folds the bands across them per 10 s timestamp
	// from every sample (PSIResource.Bands). Summaries always use every
	// sample.
	SeriesPoints int
}

// Shift is lag_s // 2 (integer division; a negative lag floors like Python).
func (p Params) Shift() int64 {
	s := p.LagS / 2
	if p.LagS < 0 && p.LagS%2 != 0 {
		s--
	}
	return s
}

// inSteady reports whether t lies in the closed steady window.
func (p Params) inSteady(t int64) bool { return p.SteadyStart <= t && t <= p.SteadyEnd }

// steadyPoints is how many points of a range read over [start, end] at
// Step lie in the steady window: the size of a series' steady samples, to
// allocate pooled samples once instead of growing them by copies.
func (p Params) steadyPoints(start, end int64) int {
	from := max(p.SteadyStart, start)
	if from > start { // round up to the read's grid
		from = start + (from-start+Step-1)/Step*Step
	}
	to := min(p.SteadyEnd, max(end, start+1))
	if to < from {
		return 0
	}
	return int((to-from)/Step + 1)
}

// Validate rejects parameters no block can use.
func (p Params) Validate() error {
	switch {
	case p.Start <= 0 || p.End <= 0:
		return fmt.Errorf("run window [%d, %d]: times must be positive Unix seconds", p.Start, p.End)
	case p.End < p.Start:
		return fmt.Errorf("run window [%d, %d]: end before start", p.Start, p.End)
	case p.SteadyEnd < p.SteadyStart:
		return fmt.Errorf("steady window [%d, %d]: end before start", p.SteadyStart, p.SteadyEnd)
	case p.LagS < 0:
		return fmt.Errorf("atelet lag %d s: must not be negative", p.LagS)
	case p.Sel.WorkerPool == "" || p.Sel.WorkerNamespace == "" || p.Sel.WorkerContainer == "" ||
		p.Sel.WorkerPodRegex == "" || p.Sel.AteletNamespace == "" || p.Sel.AteletContainer == "":
		return fmt.Errorf("selectors %+v: every selector must be set", p.Sel)
	}
	return nil
}

// Result is every block of server_summary.json except metadata.
type Result struct {
	Packing      Packing
	NodePSI      PSI
	PodPSI       PSI
	Snapshots    Snapshots
	ActiveActors ActiveActors
	WorkingSet   WorkingSet
	OOM          OOM
	// Notices say why a field is null (and other caveats), in block order.
	Notices []Notice
	// Queries is every PromQL string issued, grouped by block in the order
	// above (within a block, in issue order).
	Queries []string
	// Warnings are the warnings Prometheus (or Thanos, Mimir) attached to
	// successful answers, e.g. partial data, in the same order.
	Warnings []string
}

// Harvest reads every block concurrently (the client bounds requests in
// flight). A failing read never cancels the other blocks; it nulls only the
// fields that depend on it. The result is assembled deterministically:
// blocks, notices and queries come in the fixed block order.
func Harvest(ctx context.Context, c *promql.Client, p Params) *Result {
	// Blocks write disjoint fields of res; a block that fails or panics
	// keeps its empty (all-null) value.
	res := EmptyResult()
	if err := p.Validate(); err != nil {
		res.Notices = append([]Notice{{Reason: "nothing harvested: " + err.Error()}}, res.OOM.clusterPending()...)
		return res
	}
	blocks := Blocks()
	logs := make([]*promql.Log, len(blocks))
	clients := make([]*promql.Client, len(blocks))
	for i := range logs {
		logs[i] = &promql.Log{}
		clients[i] = c.Recording(logs[i])
	}
	notices := make([][]Notice, len(blocks))
	// The sampled-actors range read is shared by active_actors and the
	// per_actor working set; it is issued (and logged) by the actors block's
	// client whichever block asks first.
	actors := slices.IndexFunc(blocks, func(b Block) bool { return b.Name == BlockActiveActors })
	sampled := onceSampled(clients[actors], p)

	var wg sync.WaitGroup
	for i, b := range blocks {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					notices[i] = append(notices[i], Notice{Block: b.Name,
						Reason: fmt.Sprintf("internal error (a bug; please report): %v\n%s", r, debug.Stack())})
				}
			}()
			notices[i] = b.read(ctx, clients[i], p, sampled, res)
		})
	}
	wg.Wait()

	if p.Now != 0 && p.Now < p.End+p.LagS {
		res.Notices = append(res.Notices, Notice{Block: "", Reason: fmt.Sprintf(
			"the run ended %d s ago, less than the atelet lag of %d s: atelet data (snapshots, active actors, actor working set) may be incomplete",
			max(p.Now-p.End, 0), p.LagS)})
	}
	for i, b := range blocks {
		res.Notices = append(res.Notices, notices[i]...)
		for _, w := range logs[i].Warnings() {
			res.Notices = append(res.Notices, warned(b.Name, w))
		}
		res.Queries = append(res.Queries, logs[i].Queries()...)
		res.Warnings = append(res.Warnings, logs[i].Warnings()...)
	}
	return res
}

// sampledFn returns the sampled-actors range read (memoized within one Harvest).
type sampledFn func(ctx context.Context) rangeRead

// rangeRead is a range query's outcome.
type rangeRead struct {
	query  string
	series []promql.Series
	err    error
}

func onceSampled(c *promql.Client, p Params) sampledFn {
	var (
		once sync.Once
		r    rangeRead
	)
	return func(ctx context.Context) rangeRead {
		once.Do(func() { r = readSampledActors(ctx, c, p) })
		return r
	}
}

// readRange runs one range query.
func readRange(ctx context.Context, c *promql.Client, q string, start, end int64) rangeRead {
	s, err := c.Range(ctx, q, start, end, Step)
	return rangeRead{query: q, series: s, err: rangeError(q, start, end, err)}
}

// quote renders s as a PromQL double-quoted string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// processKey is the process a series belongs to: exported_instance when
// non-empty (a collector re-exporting another process), else instance.
func processKey(labels map[string]string) string {
	if v := labels["exported_instance"]; v != "" {
		return v
	}
	return labels["instance"]
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys[K interface{ ~string | ~int64 }, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func ptr[T any](x T) *T { return &x }
