package phases

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// LogFiles expands log paths: a file is itself, a directory gives its
// *.log and *.json files (not recursive) by name.
func LogFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		es, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range es {
			if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".json")) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			out = append(out, filepath.Join(p, n))
		}
	}
	return out, nil
}

func ms(seconds float64) string { return strconv.FormatFloat(seconds*1000, 'f', 1, 64) }

// WriteTable prints the percentile rows for a person (milliseconds).
func WriteTable(w io.Writer, groups []Group) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layer\top\tclass\tkind\tscope\tphase\tcount\tp50_ms\tp90_ms\tp95_ms\tmax_ms\t")
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", none(g.Layer), none(g.Op), none(g.Class),
			none(g.Kind), none(g.Scope), g.Phase, g.Count, g.P50, g.P90, g.P95, g.Max)
	}
	return tw.Flush()
}

// barWidth is the width of a waterfall bar at the operation's total.
const barWidth = 40

func bar(v, total float64) string {
	if total <= 0 || v <= 0 {
		return ""
	}
	n := int(v/total*barWidth + 0.5)
	n = max(1, min(n, barWidth))
	return strings.Repeat("#", n)
}

// sortedPhases returns a record's phases in report order.
func sortedPhases(r *Record) []Phase {
	p := slices.Clone(r.Phases)
	slices.SortStableFunc(p, func(a, b Phase) int { return ComparePhases(a.Name, b.Name) })
	return p
}

// WriteSlowest prints the n slowest successful atelet operations (by total)
// of analysed records as waterfalls: each phase with a bar to the scale of
// the total, the paired ateom record nested under its atelet phase with
// that phase's gap to the ateom total.
func WriteSlowest(w io.Writer, recs []Record, n int) {
	var idx []int
	for i := range recs {
		if r := &recs[i]; r.Layer == LayerAtelet && !r.Failed {
			if _, ok := r.Get(PhaseTotal); ok {
				idx = append(idx, i)
			}
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(recs[b].value(PhaseTotal), recs[a].value(PhaseTotal)) })
	if len(idx) > n {
		idx = idx[:n]
	}
	for k, i := range idx {
		r := &recs[i]
		total := r.value(PhaseTotal)
		when := "no time"
		if r.HasTime {
			when = time.UnixMicro(r.Time).UTC().Format("2006-01-02T15:04:05.000000Z")
		}
		fmt.Fprintf(w, "\n%d. %s %s (uid %s) %s/%s/%s: %s ms at %s [%s]\n", k+1, r.Op, orNone(r.Name), orNone(r.UID),
			none(r.Class), none(r.Kind), none(r.Scope), ms(total), when, r.Source)
		inner := PhaseAteomRestore
		if r.Op == OpCheckpoint {
			inner = PhaseAteomCheckpoint
		}
		for _, p := range sortedPhases(r) {
			fmt.Fprintf(w, "   %-22s %10s ms  |%-*s|\n", p.Name, ms(p.Seconds), barWidth, bar(p.Seconds, total))
			if p.Name != inner {
				continue
			}
			if r.Pair < 0 {
				fmt.Fprintf(w, "     %-20s (no ateom record paired)\n", "")
				continue
			}
			o := &recs[r.Pair]
			for _, q := range sortedPhases(o) {
				fmt.Fprintf(w, "     ateom %-14s %10s ms  |%-*s|\n", q.Name, ms(q.Seconds), barWidth, bar(q.Seconds, total))
			}
			if ot, ok := o.Get(PhaseTotal); ok {
				fmt.Fprintf(w, "     %-20s %10s ms  (%s − ateom total)\n", "gap", ms(p.Seconds-ot), inner)
			}
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
