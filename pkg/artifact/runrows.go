package artifact

import (
	"io"
	"strconv"
	"strings"
)

// Metrics of the row families other than server_summary and trial_summary
// (export.md "Row families and --replace"). Each family's writer puts its
// summary row last.
const (
	MetricLadderStepPrefix = "ladder_step_"
	MetricLadderSummary    = "ladder_summary"
	MetricPhasePrefix      = "phase_"
	MetricPhaseSummary     = "phase_breakdown_summary"
	MetricGatePrefix       = "gate_"
	MetricGateSummary      = "gate_summary"
)

// Family is a row family of this project's stats.jsonl rows.
type Family int

// The row families; FamilyNone is every other row (Locust's, other tools').
const (
	FamilyNone   Family = iota
	FamilyServer        // server_summary
	FamilyTrial         // trial_summary
	FamilyLadder        // ladder_step_NNN (3 digits at least) + ladder_summary
	FamilyPhases        // phase_* + phase_breakdown_summary
	FamilyGates         // gate_* + gate_summary
)

// FamilyOf is the family of a row metric.
func FamilyOf(metric string) Family {
	switch {
	case metric == MetricServerSummary:
		return FamilyServer
	case metric == MetricTrialSummary:
		return FamilyTrial
	case metric == MetricLadderSummary:
		return FamilyLadder
	case strings.HasPrefix(metric, MetricLadderStepPrefix):
		n := metric[len(MetricLadderStepPrefix):]
		if _, err := strconv.ParseUint(n, 10, 64); err == nil && len(n) >= 3 {
			return FamilyLadder
		}
	case strings.HasPrefix(metric, MetricPhasePrefix):
		return FamilyPhases
	case strings.HasPrefix(metric, MetricGatePrefix):
		return FamilyGates
	}
	return FamilyNone
}

// summaryMetric is the row that ends a set of the family ("" for the
// one-row families).
func (f Family) summaryMetric() string {
	switch f {
	case FamilyLadder:
		return MetricLadderSummary
	case FamilyPhases:
		return MetricPhaseSummary
	case FamilyGates:
		return MetricGateSummary
	}
	return ""
}

// RunKey is what every row of a run repeats: its identity.
type RunKey struct {
	Timestamp, Tag, TestName string
}

// readBack is the key as it reads back from a written row (see readBack).
func (k RunKey) readBack() RunKey {
	return RunKey{readBack(k.Timestamp), readBack(k.Tag), readBack(k.TestName)}
}

func (k RunKey) of(r *Row) bool {
	return r.Timestamp == k.Timestamp && r.Tag == k.Tag && r.TestName == k.TestName
}

// RunRows are the rows of one run in stats.jsonl, by family.
type RunRows struct {
	// Key is the identity the rows were taken by (zero: the file holds no
	// row of this project's families).
	Key RunKey
	// Server and Trial are the run's server_summary and trial_summary rows
	// (nil: none).
	Server, Trial *Row
	// Ladder, Phases and Gates are the run's sets of those families, in
	// file order (nil: none).
	Ladder, Phases, Gates []Row
}

// SelectRunRows applies the one row rule (export.md "Which rows belong to
// a run") to the rows of a stats.jsonl file in file order:
//
//   - Only rows of this project's families (FamilyOf) whose timestamp, tag
//     and test_name equal key's take part. Other runs' rows, other tools'
//     rows (Locust's), blank lines and lines that are not rows are skipped:
//     they neither end nor split a set.
//   - A set of a family is a stretch of the run's rows of that family with
//     no row of the run of another family between them; a family row after
//     the family's summary row (ladder_summary, phase_breakdown_summary,
//     gate_summary, which their writers put last) starts a new set.
//   - Per family the last set wins: an export appended after an earlier one
//     replaces it family by family, and --replace (which puts the families
//     an export produced where the run's first row was and keeps the ones it
//     did not produce) leaves one set per family. server_summary and
//     trial_summary are one-row sets: the last row wins.
//
// A family only in an older set (a later export did not produce it) keeps
// that set. With key nil the rows decide the run: the identity of the last
// server_summary row, else of the last trial_summary row, else of the last
// row of any family (verdicts read a run directory this way).
func SelectRunRows(key *RunKey, rows []Row) RunRows {
	var out RunRows
	switch {
	case key != nil:
		out.Key = key.readBack()
	default:
		k, ok := lastIdentity(rows)
		if !ok {
			return out
		}
		out.Key = k
	}
	sets := map[Family]*[]Row{FamilyLadder: &out.Ladder, FamilyPhases: &out.Phases, FamilyGates: &out.Gates}
	open := FamilyNone
	for i := range rows {
		r := &rows[i]
		f := FamilyOf(r.Metric)
		if f == FamilyNone || !out.Key.of(r) {
			continue
		}
		switch f {
		case FamilyServer:
			out.Server = r
		case FamilyTrial:
			out.Trial = r
		default:
			set := sets[f]
			if open != f || (len(*set) > 0 && (*set)[len(*set)-1].Metric == f.summaryMetric()) {
				*set = nil // a new set: the last one wins
			}
			*set = append(*set, *r)
		}
		open = f
	}
	return out
}

// lastIdentity is the identity of the last server_summary row, else of the
// last trial_summary row, else of the last row of any family.
func lastIdentity(rows []Row) (RunKey, bool) {
	var best *Row
	rank := func(r *Row) int {
		switch FamilyOf(r.Metric) {
		case FamilyServer:
			return 3
		case FamilyTrial:
			return 2
		case FamilyNone:
			return 0
		}
		return 1
	}
	for i := range rows {
		if r := &rows[i]; rank(r) > 0 && (best == nil || rank(r) >= rank(best)) {
			best = r
		}
	}
	if best == nil {
		return RunKey{}, false
	}
	return RunKey{best.Timestamp, best.Tag, best.TestName}, true
}

// ReadRunRows reads stats.jsonl from r and selects one run's rows
// (SelectRunRows). Only rows of this project's families are kept while
// reading. The error is a read error; the rows read before it are used.
func ReadRunRows(r io.Reader, key *RunKey) (RunRows, error) {
	var rows []Row
	err := ScanRows(r, func(l Line) error {
		if l.Row != nil && FamilyOf(l.Row.Metric) != FamilyNone {
			rows = append(rows, *l.Row)
		}
		return nil
	})
	return SelectRunRows(key, rows), err
}

// All are the run's rows in the order an export writes them: server,
// trial, then the phase, ladder and gate sets.
func (rr RunRows) All() []Row {
	var out []Row
	for _, r := range []*Row{rr.Server, rr.Trial} {
		if r != nil {
			out = append(out, *r)
		}
	}
	return append(out, rr.Sets()...)
}

// Sets are the phase, ladder and gate sets, in that order.
func (rr RunRows) Sets() []Row {
	out := make([]Row, 0, len(rr.Phases)+len(rr.Ladder)+len(rr.Gates))
	out = append(out, rr.Phases...)
	out = append(out, rr.Ladder...)
	return append(out, rr.Gates...)
}
