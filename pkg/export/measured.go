package export

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
)

// blockTally is what the Prometheus blocks of a harvest measured: a block
// is measured in full when none of its fields is null, that is when it has
// no notice naming a field and no failed or empty read.
type blockTally struct {
	Total    int
	Null     []string // blocks with a null field, in block order
	Measured int
	// Nothing is true when every server_summary field is null (Prometheus
	// unreachable, or holding nothing of the run).
	Nothing bool
}

// tallyBlocks counts the blocks of res by whether they were measured in
// full; summary is the server_summary row's measurements (each a string,
// or nil for null).
func tallyBlocks(res *harvest.Result, summary artifact.Object) blockTally {
	nulls := map[string]bool{}
	for _, n := range res.Notices {
		if n.Field != "" || n.Kind == harvest.ReadFailed || n.Kind == harvest.Absent {
			nulls[n.Block] = true
		}
	}
	t := blockTally{Nothing: !slices.ContainsFunc(summary, func(f artifact.Field) bool { return f.Value != nil })}
	for _, b := range harvest.BlockNames() {
		t.Total++
		if nulls[b] {
			t.Null = append(t.Null, b)
		} else {
			t.Measured++
		}
	}
	return t
}

// printMeasured writes the closing lines of an export: how many blocks
// were measured in full and which have null fields, and a line of its own
// when nothing was measured (the exit code stays 0: the artifacts are
// written, with null fields).
func printMeasured(w io.Writer, t blockTally) {
	line := fmt.Sprintf("measured %d of %d blocks in full", t.Measured, t.Total)
	if len(t.Null) > 0 {
		line += fmt.Sprintf("; %d with null fields: %s", len(t.Null), strings.Join(t.Null, ", "))
	}
	fmt.Fprintln(w, line)
	if t.Nothing {
		fmt.Fprintln(w, "nothing was measured: every server_summary field is null (Prometheus unreachable or without the run's series)")
	}
}

// psiPoints is what psi_series.json holds: the series sets read (of the
// six: node and pod × cpu, mem, io) and the points (timestamps) of each.
func psiPoints(d *artifact.PSISeries) (sets, read, points int) {
	for _, b := range d.BandSets() {
		sets++
		if b.Series != nil && len(b.Timestamps) > 0 {
			read++
			points = max(points, len(b.Timestamps))
		}
	}
	return sets, read, points
}

// psiLine is the status line of the psi_series.json written.
func psiLine(path string, d *artifact.PSISeries) string {
	sets, read, points := psiPoints(d)
	if read == 0 {
		return fmt.Sprintf("wrote %s (0 points: none of the %d PSI series sets was read)", path, sets)
	}
	return fmt.Sprintf("wrote %s (%d points per series, every %d s, in %d of %d PSI series sets)", path, points, d.StepS, read, sets)
}
