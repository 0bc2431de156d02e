package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// MaxChartPoints bounds the points a chart draws over all its series, so
// the report's size does not grow with the run's length or pod count (a
// chart is at most 17 cm wide: a few hundred points per series is all a
// page shows).
const MaxChartPoints = 1200

// Series colours: the browser test looks for these pixels in plot areas.
var (
	colorBlue   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorOrange = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorGreen  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colorRed    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colorBand   = color.RGBA{R: 0xc6, G: 0xdb, B: 0xef, A: 0xff}
	colorSteady = color.RGBA{R: 0xee, G: 0xee, B: 0xee, A: 0xff}
)

// line is one time series of a chart: timestamps (Unix s) and values, nil
// where unmeasured (a gap, never zero).
type line struct {
	Name  string
	Color color.Color
	T     []int64
	V     []*float64
}

// band is a filled area between two series on the same timestamps.
type band struct {
	Name     string
	T        []int64
	Lo, Hi   []*float64
	FillWith color.Color
}

// timeChart describes a chart over the run's time axis.
type timeChart struct {
	Title, YLabel string
	Start, End    int64    // the run window, every chart's x range; x is minutes (hours past 3 h) since Start
	Steady        [2]int64 // shaded window; zero width for none
	Lines         []line
	Band          *band
	YMin          *float64 // fixed lower bound (0 for ratios and sizes)
	Half          bool     // half the page width (small multiples)
}

// chartW and chartH are a full-width chart's drawing size, halfH a half
// chart's height: an A4 page holds three full charts or six half ones.
var chartW, chartH, halfH = 17 * vg.Centimeter, 5.5 * vg.Centimeter, 5 * vg.Centimeter

// thin reduces (t, v) to at most budget points by taking the maximum of
// each run of consecutive points (so spikes stay visible); a bucket whose
// values are all nil stays nil.
func thin(t []int64, v []*float64, budget int) ([]int64, []*float64) {
	n := min(len(t), len(v))
	budget = max(budget, 1)
	if n <= budget {
		return t[:n], v[:n]
	}
	k := (n + budget - 1) / budget
	ot := make([]int64, 0, budget)
	ov := make([]*float64, 0, budget)
	for i := 0; i < n; i += k {
		var m *float64
		for j := i; j < min(i+k, n); j++ {
			if v[j] != nil && (m == nil || *v[j] > *m) {
				m = v[j]
			}
		}
		ot = append(ot, t[i])
		ov = append(ov, m)
	}
	return ot, ov
}

// clipWindow keeps the points of (t, v) inside [start, end] (every chart shows
// the run's window; a point of the lag after it is not drawn).
func clipWindow(start, end int64, t []int64, v []*float64) ([]int64, []*float64) {
	n := min(len(t), len(v))
	i, j := 0, n
	for i < n && t[i] < start {
		i++
	}
	for j > i && end > start && t[j-1] > end {
		j--
	}
	return t[i:j], v[i:j]
}

// segments splits a series at its nil values into contiguous XY runs.
func segments(start int64, scale float64, t []int64, v []*float64) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range t {
		if v[i] == nil || math.IsNaN(*v[i]) || math.IsInf(*v[i], 0) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: float64(t[i]-start) / scale, Y: *v[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// points counts the drawn points of a chart's series (the size bound).
func (c timeChart) budget() int {
	n := len(c.Lines)
	if c.Band != nil {
		n += 2
	}
	return MaxChartPoints / max(n, 1)
}

// render draws the chart to inline SVG with its legend entries; the SVG is
// empty when no series holds a value (the caller shows the notice instead
// of an empty frame).
func (c timeChart) render() (template.HTML, []legendKey, error) {
	p := newPlot(c.Title, c.YLabel)
	scale, unit := 60.0, "min"
	if c.End-c.Start > 3*3600 {
		scale, unit = 3600, "h"
	}
	p.X.Label.Text = "time since run start (" + unit + ")"
	var keys []legendKey
	budget := c.budget()
	ymax, ymin, any := math.Inf(-1), math.Inf(1), false
	track := func(xys plotter.XYs) {
		for _, q := range xys {
			ymax, ymin, any = math.Max(ymax, q.Y), math.Min(ymin, q.Y), true
		}
	}
	var plotters []plot.Plotter
	if b := c.Band; b != nil {
		bt, blo := clipWindow(c.Start, c.End, b.T, b.Lo)
		_, bhi := clipWindow(c.Start, c.End, b.T, b.Hi)
		t, lo := thin(bt, blo, budget)
		_, hi := thin(bt, bhi, budget)
		for _, seg := range bandSegments(c.Start, scale, t, lo, hi) {
			poly, err := plotter.NewPolygon(seg)
			if err != nil {
				return "", nil, fmt.Errorf("chart %q band: %w", c.Title, err)
			}
			poly.Color = b.FillWith
			poly.Width = 0
			track(seg)
			plotters = append(plotters, poly)
		}
		if len(plotters) > 0 {
			keys = append(keys, legendKey{b.Name, b.FillWith})
		}
	}
	for _, l := range c.Lines {
		t, v := clipWindow(c.Start, c.End, l.T, l.V)
		t, v = thin(t, v, budget)
		var first *plotter.Line
		for _, seg := range segments(c.Start, scale, t, v) {
			ln, err := plotter.NewLine(seg)
			if err != nil {
				return "", nil, fmt.Errorf("chart %q series %s: %w", c.Title, l.Name, err)
			}
			ln.Color = l.Color
			ln.Width = vg.Points(1.2)
			track(seg)
			plotters = append(plotters, ln)
			if first == nil {
				first = ln
			}
		}
		if first != nil {
			keys = append(keys, legendKey{l.Name, l.Color})
		}
	}
	if !any {
		return "", nil, nil
	}
	if c.YMin != nil {
		ymin = math.Min(ymin, *c.YMin)
	}
	if ymax <= ymin {
		ymax = ymin + 1
	}
	ymax += (ymax - ymin) * 0.05
	if c.Steady[1] > c.Steady[0] {
		x0, x1 := float64(c.Steady[0]-c.Start)/scale, float64(c.Steady[1]-c.Start)/scale
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: ymin}, {X: x1, Y: ymin}, {X: x1, Y: ymax}, {X: x0, Y: ymax}})
		if err != nil {
			return "", nil, err
		}
		poly.Color = colorSteady
		poly.Width = 0
		p.Add(poly)
		keys = append(keys, legendKey{"steady window", colorSteady})
	}
	p.Add(plotter.NewGrid())
	p.Add(plotters...)
	p.Y.Min, p.Y.Max = ymin, ymax
	if c.End > c.Start {
		p.X.Min, p.X.Max = 0, float64(c.End-c.Start)/scale
	}
	w, h := chartW, chartH
	if c.Half {
		w, h = chartW/2, halfH
	}
	svg, err := writeSVG(p, w, h)
	return svg, keys, err
}

