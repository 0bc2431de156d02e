package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/ladder"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
	"github.com/substrate/density/pkg/verdicts/command"
)

// Env is what the export takes from its surroundings; tests replace it.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	// Sleep waits d or until ctx is done (the lag wait).
	Sleep func(ctx context.Context, d time.Duration) error
	// Kube builds the Kubernetes client; nil uses cluster.NewClient.
	Kube func(cluster.Access) (kubernetes.Interface, error)
	// Terminal says stdout is a terminal (a live countdown instead of lines).
	Terminal bool
}

// DefaultEnv is the process's environment.
func DefaultEnv(stdout, stderr io.Writer) Env {
	term := false
	if f, ok := stdout.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			term = true
		}
	}
	return Env{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv, Now: time.Now, Sleep: sleepCtx, Terminal: term}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Main parses CLI arguments and runs the export; it returns the exit code.
func Main(ctx context.Context, args []string, env Env) int {
	return NewCommand(env).Main(ctx, args, env.Stdout, env.Stderr)
}

// Outcome is what an export wrote, for callers that print a summary.
type Outcome struct {
	Dir              string
	ServerSummary    string
	PSISeries        string // psi_series.json, next to ServerSummary
	Notices          string // notices.json, next to ServerSummary
	Report           string // report.html, next to ServerSummary; "" when not written
	StatsJSONL       string
	Result           *harvest.Result
	Trial            frontier.Measurements
	TrialWritten     bool
	Run              runs.Run
	PrometheusErrors int
	// Ladder is the ladder evaluation (nil: not a ladder run, or
	// --no-ladder); LadderWritten says its rows were written.
	Ladder        *ladder.Result
	LadderWritten bool
	// PhaseRows is the number of phase_* rows written, the summary included.
	PhaseRows int
}

// Run executes a validated export and returns the exit code.
func Run(ctx context.Context, o Options, env Env) int {
	_, code := Execute(ctx, o, env)
	return code
}

// Execute is Run returning what was written. It runs the export's steps
// in order: prepare (flags, gates, metadata), load (the run's files and
// window, then the atelet lag), read (Prometheus, Kubernetes, pod logs and
// the ladder, concurrently), print (the status lines) and write (the
// artifacts, then the gates' verdict).
func Execute(ctx context.Context, o Options, env Env) (*Outcome, int) {
	j := &job{o: o, env: env.withDefaults()}
	// Every line this prints is for a person: names in it are escaped.
	j.env.Stdout, j.env.Stderr = cli.Text(j.env.Stdout), cli.Text(j.env.Stderr)
	if err := j.prepare(); err != nil {
		return nil, j.usage(err)
	}
	// The export writes in the run directory (and --out): a file there
	// that is a symbolic link stops it before anything is read or written.
	if err := refuseLinks(j.o.RunDir, j.o.Out); err != nil {
		fmt.Fprintf(j.env.Stderr, "density export: %v\n", err)
		return nil, cli.ExitWrite
	}
	if j.o.Before {
		return nil, recordBefore(ctx, j.o, j.env)
	}
	if code := j.load(ctx); code != cli.ExitOK {
		return nil, code
	}
	if code := j.read(ctx); code != cli.ExitOK {
		return nil, code
	}
	j.print()
	return j.write(ctx)
}

// withDefaults fills the hooks a caller left nil with the real ones.
func (env Env) withDefaults() Env {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Sleep == nil {
		env.Sleep = sleepCtx
	}
	if env.Kube == nil {
		env.Kube = cluster.NewClient
	}
	return env
}

// job is one export between its steps.
type job struct {
	o   Options
	env Env

	// prepare
	gates    *verdicts.Gates
	metadata frontier.Metadata
	promCfg  promql.Config
	// load
	in     runInputs
	outDir string
	// read
	res    *harvest.Result
	after  cluster.AfterRun
	phased *phaseResult
	lad    *ladder.Result
}

// usage prints a usage error and returns its exit code.
func (j *job) usage(err error) int {
	fmt.Fprintf(j.env.Stderr, "density export: %v\n", err)
	return cli.ExitUsage
}

