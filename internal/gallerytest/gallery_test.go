package gallerytest

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

//go:embed inspect.js
var inspectJS string

var update = flag.Bool("update", false, "rewrite the plugin catalog screenshots under src/img/")

const (
	viewportWidth  = 1024
	viewportHeight = 900
	// catalogDir is src/img/ seen from this package.
	catalogDir = "../../src/img"
)

// twoFrames resolves after the browser has drawn two more frames, so
// whatever React committed last is laid out and painted.
const twoFrames = `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`

func TestGallery(t *testing.T) {
	dir := os.Getenv("GALLERY_DIR")
	if dir == "" {
		t.Skip("GALLERY_DIR is unset: `mage gallery` builds the gallery (npm run build:gallery) and runs this test on it")
	}
	if _, err := os.Stat(filepath.Join(dir, "gallery.js")); err != nil {
		t.Fatalf("GALLERY_DIR=%s holds no built gallery (npm run build:gallery): %v", dir, err)
	}
	out := os.Getenv("GALLERY_OUT")
	if out == "" {
		out = filepath.Join(dir, "screenshots")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	browser := newBrowser(t)

	ids := pageStates(t, browser, srv.URL)
	want := make([]string, len(cases))
	for i, c := range cases {
		want[i] = c.id
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("the gallery has states\n  %v\nthe test knows\n  %v", ids, want)
	}

	start := time.Now()
	// The themes run side by side, each in its own tab; the states of one
	// theme run one after another.
	t.Run("themes", func(t *testing.T) {
		for _, theme := range []string{"light", "dark"} {
			t.Run(theme, func(t *testing.T) {
				t.Parallel()
				for _, c := range cases {
					t.Run(c.id, func(t *testing.T) {
						checkState(t, browser, srv.URL, theme, c, out)
					})
				}
			})
		}
	})
	t.Logf("%d states in 2 themes in %.1f s; screenshots in %s", len(cases), time.Since(start).Seconds(), out)
}

// newBrowser starts Debian's Chromium headless with a fresh profile and no
// network of its own (no QUIC, component updates, sync or background
// requests); the only page it loads is the gallery on 127.0.0.1.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(bin); err != nil {
		// Never a skip: CI installs chromium (scripts/setup.sh).
		t.Fatalf("no browser at %s (apt-get install chromium, or set CHROMIUM): %v", bin, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(viewportWidth, viewportHeight),
		// Run start times are shown in the browser's zone; the cases expect UTC.
		chromedp.Env("TZ=UTC"),
	)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return bctx
}

