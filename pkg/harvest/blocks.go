package harvest

import (
	"context"

	"github.com/substrate/density/pkg/promql"
)

// Block is one block of server_summary.json: its key, how it is read from
// Prometheus and where it lives in a Result. The block table (Blocks) is the
// one list the harvest, the export's status lines, the datasource's cache
// and the stored-artifact reader iterate.
type Block struct {
	// Name is the block's key in server_summary.json (a Block* constant).
	Name string
	// read harvests the block into its field of r; sampled is the shared
	// sampled-actors read of one harvest.
	read func(ctx context.Context, c *promql.Client, p Params, sampled sampledFn, r *Result) []Notice
	// copyTo copies the block's field of src into dst.
	copyTo func(dst, src *Result)
}

// blockTable is in server_summary.json order. Indexes into it are the
// harvest's per-block slots.
var blockTable = [...]Block{
	{BlockPacking, func(ctx context.Context, c *promql.Client, p Params, _ sampledFn, r *Result) (n []Notice) {
		r.Packing, n = HarvestPacking(ctx, c, p)
		return n
	}, func(dst, src *Result) { dst.Packing = src.Packing }},
	{BlockNodePSI, func(ctx context.Context, c *promql.Client, p Params, _ sampledFn, r *Result) (n []Notice) {
		r.NodePSI, n = HarvestNodePSI(ctx, c, p)
		return n
	}, func(dst, src *Result) { dst.NodePSI = src.NodePSI }},
	{BlockPodPSI, func(ctx context.Context, c *promql.Client, p Params, _ sampledFn, r *Result) (n []Notice) {
		r.PodPSI, n = HarvestPodPSI(ctx, c, p)
		return n
	}, func(dst, src *Result) { dst.PodPSI = src.PodPSI }},
	{BlockSnapshots, func(ctx context.Context, c *promql.Client, p Params, _ sampledFn, r *Result) (n []Notice) {
		r.Snapshots, n = HarvestSnapshots(ctx, c, p)
		return n
	}, func(dst, src *Result) { dst.Snapshots = src.Snapshots }},
	{BlockActiveActors, func(ctx context.Context, _ *promql.Client, p Params, sampled sampledFn, r *Result) (n []Notice) {
		r.ActiveActors, n = activeActors(p, sampled(ctx))
		return n
	}, func(dst, src *Result) { dst.ActiveActors = src.ActiveActors }},
	{BlockWorkingSet, func(ctx context.Context, c *promql.Client, p Params, sampled sampledFn, r *Result) (n []Notice) {
		r.WorkingSet, n = workingSet(ctx, c, p, sampled)
		return n
	}, func(dst, src *Result) { dst.WorkingSet = src.WorkingSet }},
	{BlockOOM, func(ctx context.Context, c *promql.Client, p Params, _ sampledFn, r *Result) (n []Notice) {
		r.OOM, n = HarvestOOM(ctx, c, p)
		return n
	}, func(dst, src *Result) { dst.OOM = src.OOM }},
}

// Blocks returns the block table in server_summary.json order.
func Blocks() []Block { return append([]Block(nil), blockTable[:]...) }

// BlockNames returns the blocks' names in server_summary.json order.
func BlockNames() []string {
	out := make([]string, len(blockTable))
	for i, b := range blockTable {
		out[i] = b.Name
	}
	return out
}

// LookupBlock returns the block named name.
func LookupBlock(name string) (Block, bool) {
	for _, b := range blockTable {
		if b.Name == name {
			return b, true
		}
	}
	return Block{}, false
}

// Harvest reads this block alone into an otherwise empty (all-null) Result.
// Warnings the server attached to its answers become notices of the block.
func (b Block) Harvest(ctx context.Context, c *promql.Client, p Params) (*Result, []Notice, []string) {
	log := &promql.Log{}
	rc := c.Recording(log)
	r := EmptyResult()
	n := b.read(ctx, rc, p, onceSampled(rc, p), r)
	for _, w := range log.Warnings() {
		n = append(n, warned(b.Name, w))
	}
	return r, n, log.Queries()
}

// CopyTo copies this block's field of src into dst.
func (b Block) CopyTo(dst, src *Result) { b.copyTo(dst, src) }

// EmptyResult is a Result with nothing measured: every field null, every
// time series empty (not nil, so JSON shows []).
func EmptyResult() *Result {
	return &Result{Packing: emptyPacking(), ActiveActors: emptyActors(), WorkingSet: emptyWorkingSet()}
}
