package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
)

// The blocks' sub-keys in output order, as server_summary.json writes them.
var (
	psiKeys        = [3]string{"cpu", "mem", "io"}
	psiWords       = [3]string{"CPU", "memory", "I/O"}
	oomKeys        = [6]string{"node", "pod", "worker_restarts", "worker_oomkilled_pods", "evicted", "worker_pods_lost"}
	workingSets    = [5]string{"node", "worker", "atelet", "actor", "per_actor"}
	workingSetWord = [5]string{"Nodes", "Worker pods", "Atelets", "Actors", "Per actor"}
	percentiles    = [4]string{"p50", "p90", "p95", "p99"}
)

// frontierKeys are the trial_summary density frontiers, shown big.
var frontierKeys = [6]string{"actors_per_node", "actors_per_vcpu", "actors_per_gb_ram", "actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99"}

type kv struct{ Label, Value string }

// verdictLine is one line of the summary's verdict.
type verdictLine struct{ Class, Text string }

// summary is the first screen: the run, its verdict, its frontiers and
// every null with its reason.
type summary struct {
	Run       []kv
	Verdict   []verdictLine
	Worse     []compared
	Better    []compared
	Frontiers []figure
	NoTrial   bool
	Nulls     []*reason
	NullCount int
}

// frontierFigures are the density frontiers the run's trial_summary has.
func frontierFigures(in Input, f *figures) []figure {
	var out []figure
	for _, key := range frontierKeys {
		if v, ok := in.Trial.Get(key); ok {
			out = append(out, f.trial(frontier.Measurement{Key: key, Value: v}))
		}
	}
	return out
}

func summarySection(in Input, f *figures, gates *gateTable, frontiers []figure) summary {
	md := in.Meta
	s := summary{Run: []kv{
		{"run", fmt.Sprintf("%s, tag %s", orDash(md.TestName), orDash(md.Tag))},
		{"window", window(md.Start, md.End)},
		{"steady window", window(md.SteadyStart, md.SteadyEnd)},
		{"atelet lag", strconv.FormatInt(md.LagS, 10) + " s"},
		{"data source", orDash(in.Source)},
		{"harvested", timeText(in.HarvestedAt)},
	}}
	if f.base != nil {
		bm := in.Baseline.Meta
		s.Run = append(s.Run, kv{"baseline", fmt.Sprintf("%s, tag %s, %s", orDash(bm.TestName), orDash(bm.Tag), window(bm.Start, bm.End))})
	}
	switch {
	case gates == nil:
		s.Verdict = append(s.Verdict, verdictLine{"same", "No gates evaluated (export --gates or density check)."})
	case gates.Verdict == "fail":
		s.Verdict = append(s.Verdict, verdictLine{"worse", fmt.Sprintf("Gates failed: %s of %s failed, %s passed.", gates.Failed, gates.Count, gates.Passed)})
	case gates.Verdict == "pass":
		s.Verdict = append(s.Verdict, verdictLine{"better", fmt.Sprintf("Gates passed: %s of %s.", gates.Passed, gates.Count)})
	default:
		s.Verdict = append(s.Verdict, verdictLine{"same", fmt.Sprintf("Gates: %d evaluated, no gate_summary verdict.", len(gates.Rows))})
	}
	if f.base != nil {
		worse, better, same, none := f.tally()
		cls := "better"
		if len(worse) > 0 {
			cls = "worse"
		}
		s.Verdict = append(s.Verdict, verdictLine{cls, fmt.Sprintf("Against the baseline: %d worse, %d better, %d same (|Δ| ≤ %s %%), %d not compared.",
			len(worse), len(better), same, sig3(strconv.FormatFloat(NoisePct, 'f', -1, 64)), none)})
		s.Worse, s.Better = worse[:min(len(worse), 8)], better[:min(len(better), 8)]
	}
	if in.Trial == nil {
		s.NoTrial = true
	}
	s.Frontiers = frontiers
	s.Nulls = f.reasons
	for _, r := range f.reasons {
		s.NullCount += len(r.Keys)
	}
	return s
}

