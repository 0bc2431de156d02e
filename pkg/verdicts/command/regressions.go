package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// maxAcksBytes bounds an acks.yaml.
const maxAcksBytes = 1 << 20

// RegressionsOptions are the flags of `density regressions`.
type RegressionsOptions struct {
	Store, TestName, Keys, Since, Acks, Cohort string
	JSON                                       bool
	Window, MinRuns, FailRecent                int
	PValue, MinChangePct                       float64
}

// AddRegressionsFlags declares the regressions' flags on fs, bound to o;
// --store defaults to $STORE.
func AddRegressionsFlags(fs *pflag.FlagSet, o *RegressionsOptions, getenv func(string) string) {
	def := verdicts.DefaultOptions()
	cli.Store{Store: &o.Store, DefaultStore: getenv("STORE")}.AddTo(fs)
	fs.StringVar(&o.TestName, "test-name", "", "test name whose runs are searched")
	fs.StringVar(&o.Keys, "keys", "", "comma-separated `keys` (default every numeric *_summary key with a direction)")
	o.Since = model.Duration(verdicts.DefaultSince).String()
	fs.Var((*promDuration)(&o.Since), "since", "exit 4 for an unacknowledged regression at a run started within this Prometheus duration (30d, 12h)")
	fs.BoolVar(&o.JSON, "json", false, "print JSON")
	fs.StringVar(&o.Acks, "acks", "", "acknowledgements `file` (default runs/<test_name>/acks.yaml in the store)")
	fs.StringVar(&o.Cohort, "cohort", "", "comma-separated trial_summary `keys` that also separate cohorts")
	fs.IntVar(&o.Window, "window", def.Window, "points analysed at once")
	fs.Float64Var(&o.PValue, "p-value", def.PValue, "a split is kept when p is below this")
	fs.IntVar(&o.MinRuns, "min-runs", def.MinRuns, "least runs on each side of a change (1 judges the newest run alone)")
	fs.Float64Var(&o.MinChangePct, "min-change-pct", def.MinChangePct, "least change of the means, percent")
	fs.IntVar(&o.FailRecent, "fail-recent", 0, "narrow exit 4 to a regression at one of the newest `N` runs of its cohort (0: any within --since)")
	cli.SetGroup(fs, cli.GroupRun, "test-name")
	cli.SetGroup(fs, cli.GroupVerdicts, "keys", "cohort", "since", "fail-recent", "acks", "window", "p-value", "min-runs", "min-change-pct")
	cli.SetGroup(fs, cli.GroupOutput, "json")
}

// promDuration is a Prometheus duration flag (30d, 12h) kept as typed:
// the command parses it, so that a bad one is its usage error.
type promDuration string

func (d *promDuration) String() string { return string(*d) }

// Type names the value in the help.
func (d *promDuration) Type() string { return "duration" }

// Set keeps v as typed.
func (d *promDuration) Set(v string) error {
	*d = promDuration(v)
	return nil
}

// RegressionsCommand is `density regressions --store URL --test-name NAME`.
func RegressionsCommand(env Env) cli.Command {
	var o RegressionsOptions
	fs := cli.NewFlagSet("density regressions")
	AddRegressionsFlags(fs, &o, env.Getenv)
	return cli.Command{
		Use:   "regressions --store URL --test-name NAME [flags]",
		Short: "change points across the stored runs of a test name (exit 4 on an unacknowledged regression)",
		Long: `Finds the change points of every key across the stored runs of a test name
(per cohort), with the acknowledgements of acks.yaml. Exit 4 while an
unacknowledged regression lies within --since (default 30d): like a failing
test, it fails every night until it is acknowledged in acks.yaml or ages
out. --fail-recent N narrows that to the newest N runs of its cohort.`,
		Flags: fs,
		Run:   func(ctx context.Context, args []string) int { return RunRegressions(ctx, o, args, env) },
	}
}

// RunRegressions searches the change points o asks for (args must be
// empty).
func RunRegressions(ctx context.Context, o RegressionsOptions, args []string, env Env) int {
	env.Stderr = cli.Text(env.Stderr)
	code, err := runRegressions(ctx, o, args, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "density regressions: %v\n", err)
	}
	return code
}

