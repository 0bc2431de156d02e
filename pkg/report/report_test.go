package report

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.html")

// fixedHarvest is the harvest time every test input carries.
var fixedHarvest = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }
func intp0(v int) *int       { return &v }
func str(s string) *string   { return &s }

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func pctSummary(base float64) percentile.Summary {
	return percentile.Summary{Min: f64(round4(base * 0.5)), P50: f64(round4(base)), P90: f64(round4(base * 1.4)),
		P95: f64(round4(base * 1.6)), P99: f64(round4(base * 1.9)), Max: f64(round4(base * 2.2)), Avg: f64(round4(base * 1.1))}
}

// synthetic is a deterministic run of dur seconds (10 s samples) over pods
// pod series, with every block measured except a few null fields (with
// notices) so that the null listing has content.
func synthetic(dur int64, pods int) Input {
	start := int64(1764500000)
	end := start + dur
	md := artifact.ServerMetadata{TestName: "density-smoke", Tag: "abc1234", PromURL: "http://127.0.0.1:9090",
		Start: start, End: end, SteadyStart: start + dur/4, SteadyEnd: end - dur/8, LagS: 70}
	r := harvest.EmptyResult()
	n := int(dur/10) + 1
	wave := func(i int, period, amp, off float64) float64 {
		return off + amp*math.Sin(2*math.Pi*float64(i)/period)
	}
	for i := range n {
		ts := start + int64(i)*10
		total := 40.0
		busy := math.Min(total, math.Round(float64(i)/float64(n)*60))
		var ratio *float64
		if i != n/2 { // one null ratio: a gap, never zero
			ratio = f64(round4(busy / total))
		}
		r.Packing.Timeseries = append(r.Packing.Timeseries, harvest.PackingPoint{Timestamp: ts, Busy: busy, Total: total, Ratio: ratio})
		r.ActiveActors.Timeseries = append(r.ActiveActors.Timeseries, harvest.ActorsPoint{Timestamp: ts, ActiveActors: busy * 3, ActiveAtelets: 4})
		for j, name := range harvest.WorkingSetBlocks() {
			b := r.WorkingSet.Block(name)
			b.Timeseries = append(b.Timeseries, harvest.WSPoint{Timestamp: ts,
				TotalGB: round4(wave(i, 90, 0.5, 2+float64(j))), MaxGB: round4(wave(i, 90, 0.1, 0.5+float64(j)/4))})
		}
	}
	r.Packing.Summary = pctSummary(0.5)
	for k, p := range []*harvest.PSI{&r.NodePSI, &r.PodPSI} {
		for ri, res := range harvest.PSIResources() {
			p.Resource(res.Key).Summary = pctSummary(float64(ri+1) * float64(k+1) * 1.25)
		}
	}
	r.NodePSI.Count = intp0(4)
	r.PodPSI.Count = intp0(pods)
	s := &r.Snapshots
	s.SizeP50MB, s.SizeP90MB, s.SizeP95MB, s.SizeP99MB, s.SizeAvgMB = f64(120.5), f64(180.25), f64(200), f64(250.75), f64(140.125)
	s.CheckpointsInWindow, s.CheckpointsCumulative = i64(321), i64(654)
	s.RestoreP50S, s.RestoreP90S, s.RestoreP95S, s.RestoreP99S, s.RestoreMeanS = f64(0.21), f64(0.48), f64(0.61), f64(0.92), f64(0.27)
	s.CheckpointP50S, s.CheckpointP90S, s.CheckpointP95S, s.CheckpointP99S = f64(0.35), f64(0.7), f64(0.85), f64(1.3)
	s.CheckpointMeanS, s.CheckpointMBs = nil, f64(512.5) // one null with its notice
	r.ActiveActors.Summary = pctSummary(110)
	r.ActiveActors.Atelets = intp0(4)
	for j, name := range harvest.WorkingSetBlocks() {
		b := r.WorkingSet.Block(name)
		b.Summary = pctSummary(2 + float64(j))
		b.Count = intp0(10 * (j + 1))
	}
	r.OOM = harvest.OOM{Node: i64(0), Pod: i64(2), WorkerRestarts: i64(1), WorkerOOMKilledPods: i64(1), Evicted: nil, WorkerPodsLost: i64(0)}
	r.Notices = []harvest.Notice{
		{Block: harvest.BlockSnapshots, Field: "checkpoint_mean_s", Reason: "null: no checkpoint in the window", Kind: harvest.Absent},
		{Block: harvest.BlockOOM, Field: "evicted", Reason: "null: the Kubernetes read failed: forbidden", Kind: harvest.ReadFailed},
		{Block: harvest.BlockSnapshots, Reason: "1 series restarted inside the window", Kind: harvest.Caveat},
	}

	// psi_series.json as the export writes it: at most 2,000 points.
	step := harvest.PSIBandStep(start, end)
	points := int((end-start)/step) + 1
	bands := func(scale float64, series int) harvest.PSIBandSet {
		b := harvest.PSIBandSet{Series: intp0(series)}
		for i := range points {
			b.Timestamps = append(b.Timestamps, start+int64(i)*step)
			v := math.Abs(wave(i, 50, 1, 0.2)) * scale
			b.Min = append(b.Min, f64(round4(v*0.2)))
			b.P50 = append(b.P50, f64(round4(v)))
			b.P90 = append(b.P90, f64(round4(v*1.5)))
			b.P99 = append(b.P99, f64(round4(v*2)))
			b.Max = append(b.Max, f64(round4(v*2.5)))
		}
		return b
	}
	psi := &artifact.PSISeries{StepS: step,
		Node: artifact.PSIScope{CPU: bands(3, 4), Mem: bands(1, 4), IO: bands(0.5, 4)},
		Pod:  artifact.PSIScope{CPU: bands(6, pods), Mem: bands(2, pods), IO: bands(1, pods)},
	}
	trial := frontier.Measurements{
		{Key: "machine_type", Value: str("n2-standard-8")},
		{Key: "node_count", Value: str("4")},
		{Key: "actors_per_node", Value: str("82.5")},
		{Key: "actors_per_vcpu", Value: str("10.3125")},
		{Key: "actors_per_gb_ram", Value: nil},
	}
	rows := []artifact.Row{
		{Metric: "gate_summary", Measurements: artifact.Object{{Key: "gates", Value: "2"}, {Key: "passed", Value: "1"}, {Key: "failed", Value: "1"}, {Key: "verdict", Value: "fail"}}},
		{Metric: "phase_atelet_restore_total", Measurements: artifact.Object{{Key: "count", Value: "120"}, {Key: "p95_ms", Value: "412.5"}, {Key: "p99_ms", Value: nil}}},
	}
	return Input{Run: Run{Meta: md, Result: r, Trial: trial, Rows: rows}, PSI: psi, Source: md.PromURL, HarvestedAt: fixedHarvest,
		Notices: append(artifact.HarvestNotices(r.Notices),
			artifact.Notice{Block: "trial_summary", Field: "actors_per_gb_ram", Severity: artifact.SeverityWarning, Text: "null: allocatable RAM is unknown"})}
}