// gateTable is every gate of the run in one table.
type gateTable struct {
	Verdict, Count, Passed, Failed string
	Rows                           []gateRow
}

type gateRow struct {
	Metric  string
	Cells   []figure // key, value, min, max, baseline, delta_pct, max_regression_pct
	Verdict figure
	Reason  figure
}

// gateColumns are the gate row's keys shown as columns.
var gateColumns = [7]string{"key", "value", "min", "max", "baseline", "delta_pct", "max_regression_pct"}

func gateSection(rows []artifact.Row, f *figures) *gateTable {
	var t *gateTable
	for _, row := range rows {
		if !strings.HasPrefix(row.Metric, "gate_") {
			continue
		}
		if t == nil {
			t = &gateTable{}
		}
		get := func(k string) figure {
			v, _ := row.Measurements.Get(k)
			c := figure{Key: row.Metric + "." + k, Label: k}
			switch x := v.(type) {
			case string:
				c.Value = x
				if k != "key" && k != "verdict" && k != "reason" {
					c.Value = sig3(x)
				}
			default:
				c.Null = true // an unset bound or no baseline: "—", not a null to explain
			}
			return c
		}
		if row.Metric == "gate_summary" {
			t.Verdict, t.Count, t.Passed, t.Failed = get("verdict").Value, get("gates").Value, get("passed").Value, get("failed").Value
			continue
		}
		gr := gateRow{Metric: row.Metric, Verdict: get("verdict"), Reason: get("reason")}
		for _, k := range gateColumns {
			gr.Cells = append(gr.Cells, get(k))
		}
		t.Rows = append(t.Rows, gr)
	}
	return t
}

// packingSection is the packing ratio over the run and its percentiles.
type packingSection struct {
	Chart chart
	Figs  []figure
}

func packingChart(in Input, f *figures) (packingSection, error) {
	var s packingSection
	for _, p := range percentiles {
		s.Figs = append(s.Figs, f.server("cluster_packing_"+p, "packing "+p, "busy/total"))
	}
	var t []int64
	var v []*float64
	for _, p := range in.Result.Packing.Timeseries {
		t, v = append(t, p.Timestamp), append(v, p.Ratio)
	}
	var err error
	s.Chart, err = drawTime(runChart(in, "Packing ratio: busy over total actor slots", "ratio",
		line{Name: "packing ratio", Color: colorBlue, T: t, V: v}),
		"cluster_packing.timeseries[].packing_ratio; steady window shaded", "no packing time series (cluster_packing.timeseries is empty)")
	return s, err
}

// drawHalf draws c at half the page width (the small multiples).
func drawHalf(c timeChart, caption, missing string) (chart, error) {
	c.Half = true
	return drawTime(c, caption, missing)
}

// runChart is a chart over the run's window with the steady window shaded.
func runChart(in Input, title, ylabel string, lines ...line) timeChart {
	md := in.Meta
	zero := 0.0
	return timeChart{Title: title, YLabel: ylabel, Start: md.Start, End: md.End, Steady: [2]int64{md.SteadyStart, md.SteadyEnd}, Lines: lines, YMin: &zero}
}

type psiBlock struct {
	Title, Block, CountKey string
	Count                  figure
	Charts                 []chart
	Rows                   []psiRow
	Notice                 string
}

type psiRow struct {
	Resource string
	Cells    []figure
}