// prepare validates the options and reads what they name (the gates file,
// the baseline directory, metadata and request headers).
func (j *job) prepare() error {
	o, env := &j.o, j.env
	if err := o.validate(); err != nil {
		return err
	}
	if o.Gates == "" {
		o.Gates = env.Getenv("GATES")
	}
	if o.Gates != "" {
		gs, err := command.ReadGates(o.Gates)
		if err != nil {
			return err
		}
		if gs.NeedsBaseline() && !o.Baseline.Set() {
			return cli.Usagef("a gate has max_regression_pct: pass --baseline DIR or --baseline-run ID|latest")
		}
		if o.Baseline.Dir != "" && o.Baseline.Run != "" {
			return cli.Usagef("--baseline and --baseline-run are exclusive")
		}
		if o.Baseline.Dir != "" {
			if _, err := verdicts.LoadDir(o.Baseline.Dir); err != nil {
				return err
			}
		}
		j.gates = &gs
	} else if o.JUnit != "" {
		return cli.Usagef("--junit needs --gates")
	}
	var err error
	if j.metadata, err = frontier.ParseMetadata(env.Getenv("BENCHMARK_METADATA"), o.Metadata); err != nil {
		return cli.Usage(err)
	}
	if j.promCfg, err = o.prometheus().Config(env.Getenv); err != nil {
		return cli.Usage(err)
	}
	return nil
}

// load reads the run's files, prints its window and waits out the atelet
// lag.
func (j *job) load(ctx context.Context) int {
	in, outDir, err := j.o.load(ctx)
	if err != nil {
		if cli.IsUsage(err) {
			return j.usage(err)
		}
		fmt.Fprintf(j.env.Stderr, "density export: %v\n", err)
		return cli.ExitWrite
	}
	j.in, j.outDir = in, outDir
	run := in.Run
	fmt.Fprintf(j.env.Stdout, "run %s %s: window [%d, %d], steady [%d, %d]\n",
		cli.Escape(orDash(run.TestName)), cli.Escape(orDash(run.Tag)), run.Start, run.End, run.SteadyStart, run.SteadyEnd)
	for _, n := range in.Notices {
		fmt.Fprintf(j.env.Stdout, "notice: %s\n", n)
	}
	if !j.o.NoWait {
		if err := waitForLag(ctx, j.env, run.End+j.o.AteletLagS); err != nil {
			fmt.Fprintf(j.env.Stderr, "density export: interrupted while waiting: %v\n", err)
			return cli.ExitCanceled
		}
	}
	return cli.ExitOK
}

// read harvests Prometheus and reads Kubernetes (facts, then pod logs) and
// the ladder, concurrently.
func (j *job) read(ctx context.Context) int {
	o, run := j.o, j.in.Run
	client, err := promql.New(j.promCfg)
	if err != nil {
		return j.usage(cli.Usage(fmt.Errorf("prometheus client: %w", err)))
	}
	params := harvest.Params{
		Start: run.Start, End: run.End, SteadyStart: run.SteadyStart, SteadyEnd: run.SteadyEnd,
		LagS: o.AteletLagS, Sel: o.selectors(),
		// psi_series.json: the bands are folded per timestamp from every
		// sample; the kept series (for the top series) are bounded per
		// resource, past which a series is kept max-thinned
		// (PSIResource.SeriesStep) rather than every 10 s sample.
		SeriesPoints: harvest.DefaultSeriesPoints,
	}
	kube, kubeWhy := kubeClient(o, j.env)
	lad, early := ladderPart(o.Ladder, j.in.Ladder, j.in.LadderErr, client)
	phaseSrc, phaseOff := o.phasePart(j.in)
	r := engine.Run(ctx, engine.Input{
		Params: params,
		Blocks: engine.Prometheus{Client: client},
		Kube:   engine.Kubernetes{Client: kube, Why: kubeWhy, Options: o.clusterOptions(), Before: j.in.beforeSnapshot()},
		Ladder: lad,
		Phases: phaseSrc,
	}, engine.AllParts)
	j.res, j.after, j.lad = r.Harvest, r.Cluster, r.Ladder
	if early != nil {
		j.lad = early
	}
	j.phased = phaseRows(r.Phases, phaseOff, j.in.Run)
	return cli.ExitOK
}

// print writes the status lines of what was read.
func (j *job) print() {
	w := j.env.Stdout
	printBlocks(w, j.res, j.o.Verbose)
	printCluster(w, j.after)
	printPhases(w, j.phased)
	printLadder(w, j.lad)
	if j.o.Verbose {
		for _, q := range j.res.Queries {
			fmt.Fprintf(w, "promql: %s\n", q)
		}
	}
	for _, warn := range j.res.Warnings {
		fmt.Fprintf(w, "prometheus warning: %s\n", warn)
	}
}

