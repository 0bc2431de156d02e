// Command density exports server-side ground truth of a Substrate benchmark
// run (server_summary.json and stats.jsonl rows) from Prometheus and
// Kubernetes, with the same engine as the Grafana datasource.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/substrate/density/pkg/verdicts/command"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

const usage = `density: server-side density ground truth for Substrate benchmark runs

Usage:
  density <command> [flags]

Commands:
  export       harvest a run from Prometheus and Kubernetes into server_summary.json and stats.jsonl
  check        evaluate a gates file on a run: gate rows, JUnit, exit 3 when a gate fails
  compare      compare two runs key by key (Markdown or JSON)
  regressions  change points across the stored runs of a test name (exit 4 on a recent regression)
  report       write report.html from a run's stored artifacts (or re-make one with a baseline)
  phases       print the suspend/resume phase percentiles and slowest operations of pod log files
  ladder       --print-profile: print the built-in ladder profile (the figures of each ladder step) as YAML
  version      print the version and exit
  help         show this help

Run 'density <command> --help' for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the process exit code:
// 0 success, 1 artifacts could not be written (or logs read), 2 usage
// error, 3 a gate failed, 4 an unacknowledged regression at one of the
// newest runs.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "--version":
		fmt.Fprintf(stdout, "density %s\n", buildVersion())
		return 0
	case "export":
		return runExport(ctx, args[1:], stdout, stderr)
	case "check":
		return command.Check(ctx, args[1:], command.DefaultEnv(stdout, stderr))
	case "compare":
		return command.Compare(ctx, args[1:], command.DefaultEnv(stdout, stderr))
	case "regressions":
		return command.Regressions(ctx, args[1:], command.DefaultEnv(stdout, stderr))
	case "ladder":
		return runLadder(args[1:], stdout, stderr)
	case "phases":
		return runPhases(args[1:], stdout, stderr)
	case "report":
		return runReport(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "density: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
