package verdicts

import (
	"math"

	"github.com/substrate/density/pkg/percentile"
)

// DefaultNoisePct is the |Δ%| at or below which a comparison says "same".
const DefaultNoisePct = 2.0

// Comparison verdicts.
const (
	Better  = "better"
	Worse   = "worse"
	Same    = "same"
	Changed = "changed"
)

// CompareRow is one key of a comparison.
type CompareRow struct {
	Key       string   `json:"key"`
	Baseline  float64  `json:"baseline"`
	Candidate float64  `json:"candidate"`
	Delta     float64  `json:"delta"`
	DeltaPct  *float64 `json:"delta_pct"`
	Direction string   `json:"direction"`
	Verdict   string   `json:"verdict"`
}

// Comparison is the table of Compare plus the keys skipped because they
// were null in one of the runs.
type Comparison struct {
	Rows    []CompareRow `json:"rows"`
	Skipped []string     `json:"skipped_null"`
}

// Compare compares candidate against baseline over every numeric key both
// runs have, in the baseline's key order; timestamps and metadata are left
// out, and a key null in either run is skipped (listed in Skipped).
// Verdict: same when |Δ%| ≤ noisePct (inclusive), else better or worse by
// the key's direction, or changed for keys without one. Δ% is null when
// the baseline is 0 (then the sign decides); Δ is rounded to 6 decimals.
func Compare(baseline, candidate *Run, noisePct float64) Comparison {
	var c Comparison
	for _, bv := range baseline.Values {
		k := bv.Key
		if Excluded(k) {
			continue
		}
		cv, ok := candidate.Get(k)
		if !ok {
			continue
		}
		b, bok := bv.Number()
		x, xok := cv.Number()
		if !bok || !xok {
			// Null (not text) on both sides of a key not compared: say so.
			if (bv.Text == nil || bok) && (cv.Text == nil || xok) {
				c.Skipped = append(c.Skipped, k)
			}
			continue
		}
		dir := DirectionOf(k)
		row := CompareRow{Key: k, Baseline: b, Candidate: x, Delta: percentile.Round(x-b, 6), Direction: dir.String()}
		same := x == b
		if b != 0 {
			d := percentile.Round((x-b)/math.Abs(b)*100, 4)
			row.DeltaPct = &d
			same = math.Abs(d) <= noisePct
		}
		switch {
		case same:
			row.Verdict = Same
		case dir == None:
			row.Verdict = Changed
		case worse(dir, x-b):
			row.Verdict = Worse
		default:
			row.Verdict = Better
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

// CompareCounts are the rows of a Comparison by verdict, and the keys not
// compared (null in one run).
type CompareCounts struct {
	Worse, Better, Changed, Same, NotCompared int
}

// Counts counts c's rows by verdict.
func (c Comparison) Counts() CompareCounts {
	n := CompareCounts{NotCompared: len(c.Skipped)}
	for _, r := range c.Rows {
		switch r.Verdict {
		case Worse:
			n.Worse++
		case Better:
			n.Better++
		case Changed:
			n.Changed++
		default:
			n.Same++
		}
	}
	return n
}
