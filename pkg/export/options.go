// Package export is the CI adapter of the engine: `density export` and
// `mage export` both call it, so there is one implementation of validation,
// the lag wait, the concurrent harvest and the artifact writes.
package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/verdicts/command"
)

// DefaultPrometheusURL is the in-cluster Prometheus service of the
// benchmarking namespace.
const DefaultPrometheusURL = "http://prometheus.benchmarking.svc.cluster.local:9090"

// Options are the export's inputs (export.md). Zero Start/End mean "take them
// from the run's files".
type Options struct {
	RunDir string
	Store  string
	RunID  string
	Out    string

	Start, End    int64
	Tag, TestName string
	Users         float64
	ActorsPerUser float64

	PrometheusURL   string
	Headers         []string
	BearerTokenFile string
	AteletLagS      int64
	Timeout         time.Duration
	MaxConcurrency  int
	MaxResponseMB   int

	ClusterFacts bool
	Kubeconfig   string
	Context      string

	WorkerPool      string
	WorkerNamespace string
	WorkerContainer string
	WorkerPodRegex  string
	AteletNamespace string
	AteletContainer string

	// PhaseBreakdown reads the timing breakdown records (default on);
	// PhaseBreakdownSet says it was given explicitly (a stored run reads
	// the live pod logs only then).
	PhaseBreakdown    bool
	PhaseBreakdownSet bool
	PhaseLogs         []string
	PhaseLogTimeout   time.Duration
	PhaseMaxLogMB     int

	Metadata string
	// Gates is a gates file (verdicts.md): the gate family is appended last
	// and a failed gate exits 3. Baseline serves max_regression_pct gates;
	// JUnit is where the JUnit XML of the gates goes ("" none).
	Gates    string
	Baseline command.BaselineFlags
	JUnit    string
	// Report writes report.html next to server_summary.json.
	Report  bool
	Replace bool
	Verbose bool
	Before  bool
	// NoWait skips the lag wait (tests and re-harvests of old runs never
	// wait anyway: the wait is until end+lag, which has passed).
	NoWait bool

	Ladder LadderOptions
}

// pathList is a repeatable path flag.
type pathList []string

func (p *pathList) String() string { return strings.Join(*p, ", ") }
func (p *pathList) Type() string   { return "path" }
func (p *pathList) Repeatable()    {}
func (p *pathList) Set(v string) error {
	if v == "" {
		return errors.New("empty path")
	}
	*p = append(*p, v)
	return nil
}

// The help of `density export`.
const (
	commandUse  = "export --run-dir DIR [flags]"
	commandLong = `Harvests a run from Prometheus and Kubernetes into server_summary.json,
psi_series.json and the stats.jsonl rows (docs/artifacts.md), from a run directory
or an archived run of a results store:

  density export --run-dir DIR [flags]
  density export --store URL --run ID [flags]
  density export --run-dir DIR --before    (the "before" snapshot, then exit)

Exit codes: 0 ok (also when Prometheus or Kubernetes were unreachable: their
fields are null), 1 artifacts not written, 2 usage error, 3 a gate failed.`
)

// NewCommand is `density export`: the flags of AddFlags, validated, then
// the export.
func NewCommand(env Env) cli.Command {
	var o Options
	fs := flagSet(&o)
	return cli.Command{
		Use:   commandUse,
		Short: "harvest a run from Prometheus and Kubernetes into server_summary.json and stats.jsonl",
		Long:  commandLong,
		Flags: fs,
		Run: func(ctx context.Context, args []string) int {
			if err := o.Complete(fs, args); err != nil {
				fmt.Fprintf(env.Stderr, "density export: %v\n", err)
				return cli.ExitUsage
			}
			return Run(ctx, o, env)
		},
	}
}

// prometheus is the Prometheus flag group bound to o's fields.
func (o *Options) prometheus() cli.Prometheus {
	return cli.Prometheus{URL: &o.PrometheusURL, DefaultURL: DefaultPrometheusURL, Headers: &o.Headers, BearerTokenFile: &o.BearerTokenFile,
		Timeout: &o.Timeout, MaxConcurrency: &o.MaxConcurrency, MaxResponseMB: &o.MaxResponseMB}
}