// write writes server_summary.json, psi_series.json, the stats.jsonl rows
// (server_summary, trial_summary, phases, ladder, gates) and report.html,
// then the JUnit file; a failed gate exits cli.ExitGateFailed with every
// artifact written.
func (j *job) write(ctx context.Context) (*Outcome, int) {
	run := j.in.Run
	out := &Outcome{Dir: j.outDir, Result: j.res, Run: run, Ladder: j.lad}
	md := artifact.ServerMetadata{
		TestName: run.TestName, Tag: run.Tag, PromURL: endpoint.Redact(j.o.PrometheusURL),
		Start: run.Start, End: run.End, SteadyStart: run.SteadyStart, SteadyEnd: run.SteadyEnd, LagS: j.o.AteletLagS,
	}
	if err := j.writeServerSummary(out, md); err != nil {
		return j.fail(out, err)
	}
	psiDoc, ok := writePSISeries(j.env, out, j.res)
	if !ok {
		return out, cli.ExitWrite
	}
	rows := []artifact.Row{artifact.ServerSummaryRow(md, j.res)}
	rows, trialNotices := j.trialRows(out, rows)
	rows = j.familyRows(out, rows)
	gated, rows, err := j.gate(ctx, rows)
	if err != nil {
		fmt.Fprintf(j.env.Stderr, "density export: gates: %v\n", err)
		return out, cli.ExitUsage
	}
	if err := j.writeStats(ctx, out, rows, gated != nil); err != nil {
		return j.fail(out, err)
	}
	notices := j.notices(trialNotices, out.TrialWritten)
	if err := writeNotices(out, notices); err != nil {
		return j.fail(out, err)
	}
	if j.o.Report {
		writeReport(j.env, out, md, psiDoc, j.res, notices, rows)
	}
	printMeasured(j.env.Stdout, tallyBlocks(j.res, rows[0].Measurements))
	return j.verdict(out, gated)
}

// fail prints an artifact that could not be written.
func (j *job) fail(out *Outcome, err error) (*Outcome, int) {
	fmt.Fprintf(j.env.Stderr, "density export: %v\n", err)
	return out, cli.ExitWrite
}

// writeServerSummary writes server_summary.json, creating the output
// directory.
func (j *job) writeServerSummary(out *Outcome, md artifact.ServerMetadata) error {
	doc, err := artifact.ServerSummaryJSON(md, j.res)
	if err != nil {
		return fmt.Errorf("encoding %s: %v", runs.FileServerSummary, err)
	}
	// Again for the output directory a store run defaults to.
	if err := refuseLinks(j.outDir); err != nil {
		return err
	}
	if err := os.MkdirAll(j.outDir, 0o755); err != nil { // #nosec G301 -- artifacts are for others to read, like Locust's
		return err
	}
	out.ServerSummary = filepath.Join(j.outDir, runs.FileServerSummary)
	if err := artifact.WriteFileAtomic(out.ServerSummary, doc, 0o644); err != nil {
		return fmt.Errorf("writing %s: %v", out.ServerSummary, err)
	}
	return nil
}

// trialRows adds the trial_summary row when the run produced stats; the
// notices are the run's and the trial summary's, for the report.
func (j *job) trialRows(out *Outcome, rows []artifact.Row) ([]artifact.Row, []frontier.Notice) {
	in, run, stdout := j.in, j.in.Run, j.env.Stdout
	trial, trialNotices := frontier.TrialSummary(frontier.Inputs{
		Facts:         j.after.Facts,
		ObservedUsers: in.History.Observed,
		Users:         j.o.Users,
		ActorsPerUser: j.o.ActorsPerUser,
		Stats:         in.Stats,
		StatsErr:      in.StatsErr,
		Metadata:      j.metadata,
		RunStart:      run.Start,
		RunEnd:        run.End,
	})
	out.Trial = trial
	for _, n := range trialNotices {
		fmt.Fprintf(stdout, "trial_summary.%s: %s\n", n.Field, n.Reason)
	}
	if frontier.ShouldWriteTrialSummary(in.Status, in.HasStatsRows) {
		rows = append(rows, frontier.Row(trial, run.Start, run.Tag, run.TestName))
		out.TrialWritten = true
	} else {
		fmt.Fprintln(stdout, "trial_summary: not written (the run produced no stats)")
	}
	return rows, trialNotices
}

