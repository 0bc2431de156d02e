// Command density exports server-side ground truth of a Substrate benchmark
// run (server_summary.json and stats.jsonl rows) from Prometheus and
// Kubernetes, with the same engine as the Grafana datasource.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/substrate/density/pkg/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line and returns the process exit code (pkg/cli):
// 0 success, 1 artifacts could not be written (or logs read), 2 usage
// error (an unknown command or flag, a bad value: one line on stderr), 3 a
// gate failed, 4 an unacknowledged regression within --since (regressions).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	var code exitCode
	switch {
	case err == nil:
		return cli.ExitOK
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintf(cli.Text(stderr), "%s: %v\n", cmd.CommandPath(), cli.FlagError(err))
		return cli.ExitUsage
	}
}

// exitCode carries a subcommand's exit code through cobra; the command has
// already said why.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