// AddFlags declares every export flag on fs, bound to o: the one table
// behind `density export`, ParseFlags and mage's FromEnv (environment
// variables named after the flags). Every bool that defaults to on also
// gets its hidden --no-X.
func AddFlags(fs *pflag.FlagSet, o *Options) {
	sel := harvest.DefaultSelectors()
	cli.Store{Store: &o.Store, Run: &o.RunID,
		StoreUsage: "results store URL (file://, gs://, s3://, azblob://) to re-harvest an archived run (with --run)"}.AddTo(fs)
	o.prometheus().AddTo(fs)
	cli.Kubernetes{ClusterFacts: &o.ClusterFacts, Kubeconfig: &o.Kubeconfig, Context: &o.Context}.AddTo(fs)
	fs.StringVar(&o.RunDir, "run-dir", "", "run directory where Locust wrote stats_history.csv and stats.csv, and where stats.jsonl lives")
	fs.StringVar(&o.Out, "out", "", "output directory (default the run directory; with --store ./<test_name>-<run_ts>)")
	fs.Int64Var(&o.Start, "start", 0, "run start, Unix seconds (default from the run's files)")
	fs.Int64Var(&o.End, "end", 0, "run end, Unix seconds (default from the run's files)")
	fs.StringVar(&o.Tag, "tag", "", "run tag, usually the commit under test (default from the results-store path)")
	fs.StringVar(&o.TestName, "test-name", "", "test name (default from the results-store path)")
	fs.Float64VarP(&o.Users, "users", "u", 0, "Locust -u user count, used only when stats_history.csv has no user counts")
	fs.Float64Var(&o.ActorsPerUser, "actors-per-user", 1, "actors each Locust user keeps alive (0 means 1)")
	fs.Int64Var(&o.AteletLagS, "atelet-lag-s", harvest.DefaultLagS, "seconds atelet metrics lag behind reality; snapshot edges shift by half")
	fs.StringVar(&o.WorkerPool, "worker-pool", sel.WorkerPool, "worker pool name (ate_workerpool_name)")
	fs.StringVar(&o.WorkerNamespace, "worker-namespace", sel.WorkerNamespace, "worker pod namespace")
	fs.StringVar(&o.WorkerContainer, "worker-container", sel.WorkerContainer, "worker container name")
	fs.StringVar(&o.WorkerPodRegex, "worker-pod-regex", sel.WorkerPodRegex, "worker pod name regex")
	fs.StringVar(&o.AteletNamespace, "atelet-namespace", sel.AteletNamespace, "atelet namespace")
	fs.StringVar(&o.AteletContainer, "atelet-container", sel.AteletContainer, "atelet container name")
	fs.BoolVar(&o.PhaseBreakdown, "phase-breakdown", true, "read the atelet and worker pod logs and add the suspend/resume phase percentiles (--no-phase-breakdown switches it off)")
	fs.Var((*pathList)(&o.PhaseLogs), "phase-logs", "read the timing breakdown records from this file or directory of *.log/*.json (kubectl logs dumps, a Cloud Logging export) instead of the Kubernetes API (repeatable)")
	fs.DurationVar(&o.PhaseLogTimeout, "phase-log-timeout", cluster.DefaultLogTimeout, "timeout of each pod log read")
	fs.IntVar(&o.PhaseMaxLogMB, "phase-max-log-mb", cluster.DefaultMaxLogBytes>>20, "most MiB read of one pod's log (the rest is cut, with a notice)")
	fs.StringVar(&o.Metadata, "metadata", "", "JSON object merged over $BENCHMARK_METADATA into trial_summary metadata_<key> fields")
	fs.StringVar(&o.Gates, "gates", "", "gates file (YAML, docs/verdicts.md): gate rows appended last, exit 3 when a gate fails (env GATES)")
	command.AddBaselineFlags(fs, &o.Baseline)
	fs.StringVar(&o.JUnit, "junit", "", "with --gates: write JUnit XML of the gates to this file")
	fs.BoolVar(&o.Report, "report", true, "write report.html next to server_summary.json (--no-report or REPORT=false skips it)")
	fs.BoolVar(&o.Replace, "replace", false, "rewrite this project's rows of the same run in stats.jsonl instead of appending")
	fs.BoolVar(&o.Verbose, "verbose", false, "print every PromQL query issued")
	fs.BoolVar(&o.Before, "before", false, "record the Kubernetes 'before' snapshot (cluster_before.json) in the run directory and exit")
	fs.BoolVar(&o.NoWait, "no-wait", false, "do not wait for end + atelet lag before reading")
	ladderFlags(fs, &o.Ladder)
	cli.AddNegations(fs)
	groupFlags(fs)
}

