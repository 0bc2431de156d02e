package report

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/substrate/density/pkg/artifact"
)

// sectionIDs are the page's sections in order.
func sectionIDs(t *testing.T, page []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	walk(doc, func(n *html.Node) {
		if n.Data == "section" {
			for _, a := range n.Attr {
				if a.Key == "id" {
					ids = append(ids, a.Val)
				}
			}
		}
	})
	return ids
}

// withRows is the synthetic run with gate rows (an unset bound each) and
// phase rows of unrounded floats.
func withRows() Input {
	in := synthetic(20*60, 30)
	in.Rows = []artifact.Row{
		{Metric: "gate_restore_p99_s", Measurements: artifact.Object{{Key: "key", Value: "restore_p99_s"}, {Key: "value", Value: "0.92"},
			{Key: "min", Value: nil}, {Key: "max", Value: "5.0"}, {Key: "baseline", Value: nil}, {Key: "delta_pct", Value: nil},
			{Key: "max_regression_pct", Value: nil}, {Key: "verdict", Value: "pass"}, {Key: "reason", Value: nil}}},
		{Metric: "gate_oom_events_pod", Measurements: artifact.Object{{Key: "key", Value: "oom_events_pod"}, {Key: "value", Value: "2.0"},
			{Key: "min", Value: nil}, {Key: "max", Value: "0.0"}, {Key: "baseline", Value: nil}, {Key: "delta_pct", Value: nil},
			{Key: "max_regression_pct", Value: nil}, {Key: "verdict", Value: "fail"}, {Key: "reason", Value: "2.0 above max 0.0"}}},
		{Metric: "gate_summary", Measurements: artifact.Object{{Key: "gates", Value: "2"}, {Key: "passed", Value: "1"}, {Key: "failed", Value: "1"}, {Key: "verdict", Value: "fail"}}},
	}
	for i, p95 := range []string{"12.279499999999999", "412.5", "0.0012345", "77.777"} {
		in.Rows = append(in.Rows, artifact.Row{Metric: "phase_p" + strconv.Itoa(i), Measurements: artifact.Object{
			{Key: "layer", Value: "atelet"}, {Key: "op", Value: "restore"}, {Key: "phase", Value: "p" + strconv.Itoa(i)},
			{Key: "count", Value: "156"}, {Key: "p50_ms", Value: "1.23456"}, {Key: "p95_ms", Value: p95}}})
	}
	return in
}

