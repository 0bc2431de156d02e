package export

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/engine"
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
	// Null are the summary row's keys null by how the records were read
	// (podsNotRead says why).
	Null []string
}

// podsNotRead is why the summary's pod counts are null when the records
// came from log files.
const podsNotRead = "null: the records came from --phase-logs files; no pod log was read"

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

// phasePart is where the engine reads the phase records from; nil, with
// the reason when there is one, when they are not read.
func (o Options) phasePart(in runInputs) (*engine.PhaseSource, string) {
	source, off := o.phaseSource()
	if source == "" {
		return nil, off
	}
	run := in.Run
	return &engine.PhaseSource{
		FromFiles: source == "files",
		Files:     o.PhaseLogs,
		Logs: cluster.LogOptions{
			AteletNamespace: o.AteletNamespace, AteletContainer: o.AteletContainer,
			WorkerNamespace: o.WorkerNamespace, WorkerContainer: o.WorkerContainer,
			Since:       time.Unix(run.Start-60, 0),
			ListTimeout: o.Timeout, ReadTimeout: o.PhaseLogTimeout,
			MaxBytes: int64(o.PhaseMaxLogMB) << 20,
		},
		DropAfterUS: (run.End + o.AteletLagS) * 1_000_000,
		Stats:       in.Stats,
	}, ""
}

// phaseRows shapes the engine's phase breakdown into the rows: nil when
// neither was read nor a reason given.
func phaseRows(p *engine.Phases, off string, run runs.Run) *phaseResult {
	if p == nil {
		if off == "" {
			return nil
		}
		return &phaseResult{Notices: []string{off}}
	}
	res := &phaseResult{Notices: p.Notices, Stats: p.Stats}
	if !p.Read {
		return res
	}
	key := phases.RunKey{Timestamp: artifact.DataTimestamp(run.Start), Tag: run.Tag, TestName: run.TestName}
	rows, _ := phases.Rows(key, p.Groups) // the collisions are among the notices
	res.Rows = append(rows, phases.SummaryRow(key, p.Summary))
	res.Groups = len(p.Groups)
	if p.Summary.PodsRead == nil {
		res.Null = []string{phases.KeyPodsRead, phases.KeyPodsFailed}
	}
	return res
}

const maxPhaseNotices = 20

func printPhases(w io.Writer, p *phaseResult) {
	if p == nil {
		return
	}
	if p.Rows != nil {
		fmt.Fprintf(w, "%-16s %d record(s), %d phase row(s)\n", "phase_breakdown", p.Stats.Records, p.Groups)
	}
	if len(p.Null) > 0 {
		fmt.Fprintf(w, "%-16s %s: %s\n", "phase_breakdown", strings.Join(p.Null, ", "), podsNotRead)
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