func psiSections(in Input, f *figures) ([]psiBlock, error) {
	var out []psiBlock
	for _, sc := range []struct {
		title, block, count, flatPrefix string
		n                               *int
		scope                           func(*artifact.PSISeries) *artifact.PSIScope
	}{
		{"Node PSI", harvest.BlockNodePSI, "nodes", "psi_", in.Result.NodePSI.Count, func(s *artifact.PSISeries) *artifact.PSIScope { return &s.Node }},
		{"Pod PSI", harvest.BlockPodPSI, "pods", "pod_psi_", in.Result.PodPSI.Count, func(s *artifact.PSISeries) *artifact.PSIScope { return &s.Pod }},
	} {
		b := psiBlock{Title: sc.title, Block: sc.block, CountKey: sc.block + "." + sc.count}
		b.Count = f.integer(b.CountKey, sc.count, intp(sc.n), sc.block)
		for i, res := range psiKeys {
			row := psiRow{Resource: psiWords[i]}
			for _, p := range percentiles {
				row.Cells = append(row.Cells, f.server(sc.flatPrefix+res+"_stall_"+p, p, "%"))
			}
			b.Rows = append(b.Rows, row)
		}
		if in.PSI == nil {
			b.Notice = "psi_series.json is not available: the PSI summaries are shown without their time series."
			out = append(out, b)
			continue
		}
		scope := sc.scope(in.PSI)
		for i, set := range []*harvest.PSIBandSet{&scope.CPU, &scope.Mem, &scope.IO} {
			key := sc.block + "." + psiKeys[i]
			c := runChart(in, fmt.Sprintf("%s: %s stall", sc.title, psiWords[i]), "% of time stalled",
				line{Name: "p50", Color: colorBlue, T: set.Timestamps, V: set.P50},
				line{Name: "p90", Color: colorOrange, T: set.Timestamps, V: set.P90},
				line{Name: "p99", Color: colorRed, T: set.Timestamps, V: set.P99})
			c.Band = &band{Name: "min–max", T: set.Timestamps, Lo: set.Min, Hi: set.Max, FillWith: colorBand}
			ch, err := drawHalf(c, fmt.Sprintf("%s across %s series, every %d s", key, seriesCount(set.Series), in.PSI.StepS),
				fmt.Sprintf("no series in psi_series.json %s", key))
			if err != nil {
				return nil, err
			}
			b.Charts = append(b.Charts, ch)
		}
		out = append(out, b)
	}
	return out, nil
}

// snapshotSection is the restore and checkpoint durations and the
// snapshot figures.
type snapshotSection struct {
	Chart chart
	Figs  []figure
}

func snapshotsSection(in Input, f *figures) (snapshotSection, error) {
	var out snapshotSection
	s := &in.Result.Snapshots
	for _, fl := range s.Fields() {
		key := "snapshot_" + fl.Key
		if !strings.HasPrefix(fl.Key, "size_") {
			key = fl.Key
		}
		if fl.Key == "checkpoints_cumulative" {
			out.Figs = append(out.Figs, f.integer("snapshots.checkpoints_cumulative", fl.Key, fl.Int, harvest.BlockSnapshots))
			continue
		}
		out.Figs = append(out.Figs, f.server(key, fl.Key, fl.Unit))
	}
	var err error
	out.Chart, err = drawBars("Restore and checkpoint duration", "seconds", []string{"p50", "p90", "p95", "p99", "mean"},
		[]barGroup{
			{Name: "restore", Color: colorBlue, Values: []*float64{s.RestoreP50S, s.RestoreP90S, s.RestoreP95S, s.RestoreP99S, s.RestoreMeanS}},
			{Name: "checkpoint", Color: colorOrange, Values: []*float64{s.CheckpointP50S, s.CheckpointP90S, s.CheckpointP95S, s.CheckpointP99S, s.CheckpointMeanS}},
		}, "snapshots.restore_p*_s and snapshots.checkpoint_p*_s; a null value draws no bar", "every restore and checkpoint duration is null")
	return out, err
}

// actorSection is active actors and atelets, each on its own axis (300
// actors beside 4 atelets would flatten the atelets into the floor).
type actorSection struct {
	Charts []chart
	Figs   []figure
}

func actorsSection(in Input, f *figures) (actorSection, error) {
	var s actorSection
	a := &in.Result.ActiveActors
	for _, p := range percentiles {
		s.Figs = append(s.Figs, f.server("active_actors_"+p, "active actors "+p, "actors"))
	}
	s.Figs = append(s.Figs, f.integer("active_actors.atelets", "atelets", intp(a.Atelets), harvest.BlockActiveActors))
	var t []int64
	var av, aa []*float64
	for _, p := range a.Timeseries {
		t = append(t, p.Timestamp)
		av = append(av, ptr(p.ActiveActors))
		aa = append(aa, ptr(float64(p.ActiveAtelets)))
	}
	for _, c := range []struct {
		title, ylabel, caption string
		l                      line
	}{
		{"Active actors", "actors", "active_actors.timeseries[].active_actors", line{Name: "active actors", Color: colorBlue, T: t, V: av}},
		{"Active atelets", "atelets", "active_actors.timeseries[].active_atelets", line{Name: "active atelets", Color: colorGreen, T: t, V: aa}},
	} {
		ch, err := drawHalf(runChart(in, c.title, c.ylabel, c.l), c.caption, "no active actors time series (active_actors.timeseries is empty)")
		if err != nil {
			return s, err
		}
		s.Charts = append(s.Charts, ch)
	}
	return s, nil
}