// bandSegments is the closed outline of the band over each contiguous
// stretch where both edges are measured.
func bandSegments(start int64, scale float64, t []int64, lo, hi []*float64) []plotter.XYs {
	var out []plotter.XYs
	var up, down plotter.XYs
	flush := func() {
		if len(up) > 1 {
			seg := append(plotter.XYs{}, up...)
			for i := len(down) - 1; i >= 0; i-- {
				seg = append(seg, down[i])
			}
			out = append(out, seg)
		}
		up, down = nil, nil
	}
	for i := range t {
		if lo[i] == nil || hi[i] == nil {
			flush()
			continue
		}
		x := float64(t[i]-start) / scale
		up = append(up, plotter.XY{X: x, Y: *hi[i]})
		down = append(down, plotter.XY{X: x, Y: *lo[i]})
	}
	flush()
	return out
}

// barGroup is one family of bars (e.g. restore) over shared categories.
type barGroup struct {
	Name   string
	Color  color.Color
	Values []*float64
}

// barChart draws grouped bars; a nil value draws no bar (never a zero
// bar that reads as measured). The SVG is empty when every value is nil.
func barChart(title, ylabel string, categories []string, groups []barGroup) (template.HTML, []legendKey, error) {
	p := newPlot(title, ylabel)
	p.Add(plotter.NewGrid())
	w := vg.Points(14)
	any := false
	var keys []legendKey
	for gi, g := range groups {
		vals := make(plotter.Values, len(g.Values))
		for i, v := range g.Values {
			if v != nil {
				vals[i], any = *v, true
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return "", nil, fmt.Errorf("chart %q: %w", title, err)
		}
		bars.Color = g.Color
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(float64(gi)-float64(len(groups)-1)/2)
		p.Add(bars)
		keys = append(keys, legendKey{g.Name, g.Color})
	}
	if !any {
		return "", nil, nil
	}
	p.NominalX(categories...)
	// Room for the outer bars of each group, and above the tallest bar.
	half := float64(len(groups)) / 2 * 0.35
	p.X.Min, p.X.Max = -0.5-half, float64(len(categories)-1)+0.5+half
	p.Y.Min = 0
	p.Y.Max *= 1.08
	svg, err := writeSVG(p, chartW, chartH)
	return svg, keys, err
}

// legendKey is one legend entry; the legend is HTML beside the chart, so
// it never hides data and reads as text.
type legendKey struct {
	Name  string
	Color color.Color
}

// CSS is the entry's colour as #rrggbb.
func (k legendKey) CSS() string {
	r, g, b, _ := k.Color.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// newPlot is a plot with the report's font sizes.
func newPlot(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(9.5)
		a.Tick.Label.Font.Size = vg.Points(8.5)
	}
	return p
}

// svgFont is the font style gonum writes on every <text>: the page's CSS
// sets it once.
const svgFont = "font-family:Liberation Serif;font-variant:normal;font-weight:normal;font-style:normal;"

var (
	svgProlog = regexp.MustCompile(`(?s)^.*?<svg `)
	svgSize   = regexp.MustCompile(`width="[^"]*" height="[^"]*" `)
	svgNS     = regexp.MustCompile(`\s*xmlns(:xlink)?="[^"]*"`)
)

// writeSVG renders p and trims the output to an inline <svg> element:
// no XML prolog, no namespace URLs (an inline SVG in HTML needs none), a
// viewBox that scales to the page width, the font in the page's CSS
// rather than on every text.
func writeSVG(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	// A margin on the right: the last x tick's label is centred on the
	// axis's end and would reach past the drawing.
	p.Draw(draw.Crop(draw.New(c), 0, -vg.Points(9), 0, 0))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("svg: %w", err)
	}
	s := buf.String()
	class := "chart"
	if w < chartW {
		class = "chart half"
	}
	s = svgProlog.ReplaceAllString(s, `<svg class="`+class+`" role="img" overflow="visible" `)
	s = svgSize.ReplaceAllString(s, "")
	s = svgNS.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, svgFont, "")
	s = strings.TrimSpace(s)
	// Content built from the gonum output only; text is escaped by svgo.
	return template.HTML(s), nil // #nosec G203 -- generated SVG, no user markup
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

// chart is one drawn chart with its legend, or why it is not drawn.
type chart struct {
	SVG     template.HTML
	Legend  []legendKey
	Caption string
	Missing string
}
