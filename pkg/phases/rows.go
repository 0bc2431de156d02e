package phases

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/artifact"
)

// MetricSummary is the metric of the phase family's summary row.
const MetricSummary = artifact.MetricPhaseSummary

// IsFamilyMetric says a metric belongs to the phase family (the rows
// --replace swaps when the export produced them).
func IsFamilyMetric(metric string) bool { return artifact.FamilyOf(metric) == artifact.FamilyPhases }

// RunKey is what every row of a run repeats.
type RunKey = artifact.RunKey

// none is a dimension's text in rows: an empty or "-" dimension is "none".
func none(s string) string {
	if s == "" || s == "-" {
		return "none"
	}
	return s
}

// MetricName is phase_<layer>_<op>_<class>_<kind>_<scope>_<phase>,
// lowercased, every run of characters outside [a-z0-9_] replaced by "_".
func MetricName(g Group) string {
	raw := strings.ToLower(strings.Join([]string{"phase", none(g.Layer), none(g.Op), none(g.Class),
		none(g.Kind), none(g.Scope), none(g.Phase)}, "_"))
	var b strings.Builder
	b.Grow(len(raw))
	run := false
	for _, r := range raw {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
			run = false
			continue
		}
		if !run {
			b.WriteByte('_')
		}
		run = true
	}
	return b.String()
}

// AsWritten is the group as its row writes it: an empty or "-" dimension
// is "none".
func (g Group) AsWritten() Group {
	g.Layer, g.Op, g.Class, g.Kind, g.Scope, g.Phase = none(g.Layer), none(g.Op), none(g.Class), none(g.Kind), none(g.Scope), none(g.Phase)
	return g
}

// Collisions name the metric names several groups share after
// sanitising (both rows stay).
func Collisions(groups []Group) (notices []string) {
	seen := map[string]int{}
	for _, g := range groups {
		name := MetricName(g)
		seen[name]++
		if seen[name] == 2 {
			notices = append(notices, fmt.Sprintf("several phase groups share the metric name %s", name))
		}
	}
	return notices
}

// Rows returns the percentile rows in order; notices name metric names that
// collide after sanitising (both rows stay).
func Rows(key RunKey, groups []Group) (rows []artifact.Row, notices []string) {
	for _, g := range groups {
		name := MetricName(g)
		rows = append(rows, artifact.Row{
			Timestamp: key.Timestamp, Tag: key.Tag, TestName: key.TestName, Metric: name,
			Measurements: artifact.Object{
				{Key: "layer", Value: none(g.Layer)},
				{Key: "op", Value: none(g.Op)},
				{Key: "class", Value: none(g.Class)},
				{Key: "kind", Value: none(g.Kind)},
				{Key: "scope", Value: none(g.Scope)},
				{Key: "phase", Value: none(g.Phase)},
				{Key: "count", Value: strconv.Itoa(g.Count)},
				{Key: "p50_ms", Value: artifact.FormatFloat(g.P50)},
				{Key: "p90_ms", Value: artifact.FormatFloat(g.P90)},
				{Key: "p95_ms", Value: artifact.FormatFloat(g.P95)},
				{Key: "max_ms", Value: artifact.FormatFloat(g.Max)},
			},
		})
	}
	return rows, Collisions(groups)
}

// Locust is one stats.csv row's counts.
type Locust struct {
	Requests, Failures int64
}

// Locust operation names compared with the atelet records.
const (
	LocustSuspend = "SuspendActor"
	LocustResume  = "ResumeActor"
)

// Summary is the phase_breakdown_summary row's content.
type Summary struct {
	Records int // matched records, both layers, failed included
	// PodsRead and PodsFailed are nil when the records came from files.
	PodsRead, PodsFailed *int
	AteletCheckpoint     int
	AteletRestore        int
	// Suspend and Resume are nil when stats.csv has no such (parsable) row.
	Suspend, Resume *Locust
}

// Summarize counts the records of an analysed set.
func Summarize(recs []Record) Summary {
	s := Summary{Records: len(recs)}
	for i := range recs {
		if recs[i].Layer != LayerAtelet {
			continue
		}
		switch recs[i].Op {
		case OpCheckpoint:
			s.AteletCheckpoint++
		case OpRestore:
			s.AteletRestore++
		}
	}
	return s
}

func intText(p *int) any {
	if p == nil {
		return nil
	}
	return strconv.Itoa(*p)
}