// wsSection is the five working-set blocks: one small chart each (they
// differ by orders of magnitude) and one table.
type wsSection struct {
	Charts []chart
	Rows   []wsRow
}

type wsRow struct {
	Block, Title string
	Cells        []figure
}

func workingSetSection(in Input, f *figures) (wsSection, error) {
	var s wsSection
	for i, name := range workingSets {
		b := in.Result.WorkingSet.Block(name)
		row := wsRow{Block: name, Title: workingSetWord[i]}
		for _, p := range []string{"p50", "p90", "p95", "p99", "max"} {
			row.Cells = append(row.Cells, f.server("working_set_"+name+"_"+p+"_gb", p, "GiB"))
		}
		row.Cells = append(row.Cells, f.integer("working_set."+name+".count", "count", intp(b.Count), harvest.BlockWorkingSet))
		s.Rows = append(s.Rows, row)
		var t []int64
		var tot, mx []*float64
		for _, p := range b.Timeseries {
			t, tot, mx = append(t, p.Timestamp), append(tot, ptr(p.TotalGB)), append(mx, ptr(p.MaxGB))
		}
		c, err := drawHalf(runChart(in, "Working set: "+strings.ToLower(workingSetWord[i]), "GiB",
			line{Name: "total", Color: colorBlue, T: t, V: tot}, line{Name: "largest one", Color: colorOrange, T: t, V: mx}),
			"working_set."+name+".timeseries[].total_gb and .max_gb", "no working set time series for "+name)
		if err != nil {
			return s, err
		}
		s.Charts = append(s.Charts, c)
	}
	return s, nil
}

// clusterSection is the OOM and eviction counts and the trial_summary's
// other figures (the cluster facts, users, failures).
type clusterSection struct {
	OOM   []figure
	Trial []figure
}

func clusterFacts(in Input, f *figures) clusterSection {
	var s clusterSection
	for _, k := range oomKeys {
		s.OOM = append(s.OOM, f.server("oom_events_"+k, k, "events"))
	}
	for _, m := range in.Trial {
		if !slices.Contains(frontierKeys[:], m.Key) {
			s.Trial = append(s.Trial, f.trial(m))
		}
	}
	return s
}

// phaseTable is every phase group of the run in one table, slowest first.
type phaseTable struct {
	Labels, Numbers []string // column keys
	SortedBy        string
	Rows            []phaseRow
	Summary         []figure
}

type phaseRow struct {
	Metric string
	Labels []figure
	Cells  []figure
	sort   *float64
}

// isPhaseLabel says whether a phase row's key names its group.
func isPhaseLabel(key string) bool {
	switch key {
	case "layer", "op", "class", "kind", "scope", "phase":
		return true
	}
	return false
}

func phaseSection(rows []artifact.Row, f *figures) *phaseTable {
	var t *phaseTable
	seen := map[string]bool{}
	for _, row := range rows {
		if !strings.HasPrefix(row.Metric, "phase_") {
			continue
		}
		if t == nil {
			t = &phaseTable{}
		}
		if row.Metric == "phase_breakdown_summary" {
			for _, m := range row.Measurements {
				t.Summary = append(t.Summary, f.row(row.Metric, m.Key, m.Value, "phase_breakdown"))
			}
			continue
		}
		for _, m := range row.Measurements {
			if !seen[m.Key] {
				seen[m.Key] = true
				if isPhaseLabel(m.Key) {
					t.Labels = append(t.Labels, m.Key)
				} else {
					t.Numbers = append(t.Numbers, m.Key)
				}
			}
		}
	}
	if t == nil {
		return nil
	}
	for _, k := range []string{"p99_ms", "p95_ms", "p90_ms", "p50_ms", "max_ms"} {
		if seen[k] {
			t.SortedBy = k
			break
		}
	}
	for _, row := range rows {
		if strings.HasPrefix(row.Metric, "phase_") && row.Metric != "phase_breakdown_summary" {
			t.Rows = append(t.Rows, t.row(row, f))
		}
	}
	slowestFirst(t.Rows)
	return t
}

