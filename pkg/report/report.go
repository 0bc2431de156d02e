// Package report renders one self-contained report.html of a benchmark run
// from its typed artifacts: the harvest.Result of server_summary.json, the
// trial_summary measurements, psi_series.json and the notices, optionally
// next to a baseline run's figures.
//
// Charts are drawn by gonum/plot (gonum.org/v1/plot) into inline SVG. It
// was chosen because its SVG backend writes real <text> elements for
// titles, axes and legends (readable, selectable, printable, accessible),
// it is a Go module built by `go install` with nothing from npm, and the
// page needs no script at all; a JavaScript charting library would have to
// be committed and embedded, and canvas-drawn labels are pixels, not text.
// Every chart draws at most MaxChartPoints points (max-thinned, so spikes
// stay visible), which bounds the page whatever the run's length and pod
// count. The page carries its CSS inline and a Content-Security-Policy of
// default-src 'none', so opening it makes no request to any address.
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/verdicts"
)

// FileName is the report's name next to server_summary.json.
const FileName = "report.html"

// Run is one run's artifacts as the report reads them.
type Run struct {
	Meta   artifact.ServerMetadata
	Result *harvest.Result
	// Trial is the trial_summary row's measurements; nil when the run has
	// no trial_summary row.
	Trial frontier.Measurements
	// Rows are the run's other stats.jsonl rows (gate verdicts, phase
	// breakdown, ladder steps, ...), shown as tables keyed <metric>.<key>.
	Rows []artifact.Row
}

// Input is everything a report shows.
type Input struct {
	Run
	// PSI is psi_series.json; nil shows the PSI summaries with a notice.
	PSI *artifact.PSISeries
	// Source names where the figures come from (Prometheus URL, stored
	// artifacts directory or store run).
	Source string
	// HarvestedAt is when the artifacts were harvested (the export's clock,
	// or the file time of stored artifacts); the render itself adds no time.
	HarvestedAt time.Time
	// Notices are every notice of the run (notices.json: the harvest's,
	// the trial_summary's, ...) and the report's own (a missing
	// psi_series.json, ...); a null field shows those that explain it.
	Notices []artifact.Notice
	// NoNotices, when set, is why the run's notices are not known (a
	// stored run without notices.json): shown next to each null.
	NoNotices string
	// Baseline, when set, adds a compare column to every figure.
	Baseline *Run
}

//go:embed report.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("report").Parse(pageTemplate))

// Render returns the report page.
func Render(in Input) ([]byte, error) {
	if in.Result == nil {
		return nil, fmt.Errorf("report: no result")
	}
	pg, err := build(in)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, pg); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return buf.Bytes(), nil
}

// figure is one shown value with its artifact key.
type figure struct {
	Key, Label, Unit string
	Value            string // artifact text; "" when null
	Null             bool
	Base             string // baseline value ("" none or null)
	BaseNull         bool
	Verdict          string // better, worse, same or "" (no baseline)
}

type kv struct{ Label, Value string }

