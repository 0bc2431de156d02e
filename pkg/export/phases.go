package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/runs"
)

// phaseResult is the phase breakdown of one export: the rows (nil when the
// logs were not read at all) and what to print.
type phaseResult struct {
	Rows    []artifact.Row // phase_* rows then phase_breakdown_summary
	Groups  int
	Stats   phases.Stats
	Notices []string
}

// phaseLogFiles expands --phase-logs (phases.LogFiles); a bad path is a
// usage error.
func phaseLogFiles(paths []string) ([]string, error) {
	files, err := phases.LogFiles(paths)
	if err != nil {
		return nil, cli.Usagef("--phase-logs: %v", err)
	}
	return files, nil
}

// phaseSource says where the records come from: "files", "api", or "" with
// the reason they are not read.
func (o Options) phaseSource() (string, string) {
	switch {
	case !o.PhaseBreakdown:
		if len(o.PhaseLogs) > 0 {
			return "", "switched off (--no-phase-breakdown); --phase-logs ignored"
		}
		return "", ""
	case len(o.PhaseLogs) > 0:
		return "files", ""
	case !o.ClusterFacts:
		return "", "not read from Kubernetes: cluster facts are switched off (--no-cluster-facts); --phase-logs reads log files"
	case o.Store != "" && !o.PhaseBreakdownSet:
		return "", "not read from Kubernetes for a stored run (give --phase-breakdown to read the live pod logs, or --phase-logs)"
	}
	return "api", ""
}

// readPhases reads the timing breakdown records and builds the rows.
// c is the Kubernetes client (nil, with why, when there is none).
func readPhases(ctx context.Context, o Options, c kubernetes.Interface, why string, in runInputs) *phaseResult {
	source, off := o.phaseSource()
	if source == "" {
		if off == "" {
			return nil
		}
		return &phaseResult{Notices: []string{off}}
	}
	run := in.Run
	res := &phaseResult{}
	col := phases.NewCollector()
	col.DropAfter((run.End + o.AteletLagS) * 1_000_000)
	summary := phases.Summary{}
	if source == "files" {
		files, err := phaseLogFiles(o.PhaseLogs)
		if err != nil { // validated before; the files may have gone since
			res.Notices = append(res.Notices, err.Error())
		}
		for _, path := range files {
			if err := readPhaseFile(col, path); err != nil {
				res.Notices = append(res.Notices, err.Error())
			}
		}
	} else {
		if c == nil {
			return &phaseResult{Notices: []string{"no phase rows: " + why}}
		}
		lr := cluster.ReadPodLogs(ctx, c, cluster.LogOptions{
			AteletNamespace: o.AteletNamespace, AteletContainer: o.AteletContainer,
			WorkerNamespace: o.WorkerNamespace, WorkerContainer: o.WorkerContainer,
			Since:       time.Unix(run.Start-60, 0),
			ListTimeout: o.Timeout, ReadTimeout: o.PhaseLogTimeout,
			MaxBytes: int64(o.PhaseMaxLogMB) << 20,
		}, func(r io.Reader, src cluster.LogSource) error { return col.ReadWhole(r, src.String()) })
		summary.PodsRead, summary.PodsFailed = &lr.PodsRead, &lr.PodsFailed
		res.Notices = append(res.Notices, lr.Notices...)
	}
	res.Notices = append(res.Notices, col.Report()...)
	res.Stats = col.Stats

	phases.Analyze(col.Records)
	groups := phases.Groups(col.Records)
	key := phases.RunKey{Timestamp: artifact.DataTimestamp(run.Start), Tag: run.Tag, TestName: run.TestName}
	rows, collisions := phases.Rows(key, groups)
	res.Notices = append(res.Notices, collisions...)
	s := phases.Summarize(col.Records)
	s.PodsRead, s.PodsFailed = summary.PodsRead, summary.PodsFailed
	s.Suspend = locustCounts(in.Stats, phases.LocustSuspend)
	s.Resume = locustCounts(in.Stats, phases.LocustResume)
	res.Notices = append(res.Notices, phases.Warnings(s, len(groups))...)
	res.Rows = append(rows, phases.SummaryRow(key, s))
	res.Groups = len(groups)
	return res
}

func readPhaseFile(col *phases.Collector, path string) error {
	f, err := os.Open(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return fmt.Errorf("phase log: %w", err)
	}
	defer f.Close()
	if err := col.ReadWhole(f, path); err != nil {
		return fmt.Errorf("phase log %s skipped: %w", path, err)
	}
	return nil
}

// locustCounts is the last stats.csv row of the name; nil when absent or
// its counts do not parse.
func locustCounts(stats []runs.OperationStats, name string) *phases.Locust {
	var last *runs.OperationStats
	for i := range stats {
		if stats[i].Name == name {
			last = &stats[i]
		}
	}
	if last == nil {
		return nil
	}
	req, fail, err := last.Counts()
	if err != nil {
		return nil
	}
	return &phases.Locust{Requests: req, Failures: fail}
}

const maxPhaseNotices = 20

func printPhases(w io.Writer, p *phaseResult) {
	if p == nil {
		return
	}
	if p.Rows != nil {
		fmt.Fprintf(w, "%-16s %d record(s), %d phase row(s)\n", "phase_breakdown", p.Stats.Records, p.Groups)
	}
	// One line per notice, up to maxPhaseNotices (a cluster whose pod logs
	// are all unreadable would print one per pod).
	for i, n := range p.Notices {
		if i == maxPhaseNotices && len(p.Notices) > maxPhaseNotices+1 {
			fmt.Fprintf(w, "%-16s ... and %d more notice(s)\n", "phase_breakdown", len(p.Notices)-i)
			break
		}
		fmt.Fprintf(w, "%-16s %s\n", "phase_breakdown", n)
	}
}
