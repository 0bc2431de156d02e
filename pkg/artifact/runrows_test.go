package artifact

import (
	"fmt"
	"strings"
	"testing"
)

// rowLine is a stats.jsonl line of run (ts, tag) of test "t" with one
// measurement v.
func rowLine(ts, tag, metric, v string) string {
	return fmt.Sprintf(`{"timestamp": %q, "tag": %q, "test_name": "t", "metric": %q, "measurements": {"v": %q}}`, ts, tag, metric, v)
}

// summarise names a RunRows as "server=v trial=v ladder=m:v,... phases=...
// gates=..." for comparison.
func summarise(rr RunRows) string {
	val := func(r Row) string {
		v, _ := r.Measurements.Get("v")
		s, _ := v.(string)
		return r.Metric + ":" + s
	}
	one := func(r *Row) string {
		if r == nil {
			return "-"
		}
		return val(*r)
	}
	set := func(rs []Row) string {
		if rs == nil {
			return "-"
		}
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = val(r)
		}
		return strings.Join(out, ",")
	}
	return fmt.Sprintf("server=%s trial=%s ladder=%s phases=%s gates=%s", one(rr.Server), one(rr.Trial), set(rr.Ladder), set(rr.Phases), set(rr.Gates))
}

// export is one export's rows of run (ts, tag) with values marked by v,
// in the order the export writes its families.
func export(ts, tag, v string, families ...string) []string {
	out := []string{rowLine(ts, tag, MetricServerSummary, v), rowLine(ts, tag, MetricTrialSummary, v)}
	for _, f := range families {
		switch f {
		case "phases":
			out = append(out, rowLine(ts, tag, "phase_a", v), rowLine(ts, tag, "phase_b", v), rowLine(ts, tag, MetricPhaseSummary, v))
		case "ladder":
			out = append(out, rowLine(ts, tag, "ladder_step_001", v), rowLine(ts, tag, "ladder_step_002", v), rowLine(ts, tag, MetricLadderSummary, v))
		case "gates":
			out = append(out, rowLine(ts, tag, "gate_x", v), rowLine(ts, tag, MetricGateSummary, v))
		}
	}
	return out
}

func cat(parts ...[]string) string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return strings.Join(all, "\n") + "\n"
}

