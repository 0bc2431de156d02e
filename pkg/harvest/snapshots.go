package harvest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/promql"
)

// MiB is the SCALE of sizes reported in MiB.
const MiB = 1048576

// Snapshots is the snapshots block: figures over the events between
// A = steady_start + shift and B = steady_end + shift.
type Snapshots struct {
	SizeP50MB, SizeP90MB, SizeP95MB, SizeP99MB                                      *float64
	SizeAvgMB                                                                       *float64
	CheckpointsInWindow                                                             *int64
	CheckpointsCumulative                                                           *int64
	RestoreP50S, RestoreP90S, RestoreP95S, RestoreP99S, RestoreMeanS                *float64
	CheckpointP50S, CheckpointP90S, CheckpointP95S, CheckpointP99S, CheckpointMeanS *float64
	CheckpointMBs                                                                   *float64

	A, B      int64 // the window edges used
	Restarted int   // series that restarted inside the window, over every family read
}

// SnapshotField is one key of the snapshots block: exactly one of Float and
// Int is meaningful (Int for the two checkpoint counts); both nil = null.
type SnapshotField struct {
	Key   string
	Unit  string // "MiB", "s", "MiB/s" or "" for counts
	Float *float64
	Int   *int64
}

// Fields returns the 18 keys in the spec's table order.
func (s *Snapshots) Fields() []SnapshotField {
	f := func(k, u string, v *float64) SnapshotField { return SnapshotField{Key: k, Unit: u, Float: v} }
	return []SnapshotField{
		f("size_p50_mb", "MiB", s.SizeP50MB), f("size_p90_mb", "MiB", s.SizeP90MB),
		f("size_p95_mb", "MiB", s.SizeP95MB), f("size_p99_mb", "MiB", s.SizeP99MB),
		f("size_avg_mb", "MiB", s.SizeAvgMB),
		{Key: "checkpoints_in_window", Int: s.CheckpointsInWindow},
		{Key: "checkpoints_cumulative", Int: s.CheckpointsCumulative},
		f("restore_p50_s", "s", s.RestoreP50S), f("restore_p90_s", "s", s.RestoreP90S),
		f("restore_p95_s", "s", s.RestoreP95S), f("restore_p99_s", "s", s.RestoreP99S),
		f("restore_mean_s", "s", s.RestoreMeanS),
		f("checkpoint_p50_s", "s", s.CheckpointP50S), f("checkpoint_p90_s", "s", s.CheckpointP90S),
		f("checkpoint_p95_s", "s", s.CheckpointP95S), f("checkpoint_p99_s", "s", s.CheckpointP99S),
		f("checkpoint_mean_s", "s", s.CheckpointMeanS),
		f("checkpoint_mb_s", "MiB/s", s.CheckpointMBs),
	}
}

// Snapshot selectors (each matches its family's _bucket, _sum and _count).
const (
	snapSizeFamily     = "atelet_snapshot_size_bytes"
	restoreFamily      = "ate_actor_restore_duration_seconds"
	checkpointFamily   = "ate_actor_checkpoint_duration_seconds"
	memFileSelector    = `file_name=~"pages.img|memory-ranges"`
	totalPhaseSelector = `ate_snapshot_phase="total"`
)

// histSelector selects _bucket, _sum and _count of family under extra matchers.
func histSelector(family, matchers string) string {
	s := `{__name__=~"` + family + `_(bucket|sum|count)"`
	if matchers != "" {
		s += ", " + matchers
	}
	return s + "}"
}

// SnapshotSelectors are the four selectors the snapshots block reads with
// per-series window growth: memory-image size histogram, every file's size
// sum, restore and checkpoint duration histograms.
func SnapshotSelectors() [4]string {
	return [4]string{
		histSelector(snapSizeFamily, memFileSelector),
		snapSizeFamily + "_sum",
		histSelector(restoreFamily, totalPhaseSelector),
		histSelector(checkpointFamily, totalPhaseSelector),
	}
}

// SnapshotWindow returns A and B.
func SnapshotWindow(p Params) (a, b int64) {
	return p.SteadyStart + p.Shift(), p.SteadyEnd + p.Shift()
}

// growthRead is one WindowGrowth outcome.
type growthRead struct {
	sel string
	g   promql.Growth
	err error
}