// pageStates is the ids of the states the gallery page offers.
func pageStates(t *testing.T, browser context.Context, base string) []string {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/index.html?state=none")); err != nil {
		t.Fatal(err)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.gallery.states.map((s) => s.id)`))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

type rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

type inspection struct {
	Problems []string `json:"problems"`
	Clip     rect     `json:"clip"`
}

type tabStops struct {
	Stops     []string `json:"stops"`
	Focusable int      `json:"focusable"`
}

type focus struct {
	Stop  int    `json:"stop"`
	What  string `json:"what"`
	Shown bool   `json:"shown"`
}

// checkState loads one state alone in a new tab and checks it: its layout
// and contents (inspect.js), the console, a screenshot, and the Tab order.
func checkState(t *testing.T, browser context.Context, base, theme string, c galleryCase, out string) {
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	console := collectConsole(tab)
	// One state that hangs fails alone, not every state after it.
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()

	url := fmt.Sprintf("%s/index.html?state=%s&theme=%s", base, c.id, theme)
	load := func() {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(viewportWidth, viewportHeight),
			// Each tab acts as the focused window, as the only one a user looks at.
			chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
				_, err := cdp.Call(ctx, tt, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
				return err
			}),
			chromedp.Navigate(url),
			chromedp.Poll[chromedp.Void](`window.gallery !== undefined && window.gallery.ready()`,
				chromedp.WithPollingTimeout(30*time.Second)),
			chromedp.Evaluate[chromedp.Void](inspectJS),
			chromedp.Evaluate[chromedp.Void](twoFrames, chromedp.EvalAwaitPromise),
		)
		if err != nil {
			t.Fatalf("loading %s: %v", url, err)
		}
	}
	load()

	clip := inspect(t, ctx, map[string]any{
		"state":   c.id,
		"labels":  c.labels,
		"values":  c.values,
		"checked": c.checked,
		"hidden":  c.hidden,
		"texts":   c.texts,
	})
	if c.menu == "" {
		saveScreenshot(t, ctx, clip, theme, c, out)
	}
	// Focus order is the same in both themes; it is walked once, in the light one.
	if theme == "light" {
		checkTabOrder(t, ctx)
	}
	if c.menu != "" {
		openMenu(t, ctx, c.menu)
		clip = inspect(t, ctx, map[string]any{"state": c.id, "menuTexts": c.menuTexts})
		saveScreenshot(t, ctx, clip, theme, c, out)
	}

	for _, m := range console() {
		t.Errorf("console %s", m)
	}
}

// inspect runs inspect.js's checks with spec on the page, reports each
// problem, and returns the region to capture: the editor, with its open menu.
func inspect(t *testing.T, ctx context.Context, spec map[string]any) rect {
	t.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[inspection](fmt.Sprintf(`window.galleryInspect(%s)`, js)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got.Problems {
		t.Error(p)
	}
	return got.Clip
}

// saveScreenshot writes the PNG of clip to out as <theme>-<state>.png, and
// with -update a catalog state's light one to src/img/ too.
func saveScreenshot(t *testing.T, ctx context.Context, clip rect, theme string, c galleryCase, out string) {
	t.Helper()
	png, err := screenshot(ctx, clip)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, theme+"-"+c.id+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if *update && theme == "light" && c.catalog != "" {
		if err := os.WriteFile(filepath.Join(catalogDir, c.catalog), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// collectConsole gathers the console of the tab from now on; calling the
// returned func closes the tab and returns the errors and warnings (React's
// warnings are console.error calls), uncaught exceptions and browser-log
// errors such as failed loads.
func collectConsole(ctx context.Context) func() []string {
	var (
		mu   sync.Mutex
		msgs []string
	)
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				if knownWarning(m) {
					continue
				}
				mu.Lock()
				msgs = append(msgs, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		if err := chromedp.Cancel(ctx); err != nil {
			msgs = append(msgs, "closing the tab: "+err.Error())
		}
		<-done
		mu.Lock()
		defer mu.Unlock()
		return msgs
	}
}

// knownWarning tells the one console message that is not the plugin's and
// cannot be fixed from it: @grafana/ui 12.4's Combobox passes `disabled` to
// downshift 9's getItemProps for an info option (the run picker's "Could
// not list runs" line), which downshift's development build warns about on
// each render. Grafana's production build has no such warning.
func knownWarning(m chromedp.ConsoleMessage) bool {
	return m.Type == chromedp.ConsoleWarning &&
		strings.HasPrefix(m.Text, `Passing "disabled" as an argument to getItemProps is not supported anymore.`)
}

// openMenu clicks the combobox labelled label, as a user would, and waits
// for its listbox to be drawn.
func openMenu(t *testing.T, ctx context.Context, label string) {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`Array.from(document.querySelectorAll('label')).find((l) => l.textContent.trim() === %q)?.htmlFor ?? ''`, label)))
	if err != nil || id == "" {
		t.Fatalf("no control labelled %q to open (%v)", label, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.ID(id)),
		chromedp.Poll[chromedp.Void](`window.galleryMenuOpen()`, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate[chromedp.Void](twoFrames, chromedp.EvalAwaitPromise),
	)
	if err != nil {
		t.Fatalf("opening %q: %v", label, err)
	}
}

// screenshot captures the page region clip (page coordinates) as a PNG.
func screenshot(ctx context.Context, clip rect) ([]byte, error) {
	if clip.W < 1 || clip.H < 1 {
		return nil, fmt.Errorf("nothing to capture: %+v", clip)
	}
	yes := true
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format:                page.CaptureScreenshotFormatPng,
		Clip:                  &page.Viewport{X: clip.X, Y: clip.Y, Width: clip.W, Height: clip.H, Scale: 1},
		FromSurface:           &yes,
		CaptureBeyondViewport: &yes,
	})
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

// checkTabOrder presses Tab from the top of the page until focus leaves it,
// and checks that focus met every input (inspect.js's tab stops) once each,
// in document order, each drawn when focused. Buttons, links and tooltips
// in between are allowed.
func checkTabOrder(t *testing.T, ctx context.Context) {
	t.Helper()
	stops, err := chromedp.Run(ctx, chromedp.Evaluate[tabStops](`window.galleryMarkTabStops()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(stops.Stops) == 0 {
		t.Fatal("no input to tab to")
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`)); err != nil {
		t.Fatal(err)
	}
	var reached []int
	var trail []string
	for range stops.Focusable + 2 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		f, err := chromedp.Run(ctx, chromedp.Evaluate[focus](`window.galleryFocused()`))
		if err != nil {
			t.Fatal(err)
		}
		if f.Stop == -2 {
			break
		}
		trail = append(trail, f.What)
		if f.Stop < 0 {
			continue
		}
		if !f.Shown {
			t.Errorf("focus on %s, which is not drawn", f.What)
		}
		if len(reached) == 0 || reached[len(reached)-1] != f.Stop {
			reached = append(reached, f.Stop)
		}
	}
	want := make([]int, len(stops.Stops))
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(reached, want) {
		t.Errorf("Tab reached stops %v, want %v, of:\n  %s\nfocus went:\n  %s",
			reached, want, strings.Join(stops.Stops, "\n  "), strings.Join(trail, "\n  "))
	}
}