func render(t *testing.T, in Input) []byte {
	t.Helper()
	out, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGolden(t *testing.T) {
	got := render(t, synthetic(20*60, 30))
	again := render(t, synthetic(20*60, 30))
	if !bytes.Equal(got, again) {
		t.Fatal("two renders of one input differ")
	}
	path := filepath.Join("testdata", "demo.golden.html")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report differs from %s (run go test -update and review the diff)", path)
	}
	t.Logf("demo report: %d bytes", len(got))
}

// walk calls fn for every element node.
func walk(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

// checkSelfContained fails on any reference to a resource other than data:
// or a same-document fragment.
func checkSelfContained(t *testing.T, page []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	refAttrs := map[string]bool{"src": true, "href": true, "xlink:href": true, "action": true, "formaction": true,
		"poster": true, "data": true, "srcset": true, "background": true, "ping": true, "manifest": true, "codebase": true}
	var csp string
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "script", "iframe", "object", "embed", "link", "base", "img", "audio", "video", "source":
			t.Errorf("element <%s> in a self-contained report", n.Data)
		}
		for _, a := range n.Attr {
			name := strings.ToLower(a.Key)
			if a.Namespace != "" {
				name = a.Namespace + ":" + name
			}
			v := strings.TrimSpace(a.Val)
			if refAttrs[name] && !strings.HasPrefix(v, "data:") && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q>: a resource reference", n.Data, name, v)
			}
			if name == "style" {
				checkCSS(t, v)
			}
			if strings.HasPrefix(name, "on") {
				t.Errorf("<%s %s>: an event handler", n.Data, name)
			}
			if n.Data == "meta" && strings.EqualFold(a.Key, "content") {
				for _, b := range n.Attr {
					if strings.EqualFold(b.Key, "http-equiv") && strings.EqualFold(b.Val, "Content-Security-Policy") {
						csp = a.Val
					}
				}
			}
		}
		if n.Data == "style" {
			checkCSS(t, text(n))
		}
	})
	if !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q lacks default-src 'none'", csp)
	}
	for _, bad := range []string{"@import", "https://", "xmlns"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("page holds %q", bad)
		}
	}
}

