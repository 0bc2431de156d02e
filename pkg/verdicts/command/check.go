package command

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// Env is what a subcommand may touch of the process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Now is the clock of `regressions --since` (nil: time.Now).
	Now func() time.Time
}

// DefaultEnv is the process's environment.
func DefaultEnv(stdout, stderr io.Writer) Env {
	return Env{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
}

// CheckOptions are the inputs of a gates check.
type CheckOptions struct {
	Gates    string // path of the gates file
	RunDir   string
	Store    string
	Run      string // store run id (with Store)
	Out      string // directory for the rows of a stored run
	JUnit    string
	Baseline BaselineFlags
}

// Gated is a gates file evaluated on a run, ready to be written.
type Gated struct {
	Run     *verdicts.Run
	Results []verdicts.GateResult
	Rows    []artifact.Row
}

// Failed reports whether a gate failed.
func (g Gated) Failed() bool { return verdicts.Summarise(g.Results).Failed > 0 }

// ReadGates reads and validates a gates file (errors are usage errors).
func ReadGates(path string) (verdicts.Gates, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return verdicts.Gates{}, cli.Usagef("--gates: %v", err)
	}
	gs, err := verdicts.ParseGates(data)
	if err != nil {
		return verdicts.Gates{}, cli.Usagef("--gates %s: %v", path, err)
	}
	return gs, nil
}

// Evaluate judges gs on run against the baseline named by bf; a
// regression gate without a baseline is a usage error.
func Evaluate(ctx context.Context, gs verdicts.Gates, run *verdicts.Run, bf BaselineFlags, store string) (Gated, error) {
	if gs.NeedsBaseline() && !bf.Set() {
		return Gated{}, cli.Usagef("a gate has max_regression_pct: pass --baseline DIR or --baseline-run ID|latest")
	}
	base, err := bf.Load(ctx, run, store)
	if err != nil {
		return Gated{}, err
	}
	rs := verdicts.Evaluate(gs, run, base)
	return Gated{Run: run, Results: rs, Rows: verdicts.GateRows(rs, run.Timestamp, run.Tag, run.TestName)}, nil
}

// WriteJUnit writes the JUnit XML of g to path atomically.
func WriteJUnit(g Gated, path string) error {
	data, err := verdicts.JUnit(g.Results, g.Run.TestName)
	if err != nil {
		return err
	}
	return artifact.WriteFileAtomic(path, data, 0o644)
}

// WriteRows puts the gate family into dir's stats.jsonl, replacing an
// earlier gate family of the same run in place (else appended last).
func WriteRows(ctx context.Context, g Gated, dir string) error {
	match := verdicts.MatchGateRows(g.Run.Timestamp, g.Run.Tag, g.Run.TestName)
	_, err := artifact.ReplaceRows(ctx, filepath.Join(dir, "stats.jsonl"), match, g.Rows...)
	return err
}

// PrintResults writes one line per gate and the summary.
func PrintResults(w io.Writer, g Gated) {
	for _, r := range g.Results {
		v := "null"
		if r.Value != nil {
			v = artifact.FormatFloat(*r.Value)
		}
		line := fmt.Sprintf("gate %s = %s: %s", r.Gate.Key, v, r.Verdict)
		if r.Reason != "" {
			line += " (" + r.Reason + ")"
		}
		fmt.Fprintln(w, line)
	}
	s := verdicts.Summarise(g.Results)
	fmt.Fprintf(w, "gates: %d, passed %d, failed %d: %s\n", s.Gates, s.Passed, s.Failed, s.Verdict())
}

// RunCheck is `density check` and `mage check` after flag parsing.
func RunCheck(ctx context.Context, o CheckOptions, env Env) int {
	env.Stdout, env.Stderr = cli.Text(env.Stdout), cli.Text(env.Stderr)
	code, err := runCheck(ctx, o, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "density check: %v\n", err)
	}
	return code
}

