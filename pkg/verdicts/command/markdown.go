package command

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/verdicts"
)

// MaxMarkdownBytes bounds the Markdown of `density compare`: GitHub's limit
// of a pull-request comment is 65,536 characters, and a character is at
// least one byte, so bounding the bytes bounds the characters.
const MaxMarkdownBytes = 65536

// MarkdownOptions shape the Markdown of a comparison.
type MarkdownOptions struct {
	// All lists every compared key; otherwise only those not "same".
	All bool
	// Limit is the most bytes written (0: MaxMarkdownBytes). Rows past it
	// are left out, and the last line says how many.
	Limit int
}

// WriteMarkdown prints a comparison for a pull-request comment: a summary
// line (worse / better / changed / same / not compared), the table of the
// changed keys (every key with All), then the keys not compared. A row whose
// two values are whole numbers (counts) prints them without a fractional
// part. The output never exceeds the limit: rows are cut from the end and
// the last line says how many were left out.
func WriteMarkdown(w io.Writer, baseline, candidate string, c verdicts.Comparison, o MarkdownOptions) error {
	limit := o.Limit
	if limit <= 0 {
		limit = MaxMarkdownBytes
	}
	head := markdownHead(baseline, candidate, c.Counts(), o.All)
	var rows []string
	for _, r := range c.Rows {
		if o.All || r.Verdict != verdicts.Same {
			rows = append(rows, markdownRow(r))
		}
	}
	if len(rows) > 0 {
		head += "\n| key | baseline | candidate | Δ | Δ % | direction | verdict |\n|---|---:|---:|---:|---:|---|---|\n"
	}
	_, err := io.WriteString(w, fitMarkdown(head, rows, c.Skipped, limit))
	return err
}

// fitMarkdown joins head, rows and the not-compared line within limit
// bytes: when they do not fit, the rows are cut from the end (and the
// not-compared keys become their count if need be), and a last line says
// how many rows were left out.
func fitMarkdown(head string, rows, skipped []string, limit int) string {
	tail := ""
	if len(skipped) > 0 {
		tail = fmt.Sprintf("\nNot compared (null in one run): %s\n", cli.Escape(strings.Join(skipped, ", ")))
	}
	rowBytes := 0
	for _, r := range rows {
		rowBytes += len(r)
	}
	if len(head)+rowBytes+len(tail) <= limit {
		return head + strings.Join(rows, "") + tail
	}
	kept := len(rows)
	cut := func() string {
		return fmt.Sprintf("\n… %d of %d rows left out to stay within %d characters (--json lists every key).\n", len(rows)-kept, len(rows), limit)
	}
	if len(head)+len(tail)+len(cut()) > limit {
		tail = fmt.Sprintf("\nNot compared (null in one run): %d keys.\n", len(skipped))
	}
	for kept > 0 && len(head)+rowBytes+len(tail)+len(cut()) > limit {
		kept--
		rowBytes -= len(rows[kept])
	}
	return head + strings.Join(rows[:kept], "") + tail + cut()
}

// markdownHead is the summary line of a comparison.
func markdownHead(baseline, candidate string, n verdicts.CompareCounts, all bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%d worse · %d better · ", n.Worse, n.Better)
	if n.Changed > 0 {
		fmt.Fprintf(&b, "%d changed (no better side) · ", n.Changed)
	}
	fmt.Fprintf(&b, "%d same · %d not compared**", n.Same, n.NotCompared)
	fmt.Fprintf(&b, " — baseline `%s`, candidate `%s`\n", cli.Escape(baseline), cli.Escape(candidate))
	if !all {
		if n.Worse+n.Better+n.Changed == 0 {
			b.WriteString("\nNo key changed beyond the noise (--all lists every key).\n")
		} else if n.Same > 0 {
			fmt.Fprintf(&b, "\nChanged keys only; %d same not shown (--all lists them).\n", n.Same)
		}
	}
	return b.String()
}

// markdownRow is one table row of a comparison.
func markdownRow(r verdicts.CompareRow) string {
	pct := "n/a"
	if r.DeltaPct != nil {
		pct = fmt.Sprintf("%+.2f %%", *r.DeltaPct)
	}
	v := r.Verdict
	if v == verdicts.Worse {
		v = "**worse**"
	}
	format := artifact.FormatFloat
	if whole(r.Baseline) && whole(r.Candidate) {
		format = formatWhole
	}
	return fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s | %s |\n", cli.Escape(r.Key),
		format(r.Baseline), format(r.Candidate), format(r.Delta), pct, r.Direction, v)
}

// whole reports whether x is an integer exactly representable as one
// (|x| ≤ 2^53): such values are counts, printed without ".0".
func whole(x float64) bool {
	return x == math.Trunc(x) && math.Abs(x) <= 1<<53
}

// formatWhole prints a whole number as an integer.
func formatWhole(x float64) string {
	return strconv.FormatInt(int64(x), 10)
}
