package export

import (
	"fmt"
	"path/filepath"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/runs"
)

// Blocks of notices.json entries that are not server_summary blocks.
const (
	noticeTrial   = "trial_summary"
	noticeCluster = "cluster_facts"
	noticePhases  = "phase_breakdown"
	noticeLadder  = "ladder"
)

// notices are every notice of the export as notices.json holds them (and
// report.html shows them): the run's inputs, the harvest, the cluster
// facts, the trial_summary, the phases and the ladder. Every text is one
// the export prints, built from redacted parts (no URL user info, query
// string, token or header).
func (j *job) notices(trial []frontier.Notice, trialWritten bool) []artifact.Notice {
	var out []artifact.Notice
	for _, n := range j.in.Notices {
		out = append(out, artifact.Notice{Severity: artifact.SeverityInfo, Text: n})
	}
	if j.res != nil {
		out = append(out, artifact.HarvestNotices(j.res.Notices)...)
	}
	for _, n := range j.after.Notices {
		for _, f := range n.Fields {
			out = append(out, artifact.Notice{Block: noticeCluster, Field: f, Severity: artifact.SeverityWarning, Text: "null: " + n.Reason})
		}
	}
	for _, n := range trial {
		out = append(out, artifact.Notice{Block: noticeTrial, Field: n.Field, Severity: artifact.SeverityWarning, Text: n.Reason})
	}
	if !trialWritten {
		out = append(out, artifact.Notice{Block: noticeTrial, Severity: artifact.SeverityInfo, Text: "not written (the run produced no stats)"})
	}
	if p := j.phased; p != nil {
		for _, f := range p.Null {
			out = append(out, artifact.Notice{Block: noticePhases, Field: f, Severity: artifact.SeverityWarning, Text: podsNotRead})
		}
		for _, n := range p.Notices {
			out = append(out, artifact.Notice{Block: noticePhases, Severity: artifact.SeverityInfo, Text: n})
		}
	}
	if l := j.lad; l != nil {
		sev := artifact.SeverityInfo
		if l.Err != nil {
			sev = artifact.SeverityWarning
		}
		for _, n := range l.Notices {
			out = append(out, artifact.Notice{Block: noticeLadder, Severity: sev, Text: n})
		}
	}
	return out
}

// writeNotices writes notices.json beside server_summary.json, atomically
// (export.md "Notices"); server_summary.json itself is unchanged.
func writeNotices(out *Outcome, ns []artifact.Notice) error {
	data, err := artifact.NoticesJSON(ns)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", runs.FileNotices, err)
	}
	out.Notices = filepath.Join(out.Dir, runs.FileNotices)
	if err := artifact.WriteFileAtomic(out.Notices, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", out.Notices, err)
	}
	return nil
}