func runCheck(ctx context.Context, o CheckOptions, env Env) (int, error) {
	if o.Gates == "" {
		return cli.ExitUsage, cli.Usagef("--gates FILE (or GATES) is required")
	}
	gs, err := ReadGates(o.Gates)
	if err != nil {
		return cli.ExitUsage, err
	}
	if o.RunDir != "" && o.Run != "" {
		return cli.ExitUsage, cli.Usagef("--run-dir and --run are exclusive")
	}
	// The gate rows are written in --run-dir (or --out): a file there that
	// is a symbolic link stops the check before anything is read or
	// written (export.md; exit 1).
	if dir := cmp.Or(o.RunDir, o.Out); dir != "" {
		if err := artifact.RefuseSymlinksIn(dir); err != nil {
			return cli.ExitWrite, err
		}
	}
	var run *verdicts.Run
	switch {
	case o.RunDir != "":
		if run, err = loadDir(o.RunDir); err != nil {
			return cli.ExitUsage, err
		}
	case o.Run != "" && o.Store != "":
		s, err := runs.OpenStore(ctx, o.Store)
		if err != nil {
			return cli.ExitUsage, cli.Usagef("%v", err)
		}
		run, err = loadStoreRun(ctx, s, o.Run)
		s.Close()
		if err != nil {
			return cli.ExitFor(err), err
		}
	default:
		return cli.ExitUsage, cli.Usagef("pass --run-dir DIR, or --store URL --run ID")
	}
	g, err := Evaluate(ctx, gs, run, o.Baseline, o.Store)
	if err != nil {
		return cli.ExitFor(err), err
	}
	PrintResults(env.Stdout, g)
	dir := o.RunDir
	if dir == "" {
		dir = o.Out
	}
	if dir != "" {
		if err := WriteRows(ctx, g, dir); err != nil {
			return cli.ExitWrite, err
		}
	} else {
		fmt.Fprintln(env.Stderr, "density check: gate rows not written (a stored run: pass --out DIR)")
	}
	if o.JUnit != "" {
		if err := WriteJUnit(g, o.JUnit); err != nil {
			return cli.ExitWrite, fmt.Errorf("--junit: %w", err)
		}
	}
	if g.Failed() {
		return cli.ExitGateFailed, nil
	}
	return cli.ExitOK, nil
}

// AddBaselineFlags declares --baseline, --baseline-run, --baseline-store
// (the baseline group of check, export and report).
func AddBaselineFlags(fs *pflag.FlagSet, b *BaselineFlags) {
	fs.StringVar(&b.Dir, "baseline", "", "run directory of the baseline run")
	fs.StringVar(&b.Run, "baseline-run", "", "store run id of the baseline run, or latest (newest other run of the test name and cohort)")
	fs.StringVar(&b.Store, "baseline-store", "", "results store of --baseline-run (default --store)")
}

// AddCheckFlags declares the check's flags on fs, bound to o; --gates
// defaults to $GATES. It is the one table of `density check` and `mage
// check` (CheckFromEnv).
func AddCheckFlags(fs *pflag.FlagSet, o *CheckOptions, getenv func(string) string) {
	fs.StringVar(&o.Gates, "gates", getenv("GATES"), "gates file (YAML; env GATES)")
	fs.StringVar(&o.RunDir, "run-dir", "", "run directory: its stats.jsonl is read and gets the gate rows")
	cli.Store{Store: &o.Store, Run: &o.Run}.AddTo(fs)
	fs.StringVar(&o.Out, "out", "", "directory whose stats.jsonl gets the gate rows of a stored run")
	fs.StringVar(&o.JUnit, "junit", "", "write JUnit XML (one test case per gate) to this file")
	AddBaselineFlags(fs, &o.Baseline)
	cli.SetGroup(fs, cli.GroupRun, "run-dir")
	cli.SetGroup(fs, cli.GroupVerdicts, "gates", "baseline", "baseline-run", "baseline-store")
	cli.SetGroup(fs, cli.GroupOutput, "out", "junit")
}

// CheckFromEnv builds the options of `mage check runDir`: every check flag
// from the environment variable named like it (GATES, STORE, RUN, OUT,
// JUNIT, BASELINE, BASELINE_RUN, BASELINE_STORE); runDir, when given, is
// --run-dir.
func CheckFromEnv(runDir string, getenv func(string) string) (CheckOptions, error) {
	var o CheckOptions
	fs := cli.NewFlagSet("mage check")
	AddCheckFlags(fs, &o, getenv)
	if err := cli.SetFromEnv(fs, getenv); err != nil {
		return o, cli.Usage(err)
	}
	if runDir != "" {
		o.RunDir = runDir
	}
	return o, nil
}

// CheckCommand is `density check [flags]`.
func CheckCommand(env Env) cli.Command {
	var o CheckOptions
	fs := cli.NewFlagSet("density check")
	AddCheckFlags(fs, &o, env.Getenv)
	return cli.Command{
		Use:   "check --gates FILE (--run-dir DIR | --store URL --run ID) [flags]",
		Short: "evaluate a gates file on a run: gate rows, JUnit, exit 3 when a gate fails",
		Long: `Evaluates a gates file (docs/verdicts.md) on a run directory or a stored run,
prints one line per gate, writes the gate rows to stats.jsonl (and JUnit
XML with --junit). Exit codes: 0 every gate passed, 1 not written, 2 usage
error, 3 a gate failed.`,
		Flags: fs,
		Run: func(ctx context.Context, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(env.Stderr, "density check: unexpected argument %q\n", args[0])
				return cli.ExitUsage
			}
			return RunCheck(ctx, o, env)
		},
	}
}