type chart struct {
	SVG     template.HTML
	Legend  []legendKey
	Caption string
	Missing string // why the chart is not drawn
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

type nullField struct {
	Key     string
	Notices []string
}

type page struct {
	Title       string
	Header      []kv
	HasBaseline bool
	Frontiers   []figure
	TrialOther  []figure
	NoTrial     bool
	Gates       []rowTable
	OtherRows   []rowTable
	Packing     chart
	PackingFigs []figure
	PSI         []psiBlock
	Snapshots   []figure
	SnapChart   chart
	Actors      chart
	ActorFigs   []figure
	WSCharts    []chart
	WSRows      []wsRow
	OOM         []figure
	Nulls       []nullField
	Notices     []string
}

// rowTable is one stats.jsonl row of the run as a key/value table.
type rowTable struct {
	Metric string
	Cells  []figure
}

type wsRow struct {
	Block string
	Cells []figure
}

// frontierKeys are the trial_summary density frontiers, shown big.
var frontierKeys = []string{"actors_per_node", "actors_per_vcpu", "actors_per_gb_ram", "actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99"}

func build(in Input) (*page, error) {
	r := in.Result
	md := in.Meta
	values := flat(r)
	var base map[string]artifact.Measurement
	var baseTrial frontier.Measurements
	if in.Baseline != nil && in.Baseline.Result != nil {
		base = flat(in.Baseline.Result)
		baseTrial = in.Baseline.Trial
	}
	fig := func(key, label, unit string) figure {
		f := figure{Key: key, Label: label, Unit: unit}
		m := values[key]
		f.Value, f.Null = measurementText(m)
		if base != nil {
			b := base[key]
			f.Base, f.BaseNull = measurementText(b)
			f.Verdict = verdict(key, m.Number(), b.Number())
		}
		return f
	}
	pg := &page{
		Title:       fmt.Sprintf("%s %s — density report", orDash(md.TestName), orDash(md.Tag)),
		HasBaseline: base != nil,
	}
	pg.Header = []kv{
		{"test_name", orDash(md.TestName)},
		{"tag", orDash(md.Tag)},
		{"run window (start_ts – end_ts)", window(md.Start, md.End)},
		{"steady window (steady_start_ts – steady_end_ts)", window(md.SteadyStart, md.SteadyEnd)},
		{"atelet_lag_s", strconv.FormatInt(md.LagS, 10)},
		{"data source", orDash(in.Source)},
		{"harvested", timeText(in.HarvestedAt)},
	}
	if base != nil {
		bm := in.Baseline.Meta
		pg.Header = append(pg.Header, kv{"baseline", fmt.Sprintf("%s %s, %s", orDash(bm.TestName), orDash(bm.Tag), window(bm.Start, bm.End))})
	}

	// Frontiers and the rest of the trial_summary row.
	if in.Trial == nil {
		pg.NoTrial = true
	}
	for _, m := range in.Trial {
		f := figure{Key: m.Key, Label: m.Key}
		if m.Value == nil {
			f.Null = true
		} else {
			f.Value = *m.Value
		}
		if base != nil {
			bv, ok := baseTrial.Get(m.Key)
			if ok && bv != nil {
				f.Base = *bv
			} else {
				f.BaseNull = true
			}
			f.Verdict = verdict(m.Key, parseNum(m.Value), parseNum(bv))
		}
		if isFrontier(m.Key) {
			pg.Frontiers = append(pg.Frontiers, f)
		} else {
			pg.TrialOther = append(pg.TrialOther, f)
		}
	}

	// Other rows of the run: gate verdicts up front, the rest after OOM.
	for _, row := range in.Rows {
		rt := rowTable{Metric: row.Metric}
		for _, f := range row.Measurements {
			c := figure{Key: row.Metric + "." + f.Key, Label: f.Key}
			switch v := f.Value.(type) {
			case string:
				c.Value = v
			case *string:
				if v != nil {
					c.Value = *v
				} else {
					c.Null = true
				}
			case nil:
				c.Null = true
			default:
				c.Value = fmt.Sprint(v)
			}
			rt.Cells = append(rt.Cells, c)
		}
		if strings.HasPrefix(row.Metric, "gate_") {
			pg.Gates = append(pg.Gates, rt)
		} else {
			pg.OtherRows = append(pg.OtherRows, rt)
		}
	}

	// Packing.
	for _, p := range []string{"p50", "p90", "p95", "p99"} {
		pg.PackingFigs = append(pg.PackingFigs, fig("cluster_packing_"+p, "packing "+p, "busy/total"))
	}
	var pt []int64
	var pv []*float64
	for _, p := range r.Packing.Timeseries {
		pt, pv = append(pt, p.Timestamp), append(pv, p.Ratio)
	}
	zero := 0.0
	steady := [2]int64{md.SteadyStart, md.SteadyEnd}
	var err error
	pg.Packing, err = drawTime(timeChart{Title: "Packing ratio", YLabel: "packing_ratio (busy/total)", Start: md.Start, End: md.End, Steady: steady,
		Lines: []line{{Name: "packing_ratio", Color: colorBlue, T: pt, V: pv}}, YMin: &zero},
		"cluster_packing.timeseries[].packing_ratio over the run; steady window shaded", "no packing time series (cluster_packing.timeseries is empty)")
	if err != nil {
		return nil, err
	}

	// PSI.
	for _, sc := range []struct {
		title, block, count, flatPrefix string
		psi                             *harvest.PSI
		scope                           func(*artifact.PSISeries) *artifact.PSIScope
	}{
		{"Node PSI", harvest.BlockNodePSI, "nodes", "psi_", &r.NodePSI, func(s *artifact.PSISeries) *artifact.PSIScope { return &s.Node }},
		{"Pod PSI", harvest.BlockPodPSI, "pods", "pod_psi_", &r.PodPSI, func(s *artifact.PSISeries) *artifact.PSIScope { return &s.Pod }},
	} {
		b := psiBlock{Title: sc.title, Block: sc.block, CountKey: sc.block + "." + sc.count}
		b.Count = intFigure(b.CountKey, sc.count, intp(sc.psi.Count))
		for _, res := range harvest.PSIResources() {
			row := psiRow{Resource: res.Key}
			for _, p := range []string{"p50", "p90", "p95", "p99"} {
				row.Cells = append(row.Cells, fig(sc.flatPrefix+res.Key+"_stall_"+p, p, "%"))
			}
			b.Rows = append(b.Rows, row)
		}
		if in.PSI == nil {
			b.Notice = "psi_series.json is not available: the PSI summaries are shown without their time series."
		} else {
			scope := sc.scope(in.PSI)
			for i, set := range []*harvest.PSIBandSet{&scope.CPU, &scope.Mem, &scope.IO} {
				res := harvest.PSIResources()[i].Key
				key := sc.block + "." + res
				c, err := drawTime(timeChart{
					Title: fmt.Sprintf("%s %s stall", sc.title, res), YLabel: res + "_stall_pct (%)", Start: md.Start, End: md.End, Steady: steady,
					Band: &band{Name: "min–max", T: set.Timestamps, Lo: set.Min, Hi: set.Max, FillWith: colorBand},
					Lines: []line{
						{Name: "p50", Color: colorBlue, T: set.Timestamps, V: set.P50},
						{Name: "p90", Color: colorOrange, T: set.Timestamps, V: set.P90},
						{Name: "p99", Color: colorRed, T: set.Timestamps, V: set.P99},
					}, YMin: &zero},
					fmt.Sprintf("psi_series.json %s bands (min, p50, p90, p99, max) across %s series, every %d s", key, seriesCount(set.Series), in.PSI.StepS),
					fmt.Sprintf("no series in psi_series.json %s", key))
				if err != nil {
					return nil, err
				}
				b.Charts = append(b.Charts, c)
			}
		}
		pg.PSI = append(pg.PSI, b)
	}

	// Snapshots.
	s := &r.Snapshots
	for _, f := range s.Fields() {
		key := "snapshot_" + f.Key
		if !strings.HasPrefix(f.Key, "size_") {
			key = f.Key
		}
		if f.Key == "checkpoints_cumulative" {
			pg.Snapshots = append(pg.Snapshots, intFigure("snapshots.checkpoints_cumulative", f.Key, f.Int))
			continue
		}
		pg.Snapshots = append(pg.Snapshots, fig(key, f.Key, f.Unit))
	}
	pg.SnapChart, err = drawBars("Restore and checkpoint duration", "duration (s)", []string{"p50", "p90", "p95", "p99", "mean"},
		[]barGroup{
			{Name: "restore", Color: colorBlue, Values: []*float64{s.RestoreP50S, s.RestoreP90S, s.RestoreP95S, s.RestoreP99S, s.RestoreMeanS}},
			{Name: "checkpoint", Color: colorOrange, Values: []*float64{s.CheckpointP50S, s.CheckpointP90S, s.CheckpointP95S, s.CheckpointP99S, s.CheckpointMeanS}},
		}, "snapshots.restore_p*_s and snapshots.checkpoint_p*_s; a null value draws no bar", "every restore and checkpoint duration is null")
	if err != nil {
		return nil, err
	}

	// Active actors.
	for _, p := range []string{"p50", "p90", "p95", "p99"} {
		pg.ActorFigs = append(pg.ActorFigs, fig("active_actors_"+p, "active actors "+p, "actors"))
	}
	pg.ActorFigs = append(pg.ActorFigs, intFigure("active_actors.atelets", "atelets", intp(r.ActiveActors.Atelets)))
	var at []int64
	var av, aa []*float64
	for _, p := range r.ActiveActors.Timeseries {
		at = append(at, p.Timestamp)
		av = append(av, ptr(p.ActiveActors))
		aa = append(aa, ptr(float64(p.ActiveAtelets)))
	}
	pg.Actors, err = drawTime(timeChart{Title: "Active actors", YLabel: "active actors (count)", Start: md.Start, End: md.End, Steady: steady,
		Lines: []line{{Name: "active_actors", Color: colorBlue, T: at, V: av}, {Name: "active_atelets", Color: colorGreen, T: at, V: aa}}, YMin: &zero},
		"active_actors.timeseries[].active_actors and .active_atelets", "no active actors time series (active_actors.timeseries is empty)")
	if err != nil {
		return nil, err
	}

	// Working sets.
	for _, name := range harvest.WorkingSetBlocks() {
		b := r.WorkingSet.Block(name)
		row := wsRow{Block: name}
		for _, p := range []string{"p50", "p90", "p95", "p99", "max"} {
			row.Cells = append(row.Cells, fig("working_set_"+name+"_"+p+"_gb", p, "GB"))
		}
		row.Cells = append(row.Cells, intFigure("working_set."+name+".count", "count", intp(b.Count)))
		pg.WSRows = append(pg.WSRows, row)
	}
	// One small chart per block: the blocks differ by orders of magnitude
	// (a node's GB against an atelet's), so a shared axis would flatten the
	// small ones into the floor.
	for _, name := range harvest.WorkingSetBlocks() {
		b := r.WorkingSet.Block(name)
		var t []int64
		var tot, mx []*float64
		for _, p := range b.Timeseries {
			t, tot, mx = append(t, p.Timestamp), append(tot, ptr(p.TotalGB)), append(mx, ptr(p.MaxGB))
		}
		c, err := drawTime(timeChart{Title: "working_set." + name, YLabel: "working set (GB)", Start: md.Start, End: md.End, Steady: steady, Half: true,
			Lines: []line{{Name: "total_gb", Color: colorBlue, T: t, V: tot}, {Name: "max_gb", Color: colorOrange, T: t, V: mx}}, YMin: &zero},
			"working_set."+name+".timeseries[].total_gb and .max_gb", "no working set time series for "+name)
		if err != nil {
			return nil, err
		}
		pg.WSCharts = append(pg.WSCharts, c)
	}

	// OOM and evictions.
	for _, k := range harvest.OOMKeys() {
		pg.OOM = append(pg.OOM, fig("oom_events_"+k, k, "events"))
	}

	// Notices and nulls.
	for _, n := range in.Notices {
		pg.Notices = append(pg.Notices, n.String())
	}
	for _, m := range artifact.ServerSummaryValues(r) {
		if m.Number() != nil {
			continue
		}
		pg.Nulls = append(pg.Nulls, in.nullField(m.Key, func(n artifact.Notice) bool { return noticeCovers(n, m.Key) }))
	}
	for _, m := range in.Trial {
		if m.Value == nil {
			pg.Nulls = append(pg.Nulls, in.nullField("trial_summary."+m.Key, func(n artifact.Notice) bool {
				return (n.Block == "trial_summary" || n.Block == "cluster_facts") && n.Field == m.Key
			}))
		}
	}
	return pg, nil
}

func drawTime(c timeChart, caption, missing string) (chart, error) {
	svg, keys, err := c.render()
	if err != nil {
		return chart{}, err
	}
	if svg == "" {
		return chart{Missing: missing, Caption: caption}, nil
	}
	return chart{SVG: svg, Legend: keys, Caption: caption}, nil
}

func drawBars(title, ylabel string, cats []string, groups []barGroup, caption, missing string) (chart, error) {
	svg, keys, err := barChart(title, ylabel, cats, groups)
	if err != nil {
		return chart{}, err
	}
	if svg == "" {
		return chart{Missing: missing, Caption: caption}, nil
	}
	return chart{SVG: svg, Legend: keys, Caption: caption}, nil
}

// flat indexes the 80 flat server_summary measurements by key.
func flat(r *harvest.Result) map[string]artifact.Measurement {
	vs := artifact.ServerSummaryValues(r)
	m := make(map[string]artifact.Measurement, len(vs))
	for _, v := range vs {
		m[v.Key] = v
	}
	return m
}

// measurementText is the value as the artifact writes it.
func measurementText(m artifact.Measurement) (string, bool) {
	switch {
	case m.Int != nil:
		return strconv.FormatInt(*m.Int, 10), false
	case m.Float != nil && !math.IsNaN(*m.Float) && !math.IsInf(*m.Float, 0):
		return artifact.FormatFloat(*m.Float), false
	}
	return "", true
}

func intFigure(key, label string, v *int64) figure {
	f := figure{Key: key, Label: label}
	if v == nil {
		f.Null = true
	} else {
		f.Value = strconv.FormatInt(*v, 10)
	}
	return f
}

// NoisePct is the compare column's noise band: |Δ%| at most this is same
// (verdicts.md's default noise_pct).
const NoisePct = verdicts.DefaultNoisePct

// direction is which way a figure improves (pkg/verdicts' key table):
// "higher", "lower", "none" (shown as changed / same), or "" for keys left
// out of comparison (timestamps, metadata).
func direction(key string) string {
	if verdicts.Excluded(key) {
		return ""
	}
	return verdicts.DirectionOf(key).String()
}

// verdict compares a figure with the baseline's: same when |Δ%| ≤
// NoisePct, else better or worse by the key's direction (changed for a key
// without one); "" when either is null or the key is not compared.
func verdict(key string, v, b *float64) string {
	dir := direction(key)
	if v == nil || b == nil || dir == "" {
		return ""
	}
	d := *v - *b
	if d == 0 || (*b != 0 && math.Abs(d)/math.Abs(*b)*100 <= NoisePct) {
		return "same"
	}
	switch {
	case dir == "none":
		return "changed"
	case (d > 0) == (dir == "higher"):
		return "better"
	}
	return "worse"
}

func isFrontier(key string) bool {
	for _, k := range frontierKeys {
		if key == k {
			return true
		}
	}
	return false
}

// nullField is the null key with the notices that explain it, or why
// none does.
func (in Input) nullField(key string, covers func(artifact.Notice) bool) nullField {
	nf := nullField{Key: key}
	for _, n := range in.Notices {
		if covers(n) {
			nf.Notices = append(nf.Notices, n.String())
		}
	}
	if len(nf.Notices) == 0 {
		why := "no notice recorded"
		if in.NoNotices != "" {
			why += " (" + in.NoNotices + ")"
		}
		nf.Notices = []string{why}
	}
	return nf
}

// noticeCovers says whether a notice explains the null flat key.
func noticeCovers(n artifact.Notice, key string) bool {
	prefix := map[string]string{
		harvest.BlockPacking: "cluster_packing_", harvest.BlockNodePSI: "psi_", harvest.BlockPodPSI: "pod_psi_",
		harvest.BlockActiveActors: "active_actors_", harvest.BlockWorkingSet: "working_set_", harvest.BlockOOM: "oom_events_",
	}
	switch n.Block {
	case "":
		return n.Severity == artifact.SeverityWarning
	case harvest.BlockSnapshots:
		if !(strings.HasPrefix(key, "snapshot_") || strings.HasPrefix(key, "restore_") || strings.HasPrefix(key, "checkpoint")) {
			return false
		}
	default:
		p, ok := prefix[n.Block]
		if !ok || !strings.HasPrefix(key, p) {
			return false
		}
	}
	if n.Field == "" {
		return true
	}
	stem := strings.TrimSuffix(n.Field, "_pct")
	return strings.Contains(key, stem)
}

func parseNum(s *string) *float64 {
	if s == nil {
		return nil
	}
	v, err := strconv.ParseFloat(*s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func window(a, b int64) string {
	if a == 0 && b == 0 {
		return "—"
	}
	return fmt.Sprintf("%s – %s (%d – %d, %s)", timeText(time.Unix(a, 0)), timeText(time.Unix(b, 0)), a, b, time.Duration(b-a)*time.Second)
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
