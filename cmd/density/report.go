package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/report"
	"github.com/substrate/density/pkg/verdicts/command"
)

// reportFlags are `density report`'s inputs.
type reportFlags struct {
	runDir, store, runID, out, promURL string
	headers                            []string
	bearerTokenFile                    string
	timeout                            time.Duration
	maxConcurrency, maxResponseMB      int
	base                               command.BaselineFlags
}

// prometheus is the Prometheus flag group bound to f's fields.
func (f *reportFlags) prometheus() cli.Prometheus {
	return cli.Prometheus{URL: &f.promURL, Headers: &f.headers, BearerTokenFile: &f.bearerTokenFile,
		Timeout: &f.timeout, MaxConcurrency: &f.maxConcurrency, MaxResponseMB: &f.maxResponseMB,
		URLUsage: `Prometheus to read the PSI bands from when psi_series.json is missing (default the run's metadata prom_url, read without --header or bearer token; "none" reads nothing)`}
}

// addReportFlags declares `density report`'s flags on fs, bound to f.
func addReportFlags(fs *pflag.FlagSet, f *reportFlags) {
	fs.StringVar(&f.runDir, "run-dir", "", "run directory holding server_summary.json (and psi_series.json, stats.jsonl)")
	cli.Store{Store: &f.store, Run: &f.runID}.AddTo(fs)
	command.AddBaselineFlags(fs, &f.base)
	f.prometheus().AddTo(fs)
	fs.StringVar(&f.out, "out", "", "output directory (default the run directory; with --store ./<test_name>-<run_ts>)")
	// The baseline is a second run read, not a verdict: under Run.
	cli.SetGroup(fs, cli.GroupRun, "run-dir", "baseline", "baseline-run", "baseline-store")
	cli.SetGroup(fs, cli.GroupOutput, "out")
}

// check validates the flags and the positional arguments (none).
func (f reportFlags) check(args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected argument %q (flags only)", args[0])
	case (f.runDir == "") == (f.store == ""):
		return errors.New("give one of --run-dir or --store")
	case f.store != "" && f.runID == "":
		return errors.New("--store needs --run")
	case f.store == "" && f.runID != "":
		return errors.New("--run needs --store")
	case f.base.Run != "" && f.store == "" && f.base.Store == "":
		return errors.New("--baseline-run needs --baseline-store or --store")
	case f.base.Store != "" && f.base.Run == "":
		return errors.New("--baseline-store needs --baseline-run")
	case f.base.Dir != "" && f.base.Run != "":
		return errors.New("give one of --baseline or --baseline-run")
	}
	return f.prometheus().Check()
}

// reportCommand is `density report`: 0 ok, 1 the report could not be made
// or written, 2 usage error (an unreadable run or baseline included).
func reportCommand(stdout, stderr io.Writer) cli.Command {
	var f reportFlags
	fs := cli.NewFlagSet("density report")
	addReportFlags(fs, &f)
	return cli.Command{
		Use:   "report (--run-dir DIR | --store URL --run ID) [--baseline DIR | --baseline-run ID] [flags]",
		Short: "write report.html from a run's stored artifacts (or re-make one with a baseline)",
		Long: `Writes report.html from a run's stored artifacts (server_summary.json,
psi_series.json, the trial_summary row of stats.jsonl); a baseline adds a
compare column to every figure. Exit codes: 0 ok, 1 the report could not
be made or written, 2 usage error (including a run or baseline whose
artifacts cannot be read).`,
		Flags: fs,
		Run: func(ctx context.Context, args []string) int {
			if err := f.check(args); err != nil {
				fmt.Fprintf(stderr, "density report: %v\n", err)
				return cli.ExitUsage
			}
			return runReport(ctx, f, stdout, stderr)
		},
	}
}

// runReport makes the report (pkg/report) and maps its outcome to the
// exit code: 2 for an input that cannot be used, 1 for a report that
// could not be made or written.
func runReport(ctx context.Context, f reportFlags, stdout, stderr io.Writer) int {
	made, err := report.Make(ctx, report.Request{
		RunDir: f.runDir, Store: f.store, RunID: f.runID, Out: f.out,
		BaselineDir: f.base.Dir, BaselineStore: f.base.Store, BaselineRun: f.base.Run,
		Prometheus: f.psiPrometheus,
	})
	if err != nil {
		fmt.Fprintf(stderr, "density report: %v\n", err)
		return cli.ExitFor(err)
	}
	for _, n := range made.Notices {
		fmt.Fprintf(stdout, "notice: %s\n", n)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes, rendered in %v)\n", made.Path, made.Bytes, made.Elapsed.Round(time.Millisecond))
	return cli.ExitOK
}

// psiPrometheus is the Prometheus to read the PSI bands of a run without
// psi_series.json from: --prometheus-url with its credentials, else the
// run's recorded prom_url without any (whoever wrote the run into the
// store chose it); "none" or no URL reads nothing.
func (f reportFlags) psiPrometheus(recorded string) (promql.Config, string, error) {
	url, how := f.promURL, ""
	if url == "" {
		url = recorded
		how = ", the run's recorded prom_url, without credentials (they go only to --prometheus-url)"
	}
	if url == "" || url == "none" {
		return promql.Config{}, "", nil
	}
	var cfg promql.Config
	var err error
	if f.promURL != "" {
		cfg, err = f.prometheus().Config(os.Getenv)
	} else {
		cfg, err = f.prometheus().ConfigWithoutCredentials(url)
	}
	if err != nil {
		return promql.Config{}, "", err
	}
	cfg.URL = url
	return cfg, how, nil
}