// HarvestSnapshots reads the snapshots block.
func HarvestSnapshots(ctx context.Context, c *promql.Client, p Params) (Snapshots, []Notice) {
	a, b := SnapshotWindow(p)
	sels := SnapshotSelectors()
	var reads [4]growthRead
	var wg sync.WaitGroup
	for i, sel := range sels {
		wg.Go(func() {
			g, err := c.WindowGrowth(ctx, sel, a, b)
			if err != nil {
				err = fmt.Errorf("window growth of %s over (%d, %d]: %w", sel, a, b, err)
			}
			reads[i] = growthRead{sel: sel, g: g, err: err}
		})
	}
	wg.Wait()
	return snapshotsFrom(reads, a, b)
}

// family is one histogram family's window figures.
type family struct {
	err             error
	sum, count, end *float64 // delta(_sum), delta(_count), end(_count); nil = unmeasured
	buckets         []promql.Bucket
	hasBuckets      bool
	nSeries         int
}

// splitFamily sums per-series growth of a read by metric name.
func splitFamily(r growthRead, name string) family {
	f := family{err: r.err}
	if r.err != nil {
		return f
	}
	byLE := map[float64]float64{}
	var sum, count, end float64
	var nSum, nCount, nEnd int
	for _, s := range r.g.Series {
		f.nSeries++
		switch s.Labels["__name__"] {
		case name + "_sum":
			sum += s.Growth
			nSum++
		case name + "_count":
			count += s.Growth
			nCount++
			if s.End != nil {
				end += *s.End
				nEnd++
			}
		case name + "_bucket":
			le, err := strconv.ParseFloat(s.Labels["le"], 64)
			if err != nil {
				continue // a bucket without a readable bound cannot be placed
			}
			byLE[le] += s.Growth
			f.hasBuckets = true
		}
	}
	if nSum > 0 {
		f.sum = &sum
	}
	if nCount > 0 {
		f.count = &count
		// end of a present family whose every series stopped before B is a
		// measured 0: nothing is exported there now.
		f.end = &end
	}
	les := make([]float64, 0, len(byLE))
	for le := range byLE {
		les = append(les, le)
	}
	sort.Float64s(les)
	for _, le := range les {
		f.buckets = append(f.buckets, promql.Bucket{UpperBound: le, Count: byLE[le]})
	}
	return f
}

// quantile is the window quantile of f divided by scale, or nil.
func (f family) quantile(q, scale float64) *float64 {
	if f.err != nil || !f.hasBuckets {
		return nil
	}
	v := promql.HistogramQuantile(q, f.buckets)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return ptr(percentile.Round4(v / scale))
}

// ratio is the spec's ratio(num, den, scale).
func ratio(num, den *float64, scale float64) *float64 {
	if num == nil || den == nil || *den == 0 {
		return nil
	}
	v := *num / *den / scale
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return ptr(percentile.Round4(v))
}

// roundInt is Python's round(x) to an integer (ties to even).
func roundInt(x *float64) *int64 {
	if x == nil || math.IsNaN(*x) || math.IsInf(*x, 0) {
		return nil
	}
	return ptr(int64(math.RoundToEven(*x)))
}

