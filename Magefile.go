//go:build mage
// +build mage

// Targets for building, testing and running Substrate Density.
//
//	mage build:linux   backend binary into dist/ (the Grafana SDK targets)
//	mage testAll       every check CI runs (the README's test command)
//	mage gallery       the editors drawn in headless Chromium, with screenshots
//	mage fuzz          every fuzz target for FUZZTIME (default 5s) each
//	mage security      gosec, govulncheck (offline db) and tools/ lint (magefile_security.go)
//	mage export DIR    density export of a run directory (flags as env vars)
//	mage check DIR     density check of a run directory (GATES, BASELINE, JUNIT, ...)
//	mage demo          export the built-in demo run (the README's first command)
//	mage demoStore     a month of demo runs in ./demo-store (compare, regressions, dashboards)
//	mage demoServe     demoStore, then serve the demo run from a loopback Prometheus until Ctrl-C
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/substrate/density/internal/demo"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/verdicts/command"

	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"
)

// Default builds the linux backend (the full cross-platform build is `mage buildAll`).
var Default = build.Build.Linux

// TestAll runs every check: Go vet and format, the Go tests with the race
// detector (pkg, cmd and internal), a short pass of every fuzz target, the
// frontend type check, lint, tests and build, the editors in headless
// Chromium, and the linux backend build; Security (gosec, govulncheck) after
// the Go checks.
func TestAll() error {
	mg.SerialDeps(GoChecks, Security, GoTest, Fuzz, Frontend, Gallery, build.Build.Linux)
	return nil
}

// Fuzz runs every fuzz target of the repository for FUZZTIME each (default
// 5s: the seed corpora, what is committed under testdata/fuzz, and a few
// seconds of new inputs), so that a parser change that breaks its fuzz
// property does not land. scripts/fuzz.sh with FUZZTIME=60s or more is the
// long run for releases.
func Fuzz() error {
	fuzztime := os.Getenv("FUZZTIME")
	if fuzztime == "" {
		fuzztime = "5s"
	}
	return sh.RunWithV(map[string]string{"FUZZTIME": fuzztime}, "bash", "scripts/fuzz.sh")
}

// GoChecks runs go vet, fails on files gofmt would change, and runs
// golangci-lint (.golangci.yml).
func GoChecks() error {
	if err := sh.RunV("go", "vet", "./..."); err != nil {
		return err
	}
	out, err := sh.Output("gofmt", "-l", "pkg", "cmd", "internal", "Magefile.go")
	if err != nil {
		return err
	}
	if out != "" {
		return fmt.Errorf("gofmt would change:\n%s", out)
	}
	return sh.RunV(golangciLint(), "run", "--timeout", "10m", "./pkg/...", "./cmd/...", "./internal/...")
}

// golangciLint finds the linter scripts/setup.sh installs (GOPATH/bin may
// not be on PATH).
func golangciLint() string {
	if p, err := exec.LookPath("golangci-lint"); err == nil {
		return p
	}
	gopath, _ := sh.Output("go", "env", "GOPATH")
	return filepath.Join(gopath, "bin", "golangci-lint")
}

// GoTest runs every Go test with the race detector.
func GoTest() error {
	return sh.RunV("go", "test", "-race", "-count=1", "-timeout", "20m", "./...")
}

// Frontend type-checks, lints, tests and builds the frontend into dist/.
func Frontend() error {
	for _, script := range []string{"typecheck", "lint", "test:ci", "build"} {
		if err := sh.RunV("npm", "run", script); err != nil {
			return err
		}
	}
	return nil
}

// galleryDir is where `npm run build:gallery` writes the editor gallery
// (webpack.config.ts); never dist/.
const galleryDir = ".gallery-dist"

// Gallery builds the editor gallery (src/gallery) and drives it in headless
// Chromium (internal/gallerytest): every editor state in the light and dark
// theme, checked for layout, console errors, secrets in the DOM and Tab
// order, with a screenshot of each in .gallery-dist/screenshots/; then
// report.html in the same browser (pkg/report TestBrowser).
func Gallery() error {
	if err := sh.RunV("npm", "run", "build:gallery"); err != nil {
		return err
	}
	dir, err := filepath.Abs(galleryDir)
	if err != nil {
		return err
	}
	if err := sh.RunWithV(map[string]string{"GALLERY_DIR": dir},
		"go", "test", "-count=1", "-timeout", "10m", "-run", "^TestGallery$", "./internal/gallerytest/"); err != nil {
		return err
	}
	// report.html in the same browser: charts drawn, no network, A4 pages.
	return sh.RunWithV(map[string]string{"REPORT_BROWSER_TEST": "1"},
		"go", "test", "-count=1", "-timeout", "10m", "-run", "^TestBrowser$", "./pkg/report/")
}

// Demo generates the built-in demo run into ./demo-run, loads it into a
// Prometheus on 127.0.0.1, exports it and prints the artifacts and a summary.
func Demo(ctx context.Context) error {
	if code := demo.Export(ctx, "demo-run", os.Stdout, os.Stderr); code != cli.ExitOK {
		return mg.Fatalf(code, "demo: exit %d", code)
	}
	return nil
}

// DemoStore writes ./demo-store: a month of nightly runs of two tests from
// the demo run's artifacts, with planted regressions (one acknowledged), a
// microVM cohort, for compare, regressions, report --baseline-run and the
// dashboards.
func DemoStore(ctx context.Context) error {
	if code := demo.DemoStore(ctx, "demo-run", "demo-store", os.Stdout, os.Stderr); code != cli.ExitOK {
		return mg.Fatalf(code, "demoStore: exit %d", code)
	}
	return nil
}

// DemoServe writes the demo store, then serves the demo run from a
// Prometheus on 127.0.0.1 (for Grafana or the plugin) until Ctrl-C.
func DemoServe(ctx context.Context) error {
	mg.CtxDeps(ctx, DemoStore)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return demo.Serve(ctx, "demo-run", os.Stdout, os.Stderr)
}

// Export harvests the run in runDir like `density export --run-dir runDir`;
// every other flag comes from the environment variable named like it in
// upper snake case (PROMETHEUS_URL, ATELET_LAG_S, CLUSTER_FACTS=false, ...).
func Export(ctx context.Context, runDir string) error {
	o, err := export.FromEnv(runDir, os.Getenv)
	if err != nil {
		return mg.Fatalf(cli.ExitUsage, "mage export: %v", err)
	}
	if code := export.Run(ctx, o, export.DefaultEnv(os.Stdout, os.Stderr)); code != cli.ExitOK {
		return mg.Fatalf(code, "mage export: exit %d", code)
	}
	return nil
}

// Check evaluates a gates file on the run in runDir like `density check
// --run-dir runDir`; every other flag of `density check` comes from the
// environment variable named like it: GATES, BASELINE, BASELINE_RUN,
// BASELINE_STORE, STORE, JUNIT, OUT. A failed gate exits 3.
func Check(ctx context.Context, runDir string) error {
	o, err := command.CheckFromEnv(runDir, os.Getenv)
	if err != nil {
		return mg.Fatalf(cli.ExitUsage, "mage check: %v", err)
	}
	if code := command.RunCheck(ctx, o, command.DefaultEnv(os.Stdout, os.Stderr)); code != cli.ExitOK {
		return mg.Fatalf(code, "mage check: exit %d", code)
	}
	return nil
}
