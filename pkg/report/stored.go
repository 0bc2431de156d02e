package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// Request is a report of a stored run (`density report`): a run directory
// or a results-store run, optionally a baseline, and where the PSI bands
// come from when the run has no psi_series.json.
type Request struct {
	RunDir       string // a run directory, or
	Store, RunID string // a results store's run ("latest" or a store run id)
	// BaselineDir, or BaselineRun of BaselineStore ("" = Store): the
	// baseline whose figures the report compares with.
	BaselineDir, BaselineStore, BaselineRun string
	// Out is the output directory ("" = the run directory; for a store
	// run ./<test_name>-<run_ts>).
	Out string
	// Prometheus says where to read the PSI bands of a run without
	// psi_series.json, given the URL the run recorded: a config with an
	// empty URL reads nothing; how is said in the notice (e.g. that a
	// recorded URL is read without credentials). An error is a usage
	// error.
	Prometheus func(recorded string) (cfg promql.Config, how string, err error)
}

// Made is a written report.
type Made struct {
	Path    string
	Bytes   int
	Elapsed time.Duration // the render's time
	// Notices are the report's own notices (a missing psi_series.json, the
	// PSI bands read from Prometheus, an unreadable stats.jsonl).
	Notices []string
}

// Make reads the run (and the baseline), renders the report and writes it.
// An input that cannot be read is a cli usage error (exit 2); any other error is a
// report that could not be made or written.
func Make(ctx context.Context, req Request) (Made, error) {
	// A file of a run directory that is a symbolic link is refused, before
	// anything is read (export.md).
	for _, dir := range []string{req.RunDir, req.BaselineDir} {
		if dir == "" {
			continue
		}
		if err := artifact.RefuseSymlinksIn(dir); err != nil {
			return Made{}, cli.Usage(err)
		}
	}
	in, stored, out, err := readRun(ctx, req)
	if err != nil {
		return Made{}, err
	}
	var made Made
	info := func(text string) {
		in.Notices = append(in.Notices, artifact.Notice{Severity: artifact.SeverityInfo, Text: text})
		made.Notices = append(made.Notices, text)
	}
	run, rowNotices, err := stripRun(stored)
	if err != nil {
		return Made{}, cli.Usage(err)
	}
	in.Run, in.PSI = run, stored.PSI
	in.Notices, in.NoNotices = append([]artifact.Notice(nil), stored.Notices...), noNotices(stored)
	for _, n := range rowNotices {
		info(n)
	}
	if why := psiMissing(stored); why != "" {
		info(why)
		if err := psiInstead(ctx, req, &in, info); err != nil {
			return Made{}, err
		}
	}
	if in.Baseline, err = readBaseline(ctx, req); err != nil {
		return Made{}, err
	}
	t0 := time.Now()
	page, err := Render(in)
	if err != nil {
		return Made{}, err
	}
	made.Elapsed, made.Bytes = time.Since(t0), len(page)
	if err := os.MkdirAll(out, 0o755); err != nil { // #nosec G301 -- artifacts are for others to read, like the export's
		return Made{}, err
	}
	made.Path = filepath.Join(out, FileName)
	if err := artifact.WriteFileAtomic(made.Path, page, 0o644); err != nil {
		return Made{}, err
	}
	return made, nil
}

// readRun reads the run's parts, where its figures come from and where
// its report goes.
func readRun(ctx context.Context, req Request) (Input, *runs.Stored, string, error) {
	var in Input
	out := req.Out
	if req.RunDir != "" {
		s, err := runs.Dir(req.RunDir, runs.PartAll)
		if err != nil {
			return in, nil, "", cli.Usage(err)
		}
		in.Source = "stored artifacts in " + req.RunDir
		if fi, err := os.Stat(filepath.Join(req.RunDir, runs.FileServerSummary)); err == nil {
			in.HarvestedAt = fi.ModTime()
		}
		if out == "" {
			out = req.RunDir
		}
		return in, s, out, nil
	}
	s, where, err := storeRun(ctx, req.Store, req.RunID, runs.PartAll)
	if err != nil {
		return in, nil, "", fmt.Errorf("run %w", err)
	}
	in.Source = fmt.Sprintf("results store %s, run %s", where, s.Entry.ID)
	if out == "" {
		out = fmt.Sprintf("./%s-%d", s.Entry.TestName, s.Entry.Start)
	}
	return in, s, out, nil
}