func checkCSS(t *testing.T, css string) {
	t.Helper()
	for rest := css; ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			break
		}
		arg := strings.Trim(strings.TrimSpace(rest[i+4:]), `"'`)
		if !strings.HasPrefix(arg, "data:") && !strings.HasPrefix(arg, "#") {
			t.Errorf("CSS url(%.40s): a resource reference", arg)
		}
		rest = rest[i+4:]
	}
	if strings.Contains(css, "@import") {
		t.Error("CSS @import")
	}
}

func TestSelfContained(t *testing.T) {
	checkSelfContained(t, render(t, synthetic(20*60, 30)))
}

// shown parses the report's figures back: data-key → text (null as "null").
func shown(t *testing.T, page []byte, attr string) map[string][]string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	walk(doc, func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == attr {
				out[a.Val] = append(out[a.Val], strings.TrimSpace(text(n)))
			}
		}
	})
	return out
}

// artifactValues are the report's figures as the artifacts hold them.
func artifactValues(in Input) map[string]*float64 {
	want := map[string]*float64{}
	for _, m := range artifact.ServerSummaryValues(in.Result) {
		want[m.Key] = m.Number()
	}
	r := in.Result
	num := func(p *int) *float64 {
		if p == nil {
			return nil
		}
		return f64(float64(*p))
	}
	want["node_psi.nodes"] = num(r.NodePSI.Count)
	want["pod_psi.pods"] = num(r.PodPSI.Count)
	want["active_actors.atelets"] = num(r.ActiveActors.Atelets)
	if c := r.Snapshots.CheckpointsCumulative; c != nil {
		want["snapshots.checkpoints_cumulative"] = f64(float64(*c))
	} else {
		want["snapshots.checkpoints_cumulative"] = nil
	}
	for _, name := range harvest.WorkingSetBlocks() {
		want["working_set."+name+".count"] = num(r.WorkingSet.Block(name).Count)
	}
	return want
}

