package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	xdraw "golang.org/x/image/draw"
)

// The browser test renders reports in headless Chromium. It needs Debian's
// chromium, so it runs only with REPORT_BROWSER_TEST=1 (CI sets it);
// REPORT_SCREENSHOTS=DIR also writes the section screenshots and two
// thumbnails there; REPORT_BROWSER_PAGE=FILE also checks a report written
// elsewhere (e.g. demo-run/report.html from `mage demo`);
// REPORT_FIRSTSCREEN=FILE also writes that report's (else the demo-like
// one's) first screen there.

type rect struct{ X, Y, W, H float64 }

type chartInfo struct {
	Section string
	Rect    rect
	Colors  []string
}

// chartsJS lists every drawn chart with its page rectangle and the legend
// colours of its series.
const chartsJS = `Array.from(document.querySelectorAll('figure')).filter(f => f.querySelector('svg.chart')).map(f => {
  const r = f.querySelector('svg.chart').getBoundingClientRect();
  return {Section: f.closest('section').id, Rect: {X: r.x + scrollX, Y: r.y + scrollY, W: r.width, H: r.height},
    Colors: Array.from(f.querySelectorAll('.sw')).map(s => getComputedStyle(s).backgroundColor)};
})`

// firstScreenJS is what the first screen (the viewport before any
// scrolling) shows: the run's title and the verdict, with their bottoms.
const firstScreenJS = `(() => {
  const box = id => { const e = document.getElementById(id); if (!e) return {Text: '', Bottom: 1e9};
    const r = e.getBoundingClientRect(); return {Text: e.innerText, Bottom: r.bottom}; };
  return {Height: innerHeight, Run: box('run'), Verdict: box('verdict'), Frontiers: document.querySelectorAll('.big [data-key]').length};
})()`

type screenBox struct {
	Text   string
	Bottom float64
}

type firstScreen struct {
	Height       float64
	Run, Verdict screenBox
	Frontiers    int
}

// maxPrintedPages bounds the printed report (A4): the demo's is about half.
const maxPrintedPages = 15

const sectionsJS = `Array.from(document.querySelectorAll('section')).map(s => {
  const r = s.getBoundingClientRect();
  return {Section: s.id, Rect: {X: r.x + scrollX, Y: r.y + scrollY, W: r.width, H: r.height}};
})`

func TestBrowser(t *testing.T) {
	if os.Getenv("REPORT_BROWSER_TEST") != "1" {
		t.Skip("set REPORT_BROWSER_TEST=1 to render the report in headless Chromium")
	}
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("no browser at %s (apt-get install chromium, or set CHROMIUM): %v", bin, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("force-color-profile", "srgb"),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(900, 1200))
	defer acancel()
	browser, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	shots := os.Getenv("REPORT_SCREENSHOTS")
	for _, c := range []struct {
		name string
		in   Input
	}{{"demo", synthetic(20*60, 30)}, {"scale-6h", synthetic(6*3600, 500)}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if shots != "" {
				dir = filepath.Join(shots, c.name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			pageHTML, err := Render(c.in)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("report %d bytes, rendered in %v", len(pageHTML), time.Since(start))
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, pageHTML, 0o644); err != nil {
				t.Fatal(err)
			}
			first := ""
			if c.name == "demo" && os.Getenv("REPORT_BROWSER_PAGE") == "" {
				first = os.Getenv("REPORT_FIRSTSCREEN")
			}
			browse(t, browser, path, dir, c.name == "demo" && shots != "", c.in.Meta.TestName+" "+c.in.Meta.Tag, first)
		})
	}
	if extra := os.Getenv("REPORT_BROWSER_PAGE"); extra != "" {
		t.Run("page", func(t *testing.T) {
			path, err := filepath.Abs(extra)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if shots != "" {
				dir = filepath.Join(shots, "page")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			browse(t, browser, path, dir, false, "", os.Getenv("REPORT_FIRSTSCREEN"))
		})
	}
}