// row is one phase row in the table's columns ("—" for a key it lacks).
func (t *phaseTable) row(row artifact.Row, f *figures) phaseRow {
	pr := phaseRow{Metric: row.Metric}
	for _, cols := range []struct {
		keys []string
		to   *[]figure
	}{{t.Labels, &pr.Labels}, {t.Numbers, &pr.Cells}} {
		for _, k := range cols.keys {
			v, ok := row.Measurements.Get(k)
			if !ok {
				*cols.to = append(*cols.to, figure{Key: row.Metric + "." + k, Value: "—"})
				continue
			}
			*cols.to = append(*cols.to, f.row(row.Metric, k, v, "phase_breakdown"))
		}
	}
	if v, ok := row.Measurements.Get(t.SortedBy); ok {
		if s, ok := v.(string); ok {
			pr.sort = parseNum(&s)
		}
	}
	return pr
}

// slowestFirst orders the phase rows by their sort value, highest first,
// rows without one last.
func slowestFirst(rows []phaseRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i].sort, rows[j].sort
		switch {
		case a == nil:
			return false
		case b == nil:
			return true
		}
		return *a > *b
	})
}

// familyTable is one family of the run's other rows (the ladder steps,
// ...) as one table: a row per metric, a column per key.
type familyTable struct {
	ID, Title string
	Keys      []string
	Rows      []familyRow
}

type familyRow struct {
	Metric string
	Cells  []figure
	row    artifact.Row
}

func familySections(rows []artifact.Row, f *figures) []familyTable {
	var out []familyTable
	index := map[string]int{}
	for _, row := range rows {
		if strings.HasPrefix(row.Metric, "phase_") || strings.HasPrefix(row.Metric, "gate_") {
			continue
		}
		// The family is also the notices.json block of its rows' notices.
		fam, title := row.Metric, row.Metric
		if strings.HasPrefix(row.Metric, "ladder_") {
			fam, title = "ladder", "Ladder steps"
		}
		i, ok := index[fam]
		if !ok {
			i = len(out)
			index[fam] = i
			out = append(out, familyTable{ID: fam, Title: title})
		}
		t := &out[i]
		for _, m := range row.Measurements {
			if !slices.Contains(t.Keys, m.Key) {
				t.Keys = append(t.Keys, m.Key)
			}
		}
		t.Rows = append(t.Rows, familyRow{Metric: row.Metric, row: row})
	}
	// The cells after the columns are known: a row without a key shows "—".
	for i := range out {
		t := &out[i]
		for j := range t.Rows {
			r := &t.Rows[j]
			for _, k := range t.Keys {
				v, ok := r.row.Measurements.Get(k)
				if !ok {
					r.Cells = append(r.Cells, figure{Key: r.Metric + "." + k, Value: "—"})
					continue
				}
				r.Cells = append(r.Cells, f.row(r.Metric, k, v, t.ID))
			}
		}
	}
	return out
}

func window(a, b int64) string {
	if a == 0 && b == 0 {
		return "—"
	}
	end := timeText(time.Unix(b, 0))
	if time.Unix(a, 0).UTC().YearDay() == time.Unix(b, 0).UTC().YearDay() && b-a < 86400 {
		end = time.Unix(b, 0).UTC().Format("15:04:05")
	}
	return fmt.Sprintf("%s – %s (%d – %d, %s)", timeText(time.Unix(a, 0)), end, a, b, time.Duration(b-a)*time.Second)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func seriesCount(n *int) string {
	if n == nil {
		return "no"
	}
	return strconv.Itoa(*n)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func intp(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func ptr(v float64) *float64 { return &v }