func TestValuesEqualArtifact(t *testing.T) {
	in := synthetic(20*60, 30)
	got := shown(t, render(t, in), "data-key")
	want := artifactValues(in)
	for k, w := range want {
		texts, ok := got[k]
		if !ok {
			t.Errorf("%s not shown", k)
			continue
		}
		for _, s := range texts {
			if w == nil {
				if s != "null" {
					t.Errorf("%s shown %q, artifact null", k, s)
				}
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v != *w {
				t.Errorf("%s shown %q, artifact %v", k, s, *w)
			}
		}
	}
	for _, m := range in.Trial {
		texts, ok := got[m.Key]
		if !ok {
			t.Errorf("trial_summary %s not shown", m.Key)
			continue
		}
		for _, s := range texts {
			if (m.Value == nil && s != "null") || (m.Value != nil && s != *m.Value) {
				t.Errorf("trial_summary %s shown %q", m.Key, s)
			}
		}
	}
	for _, row := range in.Rows {
		for _, f := range row.Measurements {
			k := row.Metric + "." + f.Key
			if strings.HasPrefix(row.Metric, "phase_") && isPhaseLabel(f.Key) {
				continue // a phase row's group names its row (data-row), not a figure
			}
			texts := got[k]
			if len(texts) != 1 {
				t.Errorf("%s shown %d times", k, len(texts))
				continue
			}
			// Row values (phases, ladder, gate figures) show at about three
			// significant digits; an unset gate bound shows "—".
			if v, _ := f.Value.(string); (f.Value == nil && texts[0] != "null" && texts[0] != "—") || (f.Value != nil && texts[0] != v && texts[0] != sig3(v)) {
				t.Errorf("%s shown %q, row has %v", k, texts[0], f.Value)
			}
			want[k] = nil // known key
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			if _, ok := in.Trial.Get(k); !ok {
				t.Errorf("data-key %s is no artifact key", k)
			}
		}
	}
}

func TestNullsListedWithNotices(t *testing.T) {
	page := string(render(t, synthetic(20*60, 30)))
	for _, want := range []string{
		"<code>checkpoint_mean_s</code>", "null: no checkpoint in the window",
		"<code>oom_events_evicted</code>", "the Kubernetes read failed",
		"<code>trial_summary.actors_per_gb_ram</code>", "allocatable RAM is unknown",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestWithoutPSISeries(t *testing.T) {
	in := synthetic(20*60, 30)
	in.PSI = nil
	page := render(t, in)
	if !bytes.Contains(page, []byte("psi_series.json is not available")) {
		t.Error("no notice for the missing psi_series.json")
	}
	if got := shown(t, page, "data-key")["psi_cpu_stall_p50"]; len(got) == 0 {
		t.Error("PSI summaries not shown without psi_series.json")
	}
	checkSelfContained(t, page)
}

func TestBaselineCompare(t *testing.T) {
	in := synthetic(20*60, 30)
	b := synthetic(20*60, 30)
	b.Result.Packing.Summary.P50 = f64(0.25)  // higher now: better
	b.Result.Snapshots.RestoreP99S = f64(0.5) // higher now: worse
	in.Baseline = &b.Run
	page := render(t, in)
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	walk(doc, func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "data-baseline-key" && n.NextSibling != nil && n.Parent.Data == "tr" {
				verdicts[a.Val] = text(n.NextSibling)
			}
		}
	})
	for k, want := range map[string]string{"cluster_packing_p50": "better", "restore_p99_s": "worse", "restore_p50_s": "same"} {
		if verdicts[k] != want {
			t.Errorf("%s compare %q, want %q", k, verdicts[k], want)
		}
	}
	if got := shown(t, page, "data-baseline-key")["cluster_packing_p50"]; len(got) == 0 || got[0] != "0.25" {
		t.Errorf("baseline cluster_packing_p50 shown %q", got)
	}
}

func TestThinBound(t *testing.T) {
	n := 8641
	ts := make([]int64, n)
	vs := make([]*float64, n)
	for i := range n {
		ts[i] = int64(i) * 10
		vs[i] = f64(float64(i % 7))
	}
	vs[5000] = f64(99) // a spike survives thinning
	tt, tv := thin(ts, vs, 500)
	if len(tt) > 500 || len(tv) != len(tt) {
		t.Fatalf("thinned to %d points, want ≤ 500", len(tt))
	}
	peak := 0.0
	for _, v := range tv {
		if v != nil {
			peak = math.Max(peak, *v)
		}
	}
	if peak != 99 {
		t.Errorf("spike lost: peak %v", peak)
	}
}

// TestLargeRunSize renders a 24 h run over 5,000 pods (full-resolution
// 10 s time series, psi_series.json at its 2,000-point bound) and bounds
// the page at 2 MiB.
func TestLargeRunSize(t *testing.T) {
	in := synthetic(24*3600, 5000)
	t0 := time.Now()
	page := render(t, in)
	elapsed := time.Since(t0)
	if len(page) >= 2<<20 {
		t.Errorf("24 h × 5,000-pod report is %d bytes, want < 2 MiB", len(page))
	}
	checkSelfContained(t, page)
	checkChartPoints(t, page)
	t.Logf("24 h × 5,000-pod report: %d bytes (%.1f KiB), rendered in %v", len(page), float64(len(page))/1024, elapsed)
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		key  string
		v, b *float64
		want string
	}{
		{"cluster_packing_p50", f64(0.9), f64(0.8), "better"},
		{"cluster_packing_p50", f64(0.7), f64(0.8), "worse"},
		{"cluster_packing_p50", f64(0.81), f64(0.8), "same"}, // 1.25 % ≤ 2 %
		{"restore_p99_s", f64(1.1), f64(1), "worse"},
		{"checkpoint_mb_s", f64(110), f64(100), "better"},
		{"psi_cpu_stall_p99", f64(1), f64(2), "better"},
		{"oom_events_pod", f64(1), f64(0), "worse"},
		{"oom_events_pod", f64(0), f64(0), "same"},
		{"aggregate_failure_ratio", f64(0.2), f64(0.1), "worse"},
		{"actors_per_node", f64(90), f64(80), "better"},
		{"node_count", f64(5), f64(4), "changed"},
		{"checkpoints_in_window", f64(5), f64(4), "changed"},
		{"run_start", f64(5), f64(4), ""},
		{"metadata_branch", f64(5), f64(4), ""},
		{"restore_p99_s", nil, f64(4), ""},
	} {
		if got := verdict(c.key, c.v, c.b); got != c.want {
			t.Errorf("verdict(%s) = %q, want %q", c.key, got, c.want)
		}
	}
}