// The page reads top-down: the summary first (the run, the verdict, the
// frontiers and every null with its numbered reason), then one table of
// gates, ..., one table of phases.
func TestSummaryFirst(t *testing.T) {
	page := render(t, withRows())
	ids := sectionIDs(t, page)
	if len(ids) == 0 || ids[0] != "summary" || ids[1] != "gates" {
		t.Fatalf("sections %v, want summary then gates first", ids)
	}
	s := string(page)
	summary := s[strings.Index(s, `<section id="summary">`):strings.Index(s, `<section id="gates">`)]
	for _, want := range []string{"density-smoke abc1234", "Gates failed: 1 of 2 failed, 1 passed.", `data-key="actors_per_node"`,
		"null: no checkpoint in the window", "<code>checkpoint_mean_s</code>", "allocatable RAM is unknown", "<code>trial_summary.actors_per_gb_ram</code>"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	// Every null cell points at a numbered reason the summary lists.
	refs := regexp.MustCompile(`href="#why-(\d+)"`).FindAllStringSubmatch(s, -1)
	if len(refs) == 0 {
		t.Fatal("no null points at its reason")
	}
	for _, r := range refs {
		if !strings.Contains(summary, `id="why-`+r[1]+`"`) {
			t.Errorf("reason %s is not in the summary", r[1])
		}
	}
	if strings.Count(s, `data-null="true"`) != len(refs) {
		t.Errorf("%d nulls, %d with a reason", strings.Count(s, `data-null="true"`), len(refs))
	}
}

// Gates are one table; an unset bound is "—", never a red null. Phases
// are one table, slowest first, at about three significant digits.
func TestOneTableEach(t *testing.T) {
	s := string(render(t, withRows()))
	gates := s[strings.Index(s, `<section id="gates">`):strings.Index(s, `<section id="packing">`)]
	if n := strings.Count(gates, "<table"); n != 1 {
		t.Errorf("gates in %d tables, want 1", n)
	}
	if strings.Contains(gates, "null") || !strings.Contains(gates, `data-key="gate_restore_p99_s.min">—<`) {
		t.Error("an unset gate bound is not shown as —")
	}
	phases := s[strings.Index(s, `<section id="phases">`):]
	if n := strings.Count(phases, `<table class="phases">`); n != 1 {
		t.Errorf("phases in %d tables, want 1", n)
	}
	var order []string
	for _, m := range regexp.MustCompile(`data-key="(phase_p\d)\.p95_ms">([^<]*)<`).FindAllStringSubmatch(phases, -1) {
		order = append(order, m[1]+"="+m[2])
	}
	if want := []string{"phase_p1=412", "phase_p3=77.8", "phase_p0=12.3", "phase_p2=0.00123"}; !slices.Equal(order, want) {
		t.Errorf("phase p95 column %v, want %v (slowest first, three significant digits)", order, want)
	}
	if strings.Contains(phases, "12.2794") || strings.Contains(phases, "1.23456") {
		t.Error("an unrounded phase value")
	}
}

var (
	svgRe      = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	svgTitleRe = regexp.MustCompile(`font-size:11px">([^<]*)<`)
	svgTextRe  = regexp.MustCompile(`<text x="[^"]*" y="([^"]*)"[^>]*>([^<]*)</text>`)
)

// Every time chart spans the run's window, whatever its series cover: the
// active actors start a minute late and the working sets end early here,
// and their x ticks are the packing chart's. Atelets have their own chart;
// units are GiB; titles are words, not artifact keys.
func TestChartsShareTheRunWindow(t *testing.T) {
	in := synthetic(20*60, 30)
	in.Result.ActiveActors.Timeseries = in.Result.ActiveActors.Timeseries[6:]
	for _, name := range []string{"node", "per_actor"} {
		b := in.Result.WorkingSet.Block(name)
		b.Timeseries = b.Timeseries[:len(b.Timeseries)-20]
	}
	page := string(render(t, in))
	var first []string
	var titles []string
	charts := 0
	for _, svg := range svgRe.FindAllString(page, -1) {
		title := svgTitleRe.FindStringSubmatch(svg)
		if title != nil {
			titles = append(titles, title[1])
		}
		if !strings.Contains(svg, "time since run start") {
			continue
		}
		charts++
		// The x tick labels: the numeric texts lowest on the chart.
		bottom, ticks := -1e9, []string(nil)
		for _, m := range svgTextRe.FindAllStringSubmatch(svg, -1) {
			y, err := strconv.ParseFloat(m[1], 64)
			if _, nerr := strconv.ParseFloat(m[2], 64); err != nil || nerr != nil {
				continue
			}
			switch {
			case y > bottom:
				bottom, ticks = y, []string{m[2]}
			case y == bottom:
				ticks = append(ticks, m[2])
			}
		}
		if first == nil {
			first = ticks
		} else if !slices.Equal(ticks, first) {
			t.Errorf("chart %q x ticks %v, the packing chart's %v", title, ticks, first)
		}
	}
	if charts < 12 || len(first) == 0 || first[0] != "0" || first[len(first)-1] != "20" {
		t.Errorf("%d time charts, x ticks %v: want ≥ 12 charts from 0 to 20 min", charts, first)
	}
	for _, want := range []string{"Active actors", "Active atelets", "Working set: nodes", "Node PSI: CPU stall"} {
		if !slices.Contains(titles, want) {
			t.Errorf("no chart titled %q in %q", want, titles)
		}
	}
	for _, title := range titles {
		if strings.Contains(title, "_") || strings.Contains(title, ".") {
			t.Errorf("chart title %q is a key, not words", title)
		}
	}
	if strings.Contains(page, "(GB)") || strings.Contains(page, ">GB<") || !strings.Contains(page, ">GiB<") {
		t.Error("working sets are not labelled GiB as stored")
	}
}

// The snapshot bars stay inside their chart: the outer bars of the first
// and last group do not reach past the axes.
func TestBarsInsideTheChart(t *testing.T) {
	svg, _, err := barChart("t", "s", []string{"a", "b", "c"}, []barGroup{
		{Name: "x", Color: colorBlue, Values: []*float64{f64(1), f64(2), f64(3)}},
		{Name: "y", Color: colorOrange, Values: []*float64{f64(3), f64(2), f64(1)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The axes' lines and the bars' outlines: every bar's x lies between
	// the y axis (the smallest x of the plot's frame) and the right edge.
	s := string(svg)
	vb := regexp.MustCompile(`viewBox="0 0 ([0-9.]+) ([0-9.]+)"`).FindStringSubmatch(s)
	width, _ := strconv.ParseFloat(vb[1], 64)
	axisX := 1e9
	for _, m := range regexp.MustCompile(`<path d="M([0-9.]+),[0-9.]+L([0-9.]+),[0-9.]+" style="fill:none;stroke:#000000`).FindAllStringSubmatch(s, -1) {
		if m[1] == m[2] {
			x, _ := strconv.ParseFloat(m[1], 64)
			axisX = min(axisX, x)
		}
	}
	bars := regexp.MustCompile(`<path d="([^"]*)" style="fill:#(?:1F77B4|FF7F0E)`).FindAllStringSubmatch(s, -1)
	if len(bars) != 6 {
		t.Fatalf("%d bars drawn, want 6", len(bars))
	}
	for _, b := range bars {
		for _, m := range regexp.MustCompile(`[ML]([0-9.]+),`).FindAllStringSubmatch(b[1], -1) {
			x, _ := strconv.ParseFloat(m[1], 64)
			// Clear of the y axis (the old page drew the first bar on it).
			if x < axisX+10 || x > width {
				t.Errorf("bar %s reaches x=%v outside (%v + 10, %v]", b[1], x, axisX, width)
			}
		}
	}
}