// browse opens the report at path and checks it; screenshots and the PDF
// go to dir (the first screen also to firstShot when set). run is the
// title's test name and tag ("" skips that check).
func browse(t *testing.T, browser context.Context, path, dir string, thumbs bool, run, firstShot string) {
	ctx, cancel := chromedp.NewContext(browser)
	defer cancel()

	var (
		mu       sync.Mutex
		requests []string
		console  []string
	)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	// Listen, not an Events iterator: its callback runs before the command
	// that caused the event returns, so every request is recorded by the
	// time the page has loaded (an iterator's goroutine may lag behind).
	if err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, r.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				mu.Lock()
				console = append(console, fmt.Sprintf("%s: %s", m.Type, m.Text))
				mu.Unlock()
			}
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatal(err)
	}
	// The first screen shows the run and its verdict.
	fs, err := chromedp.Run(ctx, chromedp.Evaluate[firstScreen](firstScreenJS))
	if err != nil {
		t.Fatal(err)
	}
	if fs.Run.Bottom > fs.Height || fs.Verdict.Bottom > fs.Height || fs.Frontiers == 0 {
		t.Errorf("first screen (%.0f px): run title ends at %.0f, verdict at %.0f, %d frontiers shown", fs.Height, fs.Run.Bottom, fs.Verdict.Bottom, fs.Frontiers)
	}
	if run != "" && !strings.Contains(fs.Run.Text, run) {
		t.Errorf("first screen title %q, want the run %q", fs.Run.Text, run)
	}
	if !strings.Contains(fs.Verdict.Text, "Gates") && !strings.Contains(fs.Verdict.Text, "gates") {
		t.Errorf("first screen verdict %q says nothing of the gates", fs.Verdict.Text)
	}
	t.Logf("first screen: %q; verdict %q", fs.Run.Text, fs.Verdict.Text)
	shot, err := capture(ctx, rect{W: 900, H: fs.Height})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{filepath.Join(dir, "first-screen.png"), firstShot} {
		if name == "" {
			continue
		}
		if err := os.WriteFile(name, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("first screen: %s", name)
	}

	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartInfo](chartsJS))
	if err != nil {
		t.Fatal(err)
	}
	sections, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartInfo](sectionsJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) < 10 {
		t.Errorf("%d charts drawn, want ≥ 10", len(charts))
	}

	// Every chart's plot holds pixels of each of its series colours.
	for i, c := range charts {
		png, err := capture(ctx, c.Rect)
		if err != nil {
			t.Fatalf("chart %d: %v", i, err)
		}
		img, err := decodePNG(png)
		if err != nil {
			t.Fatal(err)
		}
		for _, css := range c.Colors {
			want, ok := parseRGB(css)
			if !ok {
				t.Errorf("chart %d (%s): legend colour %q", i, c.Section, css)
				continue
			}
			if n := countNear(img, want, 24); n < 30 {
				t.Errorf("chart %d (%s): %d pixels of series colour %s", i, c.Section, n, css)
			}
		}
	}
	// The check is not met by axes, grid and text alone: the header
	// section, which draws no chart, holds (almost) no series blue.
	if hdr, err := capture(ctx, sections[0].Rect); err != nil {
		t.Fatal(err)
	} else if img, err := decodePNG(hdr); err != nil {
		t.Fatal(err)
	} else if n := countNear(img, [3]float64{0x1f, 0x77, 0xb4}, 24); n >= 30 {
		t.Errorf("the chartless header holds %d series-blue pixels: the colour check proves nothing", n)
	}
	for _, s := range sections {
		png, err := capture(ctx, s.Rect)
		if err != nil {
			t.Fatalf("section %s: %v", s.Section, err)
		}
		name := filepath.Join(dir, "section-"+s.Section+".png")
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes (%.0f×%.0f)", filepath.Base(name), len(png), s.Rect.W, s.Rect.H)
		if thumbs && (s.Section == "summary" || s.Section == "psi") {
			writeThumb(t, png, filepath.Join(dir, "thumb-"+s.Section+".png"))
		}
	}

	// Print: A4, about a dozen pages.
	yes := true
	pdf, err := chromedp.Call(ctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{PreferCSSPageSize: &yes, PrintBackground: &yes})
	if err != nil {
		t.Fatal(err)
	}
	pdfPath := filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(pdfPath, pdf.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	pages := pdfPages(t, pdfPath, pdf.Data)
	if pages > maxPrintedPages || pages < 3 {
		t.Errorf("PDF has %d pages, want 3 to %d", pages, maxPrintedPages)
	}
	t.Logf("PDF: %d pages, %d bytes", pages, len(pdf.Data))

	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 {
		t.Error("no request seen at all: the network listener saw not even the page")
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://"+path) && !strings.HasPrefix(u, "data:") {
			t.Errorf("network request to %s", u)
		}
	}
	if len(console) > 0 {
		t.Errorf("console: %s", strings.Join(console, "\n"))
	}
}

func capture(ctx context.Context, r rect) ([]byte, error) {
	yes := true
	res, err := chromedp.Call(ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Format: cdppage.CaptureScreenshotFormatPng, Clip: &cdppage.Viewport{X: r.X, Y: r.Y, Width: r.W, Height: r.H, Scale: 1},
		FromSurface: &yes, CaptureBeyondViewport: &yes,
	})
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

func decodePNG(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }

var rgbRe = regexp.MustCompile(`rgba?\((\d+),\s*(\d+),\s*(\d+)`)

func parseRGB(css string) ([3]float64, bool) {
	m := rgbRe.FindStringSubmatch(css)
	if m == nil {
		return [3]float64{}, false
	}
	var c [3]float64
	for i := range 3 {
		v, _ := strconv.Atoi(m[i+1])
		c[i] = float64(v)
	}
	return c, true
}

// countNear counts the pixels within dist (RGB distance) of c.
func countNear(img image.Image, c [3]float64, dist float64) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := math.Sqrt(sq(float64(r>>8)-c[0]) + sq(float64(g>>8)-c[1]) + sq(float64(bl>>8)-c[2]))
			if d <= dist {
				n++
			}
		}
	}
	return n
}

func sq(x float64) float64 { return x * x }

var pdfPageRe = regexp.MustCompile(`/Type\s*/Page[^s]`)

// pdfPages counts the pages with pdfinfo (poppler-utils), else by the
// document's page objects.
func pdfPages(t *testing.T, path string, data []byte) int {
	if out, err := exec.Command("pdfinfo", path).Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "Pages:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	t.Log("pdfinfo not available: counting /Type /Page objects")
	return len(pdfPageRe.FindAll(data, -1))
}

// writeThumb writes a 50 % scale copy of a PNG screenshot.
func writeThumb(t *testing.T, src []byte, path string) {
	img, err := decodePNG(src)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()/2, b.Dy()/2))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Over, nil)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, dst); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", filepath.Base(path), buf.Len())
}
