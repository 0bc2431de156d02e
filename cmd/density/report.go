package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/report"
	"github.com/substrate/density/pkg/runs"
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

// storeRun reads the parts of the run id ("latest" or a store run id) of
// the store at url.
func storeRun(ctx context.Context, url, id string, parts runs.Part) (*runs.Stored, string, error) {
	st, err := runs.OpenStore(ctx, url)
	if err != nil {
		return nil, "", cli.Usage(fmt.Errorf("results store: %w", err))
	}
	defer st.Close()
	run, err := st.Run(ctx, id, parts)
	if errors.Is(err, runs.ErrInvalidRunID) {
		return nil, "", cli.Usage(err)
	}
	if err != nil {
		if errors.Is(err, runs.ErrRunNotFound) { // an input that cannot be read
			return nil, "", cli.Usage(fmt.Errorf("%q: %w", id, err))
		}
		return nil, "", fmt.Errorf("%q: %w", id, err)
	}
	return run, st.Where(), nil
}

func storeFail(stderr io.Writer, what string, err error) int {
	fmt.Fprintf(stderr, "density report: %s %v\n", what, err)
	return cli.ExitFor(err)
}

// reportRun is a stored run as the report shows it: server_summary.json
// (required) and the run's rows of stats.jsonl (artifact.SelectRunRows):
// trial_summary and the phase, ladder and gate sets; a missing or
// unreadable stats.jsonl is a notice.
func reportRun(s *runs.Stored) (report.Run, []string, error) {
	if p := s.Problem(runs.FileServerSummary); p != nil {
		return report.Run{}, nil, p.Err
	}
	if s.Summary == nil {
		return report.Run{}, nil, fmt.Errorf("reading %s: the run has none", runs.FileServerSummary)
	}
	run := report.Run{Meta: s.Summary.Meta, Result: s.Summary.Result}
	var notices []string
	switch p := s.Problem(runs.FileStatsJSONL); {
	case !s.Entry.Artifacts.StatsJSONL:
		return run, append(notices, fmt.Sprintf("%s unreadable, no frontiers: the run has none", runs.FileStatsJSONL)), nil
	case p != nil:
		notices = append(notices, fmt.Sprintf("%s unreadable, no frontiers: %v", runs.FileStatsJSONL, p.Err))
	}
	if t := s.Rows.Trial; t != nil {
		run.Trial = make(frontier.Measurements, 0, len(t.Measurements))
		for _, f := range t.Measurements {
			var v *string
			if sv, ok := f.Value.(string); ok {
				v = &sv
			}
			run.Trial = append(run.Trial, frontier.Measurement{Key: f.Key, Value: v})
		}
	}
	run.Rows = s.Rows.Sets()
	return run, notices, nil
}

// storedNotices are the run's notices.json entries.
func storedNotices(s *runs.Stored) []artifact.Notice {
	return append([]artifact.Notice(nil), s.Notices...)
}

// noNotices says why the run's notices are not known ("" when its
// notices.json was read).
func noNotices(s *runs.Stored) string {
	switch p := s.Problem(runs.FileNotices); {
	case p != nil:
		return p.Error()
	case !s.NoticesRecorded:
		return "the run has no " + runs.FileNotices
	}
	return ""
}

// psiNotice says why a run has no psi_series.json to show ("" when it has).
func psiNotice(s *runs.Stored) string {
	switch p := s.Problem(runs.FilePSISeries); {
	case p != nil && p.Kind == runs.Malformed:
		return fmt.Sprintf("%s: %v", runs.FilePSISeries, p.Err)
	case p != nil:
		return fmt.Sprintf("%s unreadable: %v", runs.FilePSISeries, p.Err)
	case s.PSI == nil:
		return fmt.Sprintf("%s unreadable: the run has none", runs.FilePSISeries)
	}
	return ""
}

// psiFromPrometheus computes psi_series.json's bands of a stored run from
// Prometheus, while it still holds the run (default selectors, the export's
// series bound). The stored PSI summaries stay as the artifact has them.
func psiFromPrometheus(ctx context.Context, cfg promql.Config, run report.Run) (*artifact.PSISeries, error) {
	client, err := promql.New(cfg)
	if err != nil {
		return nil, err
	}
	md := run.Meta
	p := harvest.Params{Start: md.Start, End: md.End, SteadyStart: md.SteadyStart, SteadyEnd: md.SteadyEnd, LagS: md.LagS,
		Sel: harvest.DefaultSelectors(), SeriesPoints: harvest.DefaultSeriesPoints}
	node, nn := harvest.HarvestNodePSI(ctx, client, p)
	pod, pn := harvest.HarvestPodPSI(ctx, client, p)
	for _, n := range append(nn, pn...) {
		if n.Kind == harvest.ReadFailed {
			return nil, fmt.Errorf("%s", n)
		}
	}
	tmp := *run.Result
	tmp.NodePSI, tmp.PodPSI = node, pod
	d := artifact.NewPSISeries(&tmp, md.Start, md.End)
	for _, b := range []*harvest.PSIBandSet{&d.Node.CPU, &d.Node.Mem, &d.Node.IO, &d.Pod.CPU, &d.Pod.Mem, &d.Pod.IO} {
		if b.Series != nil && *b.Series > 0 {
			return d, nil
		}
	}
	return nil, fmt.Errorf("Prometheus at %s holds no PSI series of the run (past its retention?)", endpoint.Redact(cfg.URL))
}