// familyRows adds the phase and ladder families' rows this export
// produced (only those are replaced).
func (j *job) familyRows(out *Outcome, rows []artifact.Row) []artifact.Row {
	run := j.in.Run
	if j.phased != nil && j.phased.Rows != nil {
		rows = append(rows, j.phased.Rows...)
		out.PhaseRows = len(j.phased.Rows)
	}
	if j.lad != nil {
		if lr := j.lad.StatsRows(run.Start, run.Tag, run.TestName); len(lr) > 0 {
			rows = append(rows, lr...)
			out.LadderWritten = true
		}
	}
	return rows
}

// gate evaluates --gates over the rows and adds the gate rows; nil
// without gates.
func (j *job) gate(ctx context.Context, rows []artifact.Row) (*command.Gated, []artifact.Row, error) {
	if j.gates == nil {
		return nil, rows, nil
	}
	cand := verdicts.RunFromRows(rows)
	cand.ID, cand.Start = j.outDir, j.in.Run.Start
	g, err := command.Evaluate(ctx, *j.gates, &cand, j.o.Baseline, j.o.Store)
	if err != nil {
		return nil, rows, err
	}
	command.PrintResults(j.env.Stdout, g)
	return &g, append(rows, g.Rows...), nil
}

// writeStats appends the rows to stats.jsonl, or with --replace replaces
// the run's rows of the families this export produced.
func (j *job) writeStats(ctx context.Context, out *Outcome, rows []artifact.Row, gated bool) error {
	run := j.in.Run
	out.StatsJSONL = filepath.Join(j.outDir, runs.FileStatsJSONL)
	var err error
	if j.o.Replace {
		phaseRows := out.PhaseRows > 0
		match := artifact.MatchRunFamily(artifact.DataTimestamp(run.Start), run.Tag, run.TestName, func(metric string) bool {
			return metric == artifact.MetricServerSummary || metric == artifact.MetricTrialSummary ||
				(phaseRows && phases.IsFamilyMetric(metric)) ||
				(out.LadderWritten && ladder.IsLadderMetric(metric)) ||
				(gated && verdicts.IsGateMetric(metric))
		})
		_, err = artifact.ReplaceRows(ctx, out.StatsJSONL, match, rows...)
	} else {
		err = artifact.AppendRows(ctx, out.StatsJSONL, rows...)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %v", out.StatsJSONL, err)
	}
	fmt.Fprintf(j.env.Stdout, "wrote %s and %d row(s) to %s\n", out.ServerSummary, len(rows), out.StatsJSONL)
	return nil
}

// verdict writes the JUnit file of the gates and exits cli.ExitGateFailed when
// a gate failed.
func (j *job) verdict(out *Outcome, gated *command.Gated) (*Outcome, int) {
	if gated == nil {
		return out, cli.ExitOK
	}
	if j.o.JUnit != "" {
		if err := command.WriteJUnit(*gated, j.o.JUnit); err != nil {
			return j.fail(out, fmt.Errorf("writing %s: %v", j.o.JUnit, err))
		}
	}
	if gated.Failed() {
		return out, cli.ExitGateFailed
	}
	return out, cli.ExitOK
}

// writePSISeries writes psi_series.json next to server_summary.json,
// atomically, and returns what it wrote; false (after the error line) when
// it could not.
func writePSISeries(env Env, out *Outcome, res *harvest.Result) (*artifact.PSISeries, bool) {
	doc := artifact.NewPSISeries(res, out.Run.Start, out.Run.End)
	data, err := artifact.PSISeriesJSON(doc)
	if err != nil {
		fmt.Fprintf(env.Stderr, "density export: encoding %s: %v\n", runs.FilePSISeries, err)
		return nil, false
	}
	out.PSISeries = filepath.Join(out.Dir, runs.FilePSISeries)
	if err := artifact.WriteFileAtomic(out.PSISeries, data, 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "density export: writing %s: %v\n", out.PSISeries, err)
		return nil, false
	}
	fmt.Fprintln(env.Stdout, psiLine(out.PSISeries, doc))
	return doc, true
}