func runRegressions(ctx context.Context, o RegressionsOptions, args []string, env Env) (int, error) {
	if err := o.check(args); err != nil {
		return cli.ExitUsage, err
	}
	rule, err := o.failRule(env.Now)
	if err != nil {
		return cli.ExitUsage, err
	}
	var acks []verdicts.Ack
	if o.Acks != "" {
		if acks, err = readAcksFile(o.Acks); err != nil {
			return cli.ExitUsage, err
		}
	}
	s, err := runs.OpenStore(ctx, o.Store)
	if err != nil {
		return cli.ExitUsage, err
	}
	defer s.Close()
	if o.Acks == "" {
		data, err := s.ReadTestFile(ctx, o.TestName, "acks.yaml", maxAcksBytes)
		if err != nil {
			return cli.ExitWrite, err
		}
		if acks, err = verdicts.ParseAcks(data); err != nil {
			return cli.ExitUsage, fmt.Errorf("acks.yaml in the store: %w", err)
		}
	}
	all, err := verdicts.LoadTest(ctx, s, o.TestName, 0)
	if err != nil {
		return cli.ExitWrite, err
	}
	var ks []string
	if o.Keys != "" {
		ks = splitList(o.Keys)
	}
	vo := verdicts.Options{Window: o.Window, PValue: o.PValue, MinRuns: o.MinRuns, MinChangePct: o.MinChangePct}
	cps := verdicts.ChangePoints(verdicts.Cohorts(all, splitList(o.Cohort)), ks, vo, acks)
	if err := o.print(env.Stdout, len(all), cps); err != nil {
		return cli.ExitWrite, err
	}
	if failing := verdicts.Failing(cps, rule); len(failing) > 0 {
		o.printFailing(env.Stderr, failing)
		return cli.ExitRegression, nil
	}
	return cli.ExitOK, nil
}

// check refuses arguments, missing required flags and out-of-range numbers.
func (o RegressionsOptions) check(args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected argument %q", args[0])
	case o.Store == "" || o.TestName == "":
		return fmt.Errorf("--store and --test-name are required")
	case o.Window < 2 || o.MinRuns < 1 || o.PValue <= 0 || o.PValue > 1 || o.MinChangePct < 0 || o.FailRecent < 0:
		return fmt.Errorf("--window ≥ 2, --min-runs ≥ 1, 0 < --p-value ≤ 1, --min-change-pct ≥ 0, --fail-recent ≥ 0")
	}
	return nil
}

// failRule is the rule of exit 4: the whole history is searched (a change
// needs the runs before it); --since only decides which regressions fail.
func (o RegressionsOptions) failRule(clock func() time.Time) (verdicts.FailRule, error) {
	since, err := model.ParseDuration(o.Since)
	if err != nil {
		return verdicts.FailRule{}, fmt.Errorf("--since: %v", err)
	}
	now := time.Now
	if clock != nil {
		now = clock
	}
	return verdicts.FailRule{Since: now().Add(-time.Duration(since)).Unix(), Recent: o.FailRecent}, nil
}

// readAcksFile reads the acknowledgements of --acks.
func readAcksFile(path string) ([]verdicts.Ack, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the --acks file the operator named
	if err != nil {
		return nil, fmt.Errorf("--acks: %v", err)
	}
	return verdicts.ParseAcks(data)
}

// print writes the change points as JSON or as text lines.
func (o RegressionsOptions) print(stdout io.Writer, nRuns int, cps []verdicts.ChangePoint) error {
	if o.JSON {
		data, err := json.MarshalIndent(struct {
			TestName     string                 `json:"test_name"`
			Runs         int                    `json:"runs"`
			ChangePoints []verdicts.ChangePoint `json:"change_points"`
		}{o.TestName, nRuns, cps}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", data)
		return nil
	}
	w := cli.Text(stdout)
	fmt.Fprintf(w, "%s: %d runs, %d change points\n", cli.Escape(o.TestName), nRuns, len(cps))
	for _, cp := range cps {
		line := fmt.Sprintf("%s at run %s (%s..%s): mean %.4g -> %.4g, p=%.3g, cohort %q",
			cli.Escape(cp.Title()), cli.Escape(cp.Run), cli.Escape(cp.PreviousTag), cli.Escape(cp.Tag), cp.MeanBefore, cp.MeanAfter, cp.PValue, cp.Cohort)
		if cp.Acknowledged {
			line += ", acknowledged: " + cli.Escape(cp.AckReason)
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// printFailing names the unacknowledged regressions that fail the command.
func (o RegressionsOptions) printFailing(stderr io.Writer, failing []verdicts.ChangePoint) {
	within := "within " + o.Since
	if o.FailRecent > 0 {
		within += fmt.Sprintf(" at the newest %d runs", o.FailRecent)
	}
	fmt.Fprintf(stderr, "density regressions: %d unacknowledged regression(s) %s (acknowledge in acks.yaml):\n", len(failing), within)
	for _, cp := range failing {
		fmt.Fprintf(stderr, "  %s at run %s, cohort %q\n", cp.Title(), cp.Run, cp.Cohort)
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