var pathVertex = regexp.MustCompile(`[ML][-0-9.]`)

// checkChartPoints bounds the vertices each chart's paths draw: the series'
// MaxChartPoints plus the frame, ticks and grid.
func checkChartPoints(t *testing.T, page []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	charts, most := 0, 0
	walk(doc, func(n *html.Node) {
		if n.Data != "svg" {
			return
		}
		charts++
		vertices := 0
		walk(n, func(p *html.Node) {
			for _, a := range p.Attr {
				if p.Data == "path" && a.Key == "d" {
					vertices += len(pathVertex.FindAllString(a.Val, -1))
				}
			}
		})
		most = max(most, vertices)
		if vertices > MaxChartPoints+400 {
			t.Errorf("chart %d draws %d path vertices, want ≤ %d + frame", charts, vertices, MaxChartPoints)
		}
	})
	if charts < 10 {
		t.Errorf("%d charts, want ≥ 10", charts)
	}
	t.Logf("%d charts, at most %d path vertices in one", charts, most)
}

func TestSig3(t *testing.T) {
	for in, want := range map[string]string{
		"12.279499999999999": "12.3", "18.478499999999997": "18.5", "0.0012345": "0.00123", "19.773": "19.8",
		"7342": "7342", "7342.0": "7342", "412.5": "412", "1234.56": "1235", "0.5": "0.5", "-3.14159": "-3.14",
		"0": "0", "pass": "pass", "1e-9": "0.000000001",
	} {
		if got := sig3(in); got != want {
			t.Errorf("sig3(%s) = %s, want %s", in, got, want)
		}
	}
}