// load resolves the run from a run directory or a results store, and says
// where the artifacts go.
func (o Options) load(ctx context.Context) (runInputs, string, error) {
	if o.Store == "" {
		in, err := resolve(ctx, o, dirOpener(o.RunDir), runs.Run{Dir: o.RunDir})
		out := o.Out
		if out == "" {
			out = o.RunDir
		}
		return in, out, err
	}
	st, err := runs.OpenStore(ctx, o.Store)
	if err != nil {
		return runInputs{}, "", cli.Usagef("results store: %v", err)
	}
	defer st.Close()
	entry, err := st.Find(ctx, o.RunID, o.TestName)
	if errors.Is(err, runs.ErrInvalidRunID) {
		return runInputs{}, "", cli.Usagef("--run %v", err)
	}
	if err != nil {
		return runInputs{}, "", cli.Usagef("run %q: %v", o.RunID, err)
	}
	base := entry.Run
	base.Dir = ""
	if o.Start == 0 && o.End == 0 && entry.EndKnown {
		o.Start, o.End = entry.Start, entry.End
	}
	in, err := resolve(ctx, o, func(ctx context.Context, name string) (io.ReadCloser, error) {
		// logs.txt exists for ladder runs only: absent from the listing is
		// absent. Every other Locust file a finished run should have, so a
		// missing one is reported as unreadable.
		if name == runs.FileLogs && !entry.Artifacts.Logs {
			return nil, fs.ErrNotExist
		}
		return st.OpenFile(ctx, entry, name)
	}, base)
	out := o.Out
	if out == "" {
		out = fmt.Sprintf("./%s-%d", in.Run.TestName, entry.Start)
	}
	return in, out, err
}

// refuseLinks returns the *artifact.SymlinkError of the first file of the
// directories (empty: skipped) that is a symbolic link (export.md,
// "Credentials and hosts"; the directories themselves may be links).
func refuseLinks(dirs ...string) error {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := artifact.RefuseSymlinksIn(d); err != nil {
			return err
		}
	}
	return nil
}

// waitForLag waits until end+lag has passed, printing the wait (a live
// countdown on a terminal, a line every 30 s otherwise).
func waitForLag(ctx context.Context, env Env, until int64) error {
	remaining := time.Until(time.Unix(until, 0))
	if now := env.Now(); !now.IsZero() {
		remaining = time.Unix(until, 0).Sub(now)
	}
	if remaining <= 0 {
		return nil
	}
	fmt.Fprintf(env.Stdout, "waiting %s for late atelet metrics (until end + lag = %s)\n",
		remaining.Round(time.Second), time.Unix(until, 0).UTC().Format(time.RFC3339))
	step := 30 * time.Second
	if env.Terminal {
		step = time.Second
	}
	for remaining > 0 {
		d := min(step, remaining)
		if err := env.Sleep(ctx, d); err != nil {
			return err
		}
		remaining -= d
		if env.Terminal {
			// The countdown's own carriage return, past the escaping.
			fmt.Fprintf(cli.Raw(env.Stdout), "\r%4ds left ", int(remaining.Seconds()))
		} else if remaining > 0 {
			fmt.Fprintf(env.Stdout, "%ds left\n", int(remaining.Seconds()))
		}
	}
	if env.Terminal {
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

func (o Options) selectors() harvest.Selectors {
	return harvest.Selectors{
		WorkerPool: o.WorkerPool, WorkerNamespace: o.WorkerNamespace, WorkerContainer: o.WorkerContainer,
		WorkerPodRegex: o.WorkerPodRegex, AteletNamespace: o.AteletNamespace, AteletContainer: o.AteletContainer,
	}
}

func (o Options) clusterOptions() cluster.Options {
	c := cluster.DefaultOptions()
	c.WorkerNamespace = o.WorkerNamespace
	c.WorkerContainer = o.WorkerContainer
	if o.Timeout > 0 {
		c.Timeout = o.Timeout
	}
	return c
}

func (o Options) access() cluster.Access {
	a := cluster.Access{Mode: cluster.ModeAuto, KubeconfigPath: o.Kubeconfig, Context: o.Context, Timeout: o.Timeout}
	if !o.ClusterFacts {
		a.Mode = cluster.ModeOff
	}
	return a
}

// kubeClient returns nil (no call at all) when cluster facts are off or the
// client cannot be built; the reason is returned for the notice.
func kubeClient(o Options, env Env) (kubernetes.Interface, string) {
	if !o.ClusterFacts {
		return nil, "cluster facts are switched off (--no-cluster-facts)"
	}
	c, err := env.Kube(o.access())
	if err != nil {
		return nil, "no Kubernetes access: " + err.Error()
	}
	return c, ""
}

// beforeSnapshot is cluster_before.json decoded; nil when it is absent or
// does not decode (the four OOM counts are then null).
func (in runInputs) beforeSnapshot() *cluster.Snapshot {
	if in.Before == nil {
		return nil
	}
	b, err := cluster.DecodeSnapshot(bytes.NewReader(in.Before))
	if err != nil {
		return nil
	}
	return b
}

// recordBefore writes cluster_before.json into the run directory.
func recordBefore(ctx context.Context, o Options, env Env) int {
	if o.RunDir == "" {
		fmt.Fprintln(env.Stderr, "density export: --before needs --run-dir")
		return cli.ExitUsage
	}
	c, why := kubeClient(o, env)
	if c == nil {
		fmt.Fprintf(env.Stdout, "before snapshot not recorded: %s\n", why)
		return cli.ExitOK
	}
	snap, err := cluster.TakeSnapshot(ctx, c, o.clusterOptions())
	if err != nil {
		fmt.Fprintf(env.Stdout, "before snapshot not recorded: %v (the export will report the four OOM/restart fields as null)\n", err)
		return cli.ExitOK
	}
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		fmt.Fprintf(env.Stderr, "density export: encoding %s: %v\n", runs.FileClusterBefore, err)
		return cli.ExitWrite
	}
	path := filepath.Join(o.RunDir, runs.FileClusterBefore)
	if err := artifact.WriteFileAtomic(path, append(data, '\n'), 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "density export: writing %s: %v\n", path, err)
		return cli.ExitWrite
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%d worker pods)\n", path, len(snap.Pods))
	return cli.ExitOK
}

