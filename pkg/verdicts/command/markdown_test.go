package command

import (
	"fmt"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/verdicts"
)

func pctOf(x float64) *float64 { return &x }

// comparison is a Comparison of the given rows and skipped keys.
func comparison(rows []verdicts.CompareRow, skipped ...string) verdicts.Comparison {
	return verdicts.Comparison{Rows: rows, Skipped: skipped}
}

func row(key string, b, c float64, verdict string) verdicts.CompareRow {
	return verdicts.CompareRow{Key: key, Baseline: b, Candidate: c, Delta: c - b, DeltaPct: pctOf((c - b) / b * 100), Direction: "lower", Verdict: verdict}
}

func TestWriteMarkdown(t *testing.T) {
	rows := []verdicts.CompareRow{
		row("restore_p99_s", 4, 5.2, verdicts.Worse),
		row("checkpoint_p99_s", 2, 1.5, verdicts.Better),
		row("phase_breakdown_summary.records", 7342, 7342, verdicts.Same),
		row("node_count", 3, 4, verdicts.Changed),
		row("cluster_packing_p50", 0.9, 0.9, verdicts.Same),
	}
	for _, tc := range []struct {
		name      string
		all       bool
		want, not []string
	}{
		{"changed only", false,
			[]string{"**1 worse · 1 better · 1 changed (no better side) · 2 same · 1 not compared**", "| `restore_p99_s` | 4.0 | 5.2 |", "| `node_count` | 3 | 4 | 1 |", "2 same not shown (--all lists them)", "Not compared (null in one run): psi_x"},
			[]string{"`phase_breakdown_summary.records`", "`cluster_packing_p50`", "left out"}},
		{"all", true,
			[]string{"| `phase_breakdown_summary.records` | 7342 | 7342 | 0 |", "| `cluster_packing_p50` | 0.9 | 0.9 | 0.0 |", "| `checkpoint_p99_s` | 2.0 | 1.5 | -0.5 |"},
			[]string{"7342.0", "not shown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteMarkdown(&b, "a", "b", comparison(rows, "psi_x"), MarkdownOptions{All: tc.all}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestWriteMarkdownNothingChanged(t *testing.T) {
	var b strings.Builder
	_ = WriteMarkdown(&b, "a", "b", comparison([]verdicts.CompareRow{row("x_s", 1, 1, verdicts.Same)}), MarkdownOptions{})
	if got := b.String(); !strings.Contains(got, "**0 worse · 0 better · 1 same · 0 not compared**") ||
		!strings.Contains(got, "No key changed beyond the noise") || strings.Contains(got, "| key |") {
		t.Errorf("got:\n%s", got)
	}
}

func TestWriteMarkdownCut(t *testing.T) {
	var many []verdicts.CompareRow
	for i := range 2000 {
		many = append(many, row(fmt.Sprintf("key_%04d_s", i), 1, 2, verdicts.Worse))
	}
	full := func(rows []verdicts.CompareRow) int {
		var b strings.Builder
		_ = WriteMarkdown(&b, "a", "b", comparison(rows, "psi_x"), MarkdownOptions{Limit: 1 << 30})
		return b.Len()
	}
	for _, tc := range []struct {
		name    string
		rows    []verdicts.CompareRow
		limit   int
		cut     bool
		leftOut string
	}{
		{"over the default limit", many, 0, true, "of 2000 rows left out to stay within 65536 characters"},
		{"exactly at the limit", many[:10], full(many[:10]), false, ""},
		{"one byte over", many[:10], full(many[:10]) - 1, true, "of 10 rows left out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			_ = WriteMarkdown(&b, "a", "b", comparison(tc.rows, "psi_x"), MarkdownOptions{Limit: tc.limit})
			limit := tc.limit
			if limit == 0 {
				limit = MaxMarkdownBytes
			}
			got := b.String()
			if len(got) > limit {
				t.Errorf("%d bytes > %d", len(got), limit)
			}
			lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
			last := lines[len(lines)-1]
			if tc.cut != strings.Contains(last, "left out") || !strings.Contains(last, tc.leftOut) {
				t.Errorf("last line %q (cut %v, want %q)", last, tc.cut, tc.leftOut)
			}
			kept := strings.Count(got, "| **worse** |")
			if !tc.cut && kept != len(tc.rows) {
				t.Errorf("%d of %d rows kept", kept, len(tc.rows))
			}
			if tc.cut {
				if want := fmt.Sprintf("%d of %d rows left out", len(tc.rows)-kept, len(tc.rows)); !strings.Contains(last, want) {
					t.Errorf("last line %q, want %q (%d rows printed)", last, want, kept)
				}
			}
		})
	}
}