func snapshotsFrom(reads [4]growthRead, a, b int64) (Snapshots, []Notice) {
	mem := splitFamily(reads[0], snapSizeFamily)
	allFiles := splitFamily(reads[1], snapSizeFamily)
	restore := splitFamily(reads[2], restoreFamily)
	ckpt := splitFamily(reads[3], checkpointFamily)

	s := Snapshots{A: a, B: b}
	qs := [4]float64{0.50, 0.90, 0.95, 0.99}
	s.SizeP50MB, s.SizeP90MB, s.SizeP95MB, s.SizeP99MB = mem.quantile(qs[0], MiB), mem.quantile(qs[1], MiB), mem.quantile(qs[2], MiB), mem.quantile(qs[3], MiB)
	s.SizeAvgMB = ratio(mem.sum, mem.count, MiB)
	s.CheckpointsInWindow = roundInt(mem.count)
	s.CheckpointsCumulative = roundInt(mem.end)
	s.RestoreP50S, s.RestoreP90S, s.RestoreP95S, s.RestoreP99S = restore.quantile(qs[0], 1), restore.quantile(qs[1], 1), restore.quantile(qs[2], 1), restore.quantile(qs[3], 1)
	s.RestoreMeanS = ratio(restore.sum, restore.count, 1)
	s.CheckpointP50S, s.CheckpointP90S, s.CheckpointP95S, s.CheckpointP99S = ckpt.quantile(qs[0], 1), ckpt.quantile(qs[1], 1), ckpt.quantile(qs[2], 1), ckpt.quantile(qs[3], 1)
	s.CheckpointMeanS = ratio(ckpt.sum, ckpt.count, 1)
	s.CheckpointMBs = ratio(allFiles.sum, ckpt.sum, MiB)

	var notices []Notice
	note := func(field, reason string) {
		notices = append(notices, Notice{Block: BlockSnapshots, Field: field, Reason: reason})
	}
	// One notice per failed or absent family, naming the keys it nulls.
	for i, f := range []struct {
		fam  family
		what string
		keys string
	}{
		{mem, "memory-image snapshot sizes", "size_*_mb, size_avg_mb, checkpoints_in_window, checkpoints_cumulative"},
		{allFiles, "snapshot sizes of every file", "checkpoint_mb_s"},
		{restore, "restore durations", "restore_*_s, restore_mean_s"},
		{ckpt, "checkpoint durations", "checkpoint_*_s, checkpoint_mean_s, checkpoint_mb_s"},
	} {
		switch {
		case f.fam.err != nil:
			notices = append(notices, Notice{Block: BlockSnapshots, Field: f.keys, Err: f.fam.err,
				Reason: fmt.Sprintf("null: the read of %s failed: %v", f.what, f.fam.err)})
		case f.fam.nSeries == 0:
			note(f.keys, fmt.Sprintf("null: no series of %s (%s) in the window (nothing was measured)", f.what, reads[i].sel))
		}
	}
	if b <= a {
		note("", fmt.Sprintf("the window (A=%d, B=%d] is empty: every growth is 0 and quantiles and means are null", a, b))
	} else {
		if mem.nSeries > 0 && mem.count != nil && *mem.count == 0 {
			note("size_*_mb, size_avg_mb", "null: no memory-image checkpoint inside the window")
		}
		if restore.nSeries > 0 && restore.count != nil && *restore.count == 0 {
			note("restore_*_s, restore_mean_s", "null: no restore inside the window")
		}
		if ckpt.nSeries > 0 && ckpt.count != nil && *ckpt.count == 0 {
			note("checkpoint_*_s, checkpoint_mean_s, checkpoint_mb_s", "null: no checkpoint inside the window")
		}
	}
	// The every-file _sum read overlaps the memory-image read: count each
	// restarted series once.
	restarted := map[string]struct{}{}
	for _, r := range reads {
		for _, sg := range r.g.Series {
			if sg.Restarted {
				restarted[labelsKey(sg.Labels)] = struct{}{}
			}
		}
	}
	s.Restarted = len(restarted)
	if s.Restarted > 0 {
		note("", fmt.Sprintf("%d series restarted inside the window (a process restart); their growth is counted per series across the restart", s.Restarted))
	}
	return s, notices
}

// labelsKey is a canonical string of a label set.
func labelsKey(l map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(l) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// Set sets the field named key (one of Fields' keys) to f, or to i for the
// two counts; it reports false for a key the block does not have.
func (s *Snapshots) Set(key string, f *float64, i *int64) bool {
	switch key {
	case "checkpoints_in_window":
		s.CheckpointsInWindow = i
		return true
	case "checkpoints_cumulative":
		s.CheckpointsCumulative = i
		return true
	}
	refs := map[string]**float64{
		"size_p50_mb": &s.SizeP50MB, "size_p90_mb": &s.SizeP90MB, "size_p95_mb": &s.SizeP95MB, "size_p99_mb": &s.SizeP99MB,
		"size_avg_mb": &s.SizeAvgMB, "restore_p50_s": &s.RestoreP50S, "restore_p90_s": &s.RestoreP90S,
		"restore_p95_s": &s.RestoreP95S, "restore_p99_s": &s.RestoreP99S, "restore_mean_s": &s.RestoreMeanS,
		"checkpoint_p50_s": &s.CheckpointP50S, "checkpoint_p90_s": &s.CheckpointP90S, "checkpoint_p95_s": &s.CheckpointP95S,
		"checkpoint_p99_s": &s.CheckpointP99S, "checkpoint_mean_s": &s.CheckpointMeanS, "checkpoint_mb_s": &s.CheckpointMBs,
	}
	if r, ok := refs[key]; ok {
		*r = f
		return true
	}
	return false
}