// TestSelectRunRows pins the one row rule (export.md "Which rows belong to
// a run") on the layouts stats.jsonl takes.
func TestSelectRunRows(t *testing.T) {
	const ts, other = "2024-03-12T10:00:00Z", "2024-03-13T10:00:00Z"
	key := &RunKey{Timestamp: ts, Tag: "a", TestName: "t"}
	locust := []string{`{"timestamp": "2024-03-12T10:00:00Z", "tag": "a", "test_name": "t", "metric": "locust_requests", "measurements": {"v": "L"}}`}
	for _, c := range []struct {
		name string
		file string
		key  *RunKey
		want string
	}{
		{"one export", cat(export(ts, "a", "1", "phases", "ladder", "gates")), key,
			"server=server_summary:1 trial=trial_summary:1 ladder=ladder_step_001:1,ladder_step_002:1,ladder_summary:1 phases=phase_a:1,phase_b:1,phase_breakdown_summary:1 gates=gate_x:1,gate_summary:1"},
		{"other runs' rows interleaved are ignored", cat(
			export(ts, "a", "1", "phases"),
			export(other, "a", "X", "phases", "ladder", "gates"),
			export(ts, "b", "Y", "ladder"),
		), key,
			"server=server_summary:1 trial=trial_summary:1 ladder=- phases=phase_a:1,phase_b:1,phase_breakdown_summary:1 gates=-"},
		{"another run's rows inside a set neither end nor split it", cat(
			[]string{rowLine(ts, "a", MetricServerSummary, "1"), rowLine(ts, "a", "phase_a", "1")},
			export(other, "a", "X", "phases"),
			locust,
			[]string{rowLine(ts, "a", "phase_b", "1"), rowLine(ts, "a", MetricPhaseSummary, "1")},
		), key,
			"server=server_summary:1 trial=- ladder=- phases=phase_a:1,phase_b:1,phase_breakdown_summary:1 gates=-"},
		{"two exports appended: the last set of each family wins", cat(
			export(ts, "a", "1", "phases", "ladder", "gates"),
			locust,
			export(ts, "a", "2", "phases", "ladder", "gates"),
		), key,
			"server=server_summary:2 trial=trial_summary:2 ladder=ladder_step_001:2,ladder_step_002:2,ladder_summary:2 phases=phase_a:2,phase_b:2,phase_breakdown_summary:2 gates=gate_x:2,gate_summary:2"},
		{"a family only in an older set keeps that set", cat(
			export(ts, "a", "1", "phases", "ladder", "gates"),
			export(ts, "a", "2"),
		), key,
			"server=server_summary:2 trial=trial_summary:2 ladder=ladder_step_001:1,ladder_step_002:1,ladder_summary:1 phases=phase_a:1,phase_b:1,phase_breakdown_summary:1 gates=gate_x:1,gate_summary:1"},
		{"a later set without a metric of the older one drops it", cat(
			export(ts, "a", "1", "phases"),
			[]string{rowLine(ts, "a", MetricServerSummary, "2"), rowLine(ts, "a", "phase_b", "2"), rowLine(ts, "a", MetricPhaseSummary, "2")},
		), key,
			"server=server_summary:2 trial=trial_summary:1 ladder=- phases=phase_b:2,phase_breakdown_summary:2 gates=-"},
		{"--replace layout: new families where the run's first row was, an unproduced family kept after them", cat(
			locust,
			export(ts, "a", "2", "ladder"),
			[]string{rowLine(ts, "a", "phase_a", "1"), rowLine(ts, "a", MetricPhaseSummary, "1")},
			locust,
		), key,
			"server=server_summary:2 trial=trial_summary:2 ladder=ladder_step_001:2,ladder_step_002:2,ladder_summary:2 phases=phase_a:1,phase_breakdown_summary:1 gates=-"},
		{"a family row after its summary starts a new set", cat(
			[]string{rowLine(ts, "a", "ladder_step_001", "1"), rowLine(ts, "a", MetricLadderSummary, "1"),
				rowLine(ts, "a", "ladder_step_001", "2"), rowLine(ts, "a", MetricLadderSummary, "2")},
		), key,
			"server=- trial=- ladder=ladder_step_001:2,ladder_summary:2 phases=- gates=-"},
		{"rows with a missing or null tag or test_name are not rows", cat(
			export(ts, "a", "1", "gates"),
			[]string{
				`{"timestamp": "2024-03-12T10:00:00Z", "test_name": "t", "metric": "server_summary", "measurements": {"v": "N"}}`,
				`{"timestamp": "2024-03-12T10:00:00Z", "tag": "a", "test_name": null, "metric": "trial_summary", "measurements": {"v": "N"}}`,
				`{"timestamp": "2024-03-12T10:00:00Z", "tag": "a", "metric": "gate_y", "measurements": {"v": "N"}}`,
			},
		), key,
			"server=server_summary:1 trial=trial_summary:1 ladder=- phases=- gates=gate_x:1,gate_summary:1"},
		{"blank and broken lines neither end nor split a set", strings.Join([]string{
			rowLine(ts, "a", MetricServerSummary, "1"),
			rowLine(ts, "a", "phase_a", "1"),
			"",
			`{"timestamp": "2024-03-12T10:00:00Z", "tag": "a", "test_na`,
			"not json",
			rowLine(ts, "a", "phase_b", "1"),
			rowLine(ts, "a", MetricPhaseSummary, "1"),
			`{"timestamp": "2024-03-12T10:00:00Z", "tag": "a", "test_name": "t", "metric": "server_summary", "measurements": {"v": "cut`,
		}, "\n"), key,
			"server=server_summary:1 trial=- ladder=- phases=phase_a:1,phase_b:1,phase_breakdown_summary:1 gates=-"},
		{"ladder_step_ with fewer than three digits is not the ladder's", cat(
			[]string{rowLine(ts, "a", "ladder_step_01", "1"), rowLine(ts, "a", "ladder_step_x01", "1")},
		), key,
			"server=- trial=- ladder=- phases=- gates=-"},
		{"no key: the run of the last server_summary row", cat(
			export(ts, "a", "1", "phases"),
			export(other, "a", "2", "gates"),
			[]string{rowLine(ts, "a", MetricTrialSummary, "3")},
		), nil,
			"server=server_summary:2 trial=trial_summary:2 ladder=- phases=- gates=gate_x:2,gate_summary:2"},
		{"no key, no server_summary row: the run of the last trial_summary row", cat(
			[]string{rowLine(ts, "a", MetricTrialSummary, "1"), rowLine(other, "a", MetricTrialSummary, "2"), rowLine(ts, "a", "gate_x", "3")},
		), nil,
			"server=- trial=trial_summary:2 ladder=- phases=- gates=-"},
		{"no key, no row of this project", cat(locust), nil,
			"server=- trial=- ladder=- phases=- gates=-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr, err := ReadRunRows(strings.NewReader(c.file), c.key)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarise(rr); got != c.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, c.want)
			}
		})
	}
}

func TestSelectRunRowsKey(t *testing.T) {
	rows := []Row{{Timestamp: "t1", Tag: "a", TestName: "n", Metric: MetricTrialSummary}}
	if rr := SelectRunRows(nil, rows); rr.Key != (RunKey{"t1", "a", "n"}) || rr.Trial == nil {
		t.Errorf("rows decide: %+v", rr)
	}
	// A key with bytes that are not UTF-8 matches the rows as they read
	// back (written as \udcXX, read as U+FFFD).
	r := Row{Timestamp: "t1", Tag: "a\xff", TestName: "n", Metric: MetricServerSummary, Measurements: Object{}}
	line, err := r.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	rr, err := ReadRunRows(strings.NewReader(string(line)+"\n"), &RunKey{"t1", "a\xff", "n"})
	if err != nil || rr.Server == nil {
		t.Errorf("non-UTF-8 tag: %+v %v", rr, err)
	}
}

func TestFamilyOf(t *testing.T) {
	for metric, want := range map[string]Family{
		"server_summary": FamilyServer, "trial_summary": FamilyTrial,
		"ladder_step_001": FamilyLadder, "ladder_step_1234": FamilyLadder, "ladder_summary": FamilyLadder,
		"ladder_step_01": FamilyNone, "ladder_step_-01": FamilyNone,
		"phase_breakdown_summary": FamilyPhases, "phase_atelet_x": FamilyPhases,
		"gate_summary": FamilyGates, "gate_restore_p99_s": FamilyGates,
		"locust_requests": FamilyNone, "": FamilyNone,
	} {
		if got := FamilyOf(metric); got != want {
			t.Errorf("FamilyOf(%q) = %d, want %d", metric, got, want)
		}
	}
}