// groupFlags puts the export's own flags in their help sections (the
// shared groups put theirs).
func groupFlags(fs *pflag.FlagSet) {
	cli.SetGroup(fs, cli.GroupRun, "run-dir", "start", "end", "tag", "test-name", "users", "actors-per-user",
		"atelet-lag-s", "metadata", "before", "no-wait")
	cli.SetGroup(fs, cli.GroupKubernetes, "worker-pool", "worker-namespace", "worker-container", "worker-pod-regex",
		"atelet-namespace", "atelet-container")
	cli.SetGroup(fs, cli.GroupPhases, "phase-breakdown", "phase-logs", "phase-log-timeout", "phase-max-log-mb")
	cli.SetGroup(fs, cli.GroupLadder, "ladder", "ladder-profile", "ladder-trim-start-s", "ladder-trim-end-s", "log-tz",
		"ladder-resume-name", "ladder-pause-name", "ladder-ateapi-namespace", "ladder-ateapi-container",
		"ladder-postgres-namespace", "ladder-postgres-container", "ladder-fake-atelet-namespace",
		"ladder-fake-atelet-container", "ladder-min-achieved", "ladder-max-failure-ratio")
	cli.SetGroup(fs, cli.GroupVerdicts, "gates", "baseline", "baseline-run", "baseline-store", "junit")
	cli.SetGroup(fs, cli.GroupOutput, "out", "report", "replace", "verbose")
}

// flagSet is the export's flag set on o, quiet: errors are reported by the
// caller in one line.
func flagSet(o *Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("density export", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddFlags(fs, o)
	return fs
}

// ParseFlags parses `density export` arguments (as AddFlags declares
// them). --help writes the flag list to output and returns pflag.ErrHelp.
func ParseFlags(args []string, output io.Writer) (Options, error) {
	var o Options
	fs := flagSet(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			cli.WriteHelp(output, commandUse, commandLong, fs)
			return o, err
		}
		return o, cli.Usage(err)
	}
	return o, o.Complete(fs, fs.Args())
}

// Complete finishes Options parsed by a flag set of AddFlags: no
// positional arguments, whether --phase-breakdown was given, then every
// input validated.
func (o *Options) Complete(fs *pflag.FlagSet, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("unexpected argument %q (flags only)", args[0])
	}
	o.PhaseBreakdownSet = fs.Changed("phase-breakdown")
	return o.validate()
}

// FromEnv builds Options for `mage export [runDir]`: every flag is read from
// the environment variable named like it in upper snake case
// (--prometheus-url → PROMETHEUS_URL, --cluster-facts → CLUSTER_FACTS,
// --header → HEADER with headers separated by newlines, --phase-logs →
// PHASE_LOGS with one path per line).
func FromEnv(runDir string, getenv func(string) string) (Options, error) {
	var o Options
	fs := flagSet(&o)
	if err := cli.SetFromEnv(fs, getenv); err != nil {
		return o, cli.Usage(err)
	}
	if runDir != "" {
		o.RunDir = runDir
	}
	return o, o.Complete(fs, nil)
}

// validate checks every input before anything is read or written.
func (o *Options) validate() error {
	switch {
	case o.RunDir == "" && o.Store == "":
		return cli.Usagef("one of --run-dir or --store is required")
	case o.RunDir != "" && o.Store != "":
		return cli.Usagef("--run-dir and --store are exclusive")
	case o.Store != "" && o.RunID == "":
		return cli.Usagef("--store needs --run <test_name>/<run_ts>/<tag> or --run latest")
	case o.Store == "" && o.RunID != "":
		return cli.Usagef("--run needs --store")
	case o.Start < 0 || o.End < 0:
		return cli.Usagef("--start and --end are Unix seconds, not negative")
	case o.Start > 0 && o.End > 0 && o.End < o.Start:
		return cli.Usagef("--end %d is before --start %d", o.End, o.Start)
	case o.AteletLagS < 0:
		return cli.Usagef("--atelet-lag-s must not be negative")
	case o.Users < 0 || o.ActorsPerUser < 0:
		return cli.Usagef("--users and --actors-per-user must not be negative")
	case o.PhaseLogTimeout < 0:
		return cli.Usagef("--phase-log-timeout must not be negative")
	case o.PhaseMaxLogMB < 1:
		return cli.Usagef("--phase-max-log-mb must be at least 1")
	}
	if err := o.prometheus().Check(); err != nil {
		return cli.Usage(err)
	}
	if _, err := phaseLogFiles(o.PhaseLogs); err != nil {
		return err
	}
	if !endpoint.IsHTTP(o.PrometheusURL) {
		return cli.Usagef("--prometheus-url %q is not an http(s) URL", endpoint.Redact(o.PrometheusURL))
	}
	if o.RunDir != "" {
		st, err := os.Stat(o.RunDir)
		if err != nil {
			return cli.Usagef("run directory: %v", err)
		}
		if !st.IsDir() {
			return cli.Usagef("run directory %s is not a directory", o.RunDir)
		}
	}
	if o.BearerTokenFile != "" {
		if _, err := os.Stat(o.BearerTokenFile); err != nil {
			return cli.Usagef("--bearer-token-file: %v", err)
		}
	}
	return o.Ladder.validate()
}