// The summary row's pod counts: null when the records came from files.
const (
	KeyPodsRead   = "pods_read"
	KeyPodsFailed = "pods_failed"
)

// SummaryRow is the phase_breakdown_summary row; its keys are exactly, in
// order: records, pods_read, pods_failed, atelet_checkpoint_records,
// locust_SuspendActor, locust_SuspendActor_failures,
// atelet_restore_records, locust_ResumeActor, locust_ResumeActor_failures
// (the locust keys only when stats.csv has the row).
func SummaryRow(key RunKey, s Summary) artifact.Row {
	m := artifact.Object{
		{Key: "records", Value: strconv.Itoa(s.Records)},
		{Key: KeyPodsRead, Value: intText(s.PodsRead)},
		{Key: KeyPodsFailed, Value: intText(s.PodsFailed)},
		{Key: "atelet_checkpoint_records", Value: strconv.Itoa(s.AteletCheckpoint)},
	}
	if s.Suspend != nil {
		m = append(m, artifact.Field{Key: "locust_" + LocustSuspend, Value: strconv.FormatInt(s.Suspend.Requests, 10)},
			artifact.Field{Key: "locust_" + LocustSuspend + "_failures", Value: strconv.FormatInt(s.Suspend.Failures, 10)})
	}
	m = append(m, artifact.Field{Key: "atelet_restore_records", Value: strconv.Itoa(s.AteletRestore)})
	if s.Resume != nil {
		m = append(m, artifact.Field{Key: "locust_" + LocustResume, Value: strconv.FormatInt(s.Resume.Requests, 10)},
			artifact.Field{Key: "locust_" + LocustResume + "_failures", Value: strconv.FormatInt(s.Resume.Failures, 10)})
	}
	return artifact.Row{Timestamp: key.Timestamp, Tag: key.Tag, TestName: key.TestName, Metric: MetricSummary, Measurements: m}
}

// Warnings are the summary's notices: fewer atelet records of an op than
// that op's successful Locust requests, and no percentile rows at all.
func Warnings(s Summary, groups int) []string {
	var out []string
	cause := "a node log was rotated during the run"
	if s.PodsFailed != nil && *s.PodsFailed > 0 {
		cause = fmt.Sprintf("%d pod(s) could not be read", *s.PodsFailed)
	}
	check := func(l *Locust, name string, records int) {
		if l == nil {
			return
		}
		if ok := l.Requests - l.Failures; int64(records) < ok {
			out = append(out, fmt.Sprintf("locust made %d successful %s requests but the atelet logs hold %d records; %s",
				ok, name, records, cause))
		}
	}
	check(s.Suspend, LocustSuspend, s.AteletCheckpoint)
	check(s.Resume, LocustResume, s.AteletRestore)
	if groups == 0 {
		read, failed := 0, 0
		if s.PodsRead != nil {
			read = *s.PodsRead
		}
		if s.PodsFailed != nil {
			failed = *s.PodsFailed
		}
		out = append(out, fmt.Sprintf("no timing breakdown records in the node logs (%d pods read, %d failed); check pods/log access", read, failed))
	}
	return out
}

// FromRows reads the phase rows of one run back from stats.jsonl rows:
// the percentile groups in file order and the summary (nil when absent).
// Rows of other families are ignored; a phase row whose numbers do not
// parse is skipped.
func FromRows(rows []artifact.Row) (groups []Group, summary artifact.Object) {
	for _, r := range rows {
		if r.Metric == MetricSummary {
			summary = r.Measurements
			continue
		}
		if !IsFamilyMetric(r.Metric) {
			continue
		}
		get := func(k string) string {
			v, _ := r.Measurements.Get(k)
			s, _ := v.(string)
			return s
		}
		g := Group{Layer: get("layer"), Op: get("op"), Class: get("class"), Kind: get("kind"), Scope: get("scope"), Phase: get("phase")}
		n, err := strconv.Atoi(get("count"))
		if err != nil {
			continue
		}
		g.Count = n
		ok := true
		for _, f := range []struct {
			k string
			p *float64
		}{{"p50_ms", &g.P50}, {"p90_ms", &g.P90}, {"p95_ms", &g.P95}, {"max_ms", &g.Max}} {
			v, err := strconv.ParseFloat(get(f.k), 64)
			if err != nil {
				ok = false
				break
			}
			*f.p = v
		}
		if ok {
			groups = append(groups, g)
		}
	}
	return groups, summary
}
