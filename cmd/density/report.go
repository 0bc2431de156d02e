package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
		URLUsage: `Prometheus to read the PSI bands from when psi_series.json is missing (default the run's metadata prom_url; "none" reads nothing)`}
}

// addReportFlags declares `density report`'s flags on fs, bound to f.
func addReportFlags(fs *pflag.FlagSet, f *reportFlags) {
	fs.StringVar(&f.runDir, "run-dir", "", "run directory holding server_summary.json (and psi_series.json, stats.jsonl)")
	cli.Store{Store: &f.store, Run: &f.runID}.AddTo(fs)
	command.AddBaselineFlags(fs, &f.base)
	f.prometheus().AddTo(fs)
	fs.StringVar(&f.out, "out", "", "output directory (default the run directory; with --store ./<test_name>-<run_ts>)")
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
// or written, 2 usage error.
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
be made or written, 2 usage error.`,
		Flags: fs,
		Run: func(ctx context.Context, args []string) int {
			if err := f.check(args); err != nil {
				fmt.Fprintf(stderr, "density report: %v\n", err)
				return 2
			}
			return runReport(ctx, f, stdout, stderr)
		},
	}
}

// storeRun is a run found in a results store.
type storeRun struct {
	entry runs.Entry
	where string
	open  opener
	close func()
}

// usageErr marks a store URL or run id that cannot be used (exit 2).
type usageErr struct{ error }

// openStoreRun opens the store at url and finds the run id (or latest).
func openStoreRun(ctx context.Context, url, id string) (*storeRun, error) {
	st, err := runs.OpenStore(ctx, url)
	if err != nil {
		return nil, usageErr{fmt.Errorf("results store: %w", err)}
	}
	var entry runs.Entry
	if id == "latest" {
		entry, err = st.Latest(ctx, "")
	} else {
		rid, perr := runs.ParseRunID(id)
		if perr != nil {
			_ = st.Close()
			return nil, usageErr{fmt.Errorf("%q: %w", id, perr)}
		}
		entry, err = st.Get(ctx, rid)
	}
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("%q: %w", id, err)
	}
	return &storeRun{entry: entry, where: st.Where(), close: func() { _ = st.Close() },
		open: func(ctx context.Context, name string) (io.ReadCloser, error) { return st.OpenFile(ctx, entry, name) }}, nil
}

func storeFail(stderr io.Writer, what string, err error) int {
	fmt.Fprintf(stderr, "density report: %s %v\n", what, err)
	var ue usageErr
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// opener reads one artifact of a run by file name.
type opener func(ctx context.Context, name string) (io.ReadCloser, error)

func dirOpener(dir string) opener {
	return func(_ context.Context, name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(dir, name)) // #nosec G304 -- a fixed file name inside the run directory the operator named
	}
}

func readAll(ctx context.Context, open opener, name string) ([]byte, error) {
	r, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// loadRun reads a stored run: server_summary.json (required) and the rows
// of the same run from stats.jsonl, trial_summary and the others (gates,
// phases, ladder); a missing or unreadable stats.jsonl is a notice.
func loadRun(ctx context.Context, open opener) (report.Run, []string, error) {
	data, err := readAll(ctx, open, runs.FileServerSummary)
	if err != nil {
		return report.Run{}, nil, fmt.Errorf("reading %s: %w", runs.FileServerSummary, err)
	}
	s, err := artifact.ReadServerSummary(data)
	if err != nil {
		return report.Run{}, nil, err
	}
	run := report.Run{Meta: s.Meta, Result: s.Result}
	var notices []string
	rows, err := readAll(ctx, open, runs.FileStatsJSONL)
	if err != nil {
		return run, append(notices, fmt.Sprintf("%s unreadable, no frontiers: %v", runs.FileStatsJSONL, err)), nil
	}
	ts := artifact.DataTimestamp(s.Meta.Start)
	err = artifact.ScanRows(bytes.NewReader(rows), func(l artifact.Line) error {
		r := l.Row
		if r == nil || r.Timestamp != ts || r.Tag != s.Meta.Tag || r.TestName != s.Meta.TestName || r.Metric == artifact.MetricServerSummary {
			return nil
		}
		if r.Metric != artifact.MetricTrialSummary {
			// The last row of each metric wins, as with --replace.
			run.Rows = slices.DeleteFunc(run.Rows, func(o artifact.Row) bool { return o.Metric == r.Metric })
			run.Rows = append(run.Rows, *r)
			return nil
		}
		m := make(frontier.Measurements, 0, len(r.Measurements))
		for _, f := range r.Measurements {
			var v *string
			if sv, ok := f.Value.(string); ok {
				v = &sv
			}
			m = append(m, frontier.Measurement{Key: f.Key, Value: v})
		}
		run.Trial = m // the last row of the run wins, as with --replace
		return nil
	})
	if err != nil {
		notices = append(notices, fmt.Sprintf("%s unreadable, no frontiers: %v", runs.FileStatsJSONL, err))
	}
	return run, notices, nil
}

// loadPSI reads psi_series.json; without it the report shows the PSI
// summaries with a notice.
func loadPSI(ctx context.Context, open opener) (*artifact.PSISeries, string) {
	data, err := readAll(ctx, open, runs.FilePSISeries)
	if err != nil {
		return nil, fmt.Sprintf("%s unreadable: %v", runs.FilePSISeries, err)
	}
	d, err := artifact.ReadPSISeries(data)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", runs.FilePSISeries, err)
	}
	return d, ""
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
		open, baseOpen opener
		in             report.Input
		out            = f.out
	)
	if f.runDir != "" {
		open = dirOpener(f.runDir)
		in.Source = "stored artifacts in " + f.runDir
		if fi, err := os.Stat(filepath.Join(f.runDir, runs.FileServerSummary)); err == nil {
			in.HarvestedAt = fi.ModTime()
		}
		if out == "" {
			out = f.runDir
		}
	} else {
		sr, err := openStoreRun(ctx, f.store, f.runID)
		if err != nil {
			return storeFail(stderr, "run", err)
		}
		defer sr.close()
		open = sr.open
		in.Source = fmt.Sprintf("results store %s, run %s", sr.where, sr.entry.ID)
		if out == "" {
			out = fmt.Sprintf("./%s-%d", sr.entry.TestName, sr.entry.Start)
		}
	}
	if f.base.Run != "" {
		url := f.base.Store
		if url == "" {
			url = f.store
		}
		sr, err := openStoreRun(ctx, url, f.base.Run)
		if err != nil {
			return storeFail(stderr, "baseline run", err)
		}
		defer sr.close()
		baseOpen = sr.open
	}
	if f.base.Dir != "" {
		baseOpen = dirOpener(f.base.Dir)
	}

	run, notices, err := loadRun(ctx, open)
	if err != nil {
		return fail(err)
	}
	in.Run, in.Notices = run, notices
	var psiNotice string
	in.PSI, psiNotice = loadPSI(ctx, open)
	if psiNotice != "" {
		in.Notices = append(in.Notices, psiNotice)
		url := f.promURL
		if url == "" {
			url = run.Meta.PromURL
		}
		if url != "" && url != "none" {
			cfg, err := f.prometheus().Config(os.Getenv)
			if err != nil {
				fmt.Fprintf(stderr, "density report: %v\n", err)
				return 2
			}
			cfg.URL = url
			psi, err := psiFromPrometheus(ctx, cfg, run)
			if err != nil {
				in.Notices = append(in.Notices, fmt.Sprintf("PSI bands not read from Prometheus: %v", err))
			} else {
				in.PSI = psi
				in.Notices = append(in.Notices, "PSI bands read from Prometheus at "+endpoint.Redact(url)+" (psi_series.json is missing)")
			}
		}
	}
	if baseOpen != nil {
		b, _, err := loadRun(ctx, baseOpen)
		if err != nil {
			return fail(fmt.Errorf("baseline: %w", err))
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
	for _, n := range in.Notices {
		fmt.Fprintf(stdout, "notice: %s\n", n)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes, rendered in %v)\n", path, len(page), elapsed.Round(time.Millisecond))
	return 0
}