func runReport(ctx context.Context, f reportFlags, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "density report: %v\n", err)
		return 1
	}
	var (
		stored, base *runs.Stored
		in           report.Input
		out          = f.out
	)
	// A file of a run directory that is a symbolic link is refused, before
	// anything is read (export.md; exit 2: report only reads there).
	for _, dir := range []string{f.runDir, f.base.Dir} {
		if dir == "" {
			continue
		}
		if err := artifact.RefuseSymlinksIn(dir); err != nil {
			fmt.Fprintf(stderr, "density report: %v\n", err)
			return 2
		}
	}
	// The run's and the baseline's artifacts are inputs named on the
	// command line: one that cannot be read is a usage error.
	usage := func(err error) int {
		fmt.Fprintf(stderr, "density report: %v\n", err)
		return 2
	}
	if f.runDir != "" {
		var err error
		if stored, err = runs.Dir(f.runDir, runs.PartAll); err != nil {
			return usage(err)
		}
		in.Source = "stored artifacts in " + f.runDir
		if fi, err := os.Stat(filepath.Join(f.runDir, runs.FileServerSummary)); err == nil {
			in.HarvestedAt = fi.ModTime()
		}
		if out == "" {
			out = f.runDir
		}
	} else {
		s, where, err := storeRun(ctx, f.store, f.runID, runs.PartAll)
		if err != nil {
			return storeFail(stderr, "run", err)
		}
		stored = s
		in.Source = fmt.Sprintf("results store %s, run %s", where, s.Entry.ID)
		if out == "" {
			out = fmt.Sprintf("./%s-%d", s.Entry.TestName, s.Entry.Start)
		}
	}
	if f.base.Run != "" {
		url := f.base.Store
		if url == "" {
			url = f.store
		}
		s, _, err := storeRun(ctx, url, f.base.Run, runs.PartSummary|runs.PartRows)
		if err != nil {
			return storeFail(stderr, "baseline run", err)
		}
		base = s
	}
	if f.base.Dir != "" {
		var err error
		if base, err = runs.Dir(f.base.Dir, runs.PartSummary|runs.PartRows); err != nil {
			return usage(fmt.Errorf("baseline: %w", err))
		}
	}

	run, notices, err := reportRun(stored)
	if err != nil {
		return usage(err)
	}
	in.Run, in.Notices, in.NoNotices = run, storedNotices(stored), noNotices(stored)
	var own []string // the report's own notices, printed
	info := func(text string) {
		in.Notices = append(in.Notices, artifact.Notice{Severity: artifact.SeverityInfo, Text: text})
		own = append(own, text)
	}
	for _, n := range notices {
		info(n)
	}
	in.PSI = stored.PSI
	if psiNotice := psiNotice(stored); psiNotice != "" {
		info(psiNotice)
		url := f.promURL
		cfg, err := f.prometheus().Config(os.Getenv)
		how := ""
		if url == "" {
			// A URL from an artifact gets no credentials: whoever wrote the
			// run into the store chose it.
			url = run.Meta.PromURL
			cfg, err = f.prometheus().ConfigWithoutCredentials(url)
			how = ", the run's recorded prom_url, without credentials (they go only to --prometheus-url)"
		}
		if url != "" && url != "none" {
			if err != nil {
				fmt.Fprintf(stderr, "density report: %v\n", err)
				return 2
			}
			cfg.URL = url
			psi, err := psiFromPrometheus(ctx, cfg, run)
			if err != nil {
				info(fmt.Sprintf("PSI bands not read from Prometheus at %s%s: %v", endpoint.Redact(url), how, err))
			} else {
				in.PSI = psi
				info("PSI bands read from Prometheus at " + endpoint.Redact(url) + how + " (psi_series.json is missing)")
			}
		}
	}
	if base != nil {
		b, _, err := reportRun(base)
		if err != nil {
			return usage(fmt.Errorf("baseline: %w", err))
		}
		in.Baseline = &b
	}
	t0 := time.Now()
	page, err := report.Render(in)
	if err != nil {
		return fail(err)
	}
	elapsed := time.Since(t0)
	if err := os.MkdirAll(out, 0o755); err != nil { // #nosec G301 -- artifacts are for others to read, like the export's
		return fail(err)
	}
	path := filepath.Join(out, report.FileName)
	if err := artifact.WriteFileAtomic(path, page, 0o644); err != nil {
		return fail(err)
	}
	for _, n := range own {
		fmt.Fprintf(stdout, "notice: %s\n", n)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes, rendered in %v)\n", path, len(page), elapsed.Round(time.Millisecond))
	return 0
}