// printBlocks prints one line per block: ok, or which fields are null and a
// short cause (every full reason with --verbose).
func printBlocks(w io.Writer, res *harvest.Result, verbose bool) {
	byBlock := map[string][]harvest.Notice{}
	for _, n := range res.Notices {
		byBlock[n.Block] = append(byBlock[n.Block], n)
	}
	for _, n := range byBlock[""] {
		fmt.Fprintf(w, "harvest: %s\n", n.Reason)
	}
	for _, b := range harvest.BlockNames() {
		ns := byBlock[b]
		if len(ns) == 0 {
			fmt.Fprintf(w, "%-16s ok\n", b)
			continue
		}
		var fields, causes []string
		for _, n := range ns {
			if n.Field != "" && !slices.Contains(fields, n.Field) {
				fields = append(fields, n.Field)
			}
			if c := statusCause(n); !slices.Contains(causes, c) {
				causes = append(causes, c)
			}
		}
		line := strings.Join(causes, "; ")
		if len(fields) > 0 {
			line = strings.Join(fields, ", ") + ": " + line
		}
		fmt.Fprintf(w, "%-16s %s\n", b, line)
		if verbose {
			for _, n := range ns {
				fmt.Fprintf(w, "    %s\n", n)
			}
		}
	}
}

// statusCause cuts a notice to its cause for the one-line status: a failed
// query's notice names the query, which makes one line per block
// unreadable, so it says only the host and the cause.
func statusCause(n harvest.Notice) string {
	reason := n.Reason
	var qe *promql.QueryError
	if errors.As(n.Err, &qe) {
		reason = "null: " + qe.Host + ": " + qe.Err.Error()
		if n.Kind == harvest.ReadFailed {
			reason = "null: the read failed: " + qe.Host + ": " + qe.Err.Error()
		}
	}
	if len(reason) > 200 {
		reason = reason[:197] + "..."
	}
	return reason
}

func printCluster(w io.Writer, a cluster.AfterRun) {
	if len(a.Notices) == 0 {
		fmt.Fprintf(w, "%-16s ok\n", "cluster_facts")
	}
	for _, n := range a.Notices {
		fmt.Fprintf(w, "%-16s %s null: %s\n", "cluster_facts", strings.Join(n.Fields, ","), n.Reason)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