// readBaseline reads the baseline run, if any.
func readBaseline(ctx context.Context, req Request) (*Run, error) {
	var base *runs.Stored
	switch {
	case req.BaselineRun != "":
		url := req.BaselineStore
		if url == "" {
			url = req.Store
		}
		s, _, err := storeRun(ctx, url, req.BaselineRun, runs.PartSummary|runs.PartRows)
		if err != nil {
			return nil, fmt.Errorf("baseline run %w", err)
		}
		base = s
	case req.BaselineDir != "":
		s, err := runs.Dir(req.BaselineDir, runs.PartSummary|runs.PartRows)
		if err != nil {
			return nil, cli.Usage(fmt.Errorf("baseline: %w", err))
		}
		base = s
	default:
		return nil, nil
	}
	b, _, err := stripRun(base)
	if err != nil {
		return nil, cli.Usage(fmt.Errorf("baseline: %w", err))
	}
	return &b, nil
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
	switch {
	case errors.Is(err, runs.ErrInvalidRunID):
		return nil, "", cli.Usage(err)
	case errors.Is(err, runs.ErrRunNotFound): // an input that cannot be read
		return nil, "", cli.Usage(fmt.Errorf("%q: %w", id, err))
	case err != nil:
		return nil, "", fmt.Errorf("%q: %w", id, err)
	}
	return run, st.Where(), nil
}

// stripRun is a stored run as the report shows it: server_summary.json
// (required) and the run's rows of stats.jsonl (artifact.SelectRunRows):
// trial_summary and the phase, ladder and gate sets; a missing or
// unreadable stats.jsonl is a notice.
func stripRun(s *runs.Stored) (Run, []string, error) {
	if p := s.Problem(runs.FileServerSummary); p != nil {
		return Run{}, nil, p.Err
	}
	if s.Summary == nil {
		return Run{}, nil, fmt.Errorf("reading %s: the run has none", runs.FileServerSummary)
	}
	run := Run{Meta: s.Summary.Meta, Result: s.Summary.Result}
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

// psiMissing says why a run has no psi_series.json to show ("" when it
// has).
func psiMissing(s *runs.Stored) string {
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

// psiInstead reads the PSI bands of a run without psi_series.json from the
// Prometheus the request names, while it still holds the run.
func psiInstead(ctx context.Context, req Request, in *Input, info func(string)) error {
	if req.Prometheus == nil {
		return nil
	}
	cfg, how, err := req.Prometheus(in.Meta.PromURL)
	if err != nil {
		return cli.Usage(err)
	}
	if cfg.URL == "" {
		return nil
	}
	where := endpoint.Redact(cfg.URL)
	psi, err := psiFromPrometheus(ctx, cfg, in.Run)
	if err != nil {
		info(fmt.Sprintf("PSI bands not read from Prometheus at %s%s: %v", where, how, err))
		return nil
	}
	in.PSI = psi
	info("PSI bands read from Prometheus at " + where + how + " (psi_series.json is missing)")
	return nil
}

// psiFromPrometheus computes psi_series.json's bands of a stored run from
// Prometheus, while it still holds the run (default selectors, the export's
// series bound). The stored PSI summaries stay as the artifact has them.
func psiFromPrometheus(ctx context.Context, cfg promql.Config, run Run) (*artifact.PSISeries, error) {
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
	for _, b := range d.BandSets() {
		if b.Series != nil && *b.Series > 0 {
			return d, nil
		}
	}
	return nil, fmt.Errorf("Prometheus at %s holds no PSI series of the run (past its retention?)", endpoint.Redact(cfg.URL))
}
