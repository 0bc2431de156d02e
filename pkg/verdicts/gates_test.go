package verdicts

import (
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/artifact"
)

func ptrTo[T any](v T) *T { return &v }

// testRun builds a run from key/value pairs; a nil value is null.
func testRun(id string, kv ...any) *Run {
	r := &Run{ID: id, TestName: "nightly", Tag: id}
	for i := 0; i+1 < len(kv); i += 2 {
		v := Value{Key: kv[i].(string)}
		if s, ok := kv[i+1].(string); ok {
			v.Text = &s
		}
		r.Values = append(r.Values, v)
	}
	r.reindex()
	return r
}

func TestDirectionOf(t *testing.T) {
	for key, want := range map[string]Direction{
		"cluster_packing_p50":              Higher,
		"actors_per_node":                  Higher,
		"checkpoint_mb_s":                  Higher,
		"ladder_summary.max_sustained_rps": Higher,
		"x.requests_per_s":                 Higher,
		"x.total_rps":                      Higher,
		"active_actors_p99":                Higher,
		"psi_cpu_stall_p50":                Lower,
		"pod_psi_io_stall_p99":             Lower,
		"restore_p99_s":                    Lower,
		"phase_a_b.p95_ms":                 Lower,
		"snapshot_size_p50_mb":             Lower,
		"working_set_worker_max_gb":        Lower,
		"oom_events_pod":                   Lower,
		"aggregate_failure_ratio":          Lower,
		"window_s":                         None,
		"step":                             None,
		"node_count":                       None,
		"worker_pod_count":                 None,
		"checkpoints_in_window":            None,
		"ladder_step_001.users":            None,
	} {
		if got := DirectionOf(key); got != want {
			t.Errorf("DirectionOf(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestParseGatesErrors(t *testing.T) {
	for name, text := range map[string]string{
		"empty":             "",
		"no gates":          "gates: []\n",
		"unknown field":     "gates:\n  - key: restore_p99_s\n    max: 5\n    maxx: 3\n",
		"unknown top":       "gate:\n  - key: restore_p99_s\n    max: 5\n",
		"no bound":          "gates:\n  - key: restore_p99_s\n",
		"min above max":     "gates:\n  - key: restore_p99_s\n    min: 6\n    max: 5\n",
		"typo key":          "gates:\n  - key: restore_p99\n    max: 5\n",
		"no key":            "gates:\n  - max: 5\n",
		"duplicate":         "gates:\n  - key: x.a-b\n    max: 5\n  - key: x.a_b\n    max: 6\n",
		"regression no dir": "gates:\n  - key: node_count\n    max_regression_pct: 5\n",
		"bad direction":     "gates:\n  - key: node_count\n    max_regression_pct: 5\n    direction: up\n",
		"negative reg":      "gates:\n  - key: restore_p99_s\n    max_regression_pct: -1\n",
		"malformed":         "gates: [\n",
		"string bound":      "gates:\n  - key: restore_p99_s\n    max: five\n",
		"not a list":        "gates: 3\n",
	} {
		if _, err := ParseGates([]byte(text)); !errors.Is(err, ErrGates) {
			t.Errorf("%s: err = %v, want ErrGates", name, err)
		}
	}
	gs, err := ParseGates([]byte("gates:\n  - key: node_count\n    max_regression_pct: 5\n    direction: lower\n  - key: ladder_summary.max_sustained_rps\n    min: 800\n    allow_null: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if gs.Gates[0].Dir() != Lower || !gs.NeedsBaseline() || !gs.Gates[1].AllowNull {
		t.Errorf("parsed %+v", gs)
	}
}

func TestEvaluate(t *testing.T) {
	run := testRun("b", "cluster_packing_p50", "0.85", "restore_p99_s", "4.0", "checkpoint_p99_s", "2.2",
		"oom_events_pod", "0", "actors_per_node", "90", "psi_cpu_stall_p50", nil, "machine_type", "n2",
		"restore_p50_s", "1.0")
	base := testRun("a", "checkpoint_p99_s", "2.0", "actors_per_node", "100", "restore_p99_s", "4.0",
		"oom_events_pod", "0", "cluster_packing_p50", nil, "restore_p50_s", "0")
	type tc struct {
		gate    string
		base    *Run
		verdict string
		reason  string
		delta   *float64
	}
	for _, c := range []tc{
		{"key: cluster_packing_p50\n    min: 0.8", nil, Pass, "", nil},
		{"key: cluster_packing_p50\n    min: 0.85", nil, Pass, "", nil}, // inclusive
		{"key: cluster_packing_p50\n    min: 0.9", nil, Fail, "0.85 below min 0.9", nil},
		{"key: restore_p99_s\n    max: 4", nil, Pass, "", nil},
		{"key: restore_p99_s\n    max: 3.5", nil, Fail, "4.0 above max 3.5", nil},
		{"key: oom_events_pod\n    max: 0", nil, Pass, "", nil},
		{"key: psi_cpu_stall_p50\n    max: 1", nil, Fail, ReasonNotMeasured, nil},
		{"key: psi_cpu_stall_p99\n    max: 1", nil, Fail, ReasonNotMeasured, nil}, // absent
		{"key: machine_type\n    max: 1", nil, Fail, ReasonNotMeasured, nil},      // not a number
		{"key: psi_cpu_stall_p50\n    max: 1\n    allow_null: true", nil, Pass, "not measured (allowed)", nil},
		// lower is better: +10 % is a regression of 10 %.
		{"key: checkpoint_p99_s\n    max_regression_pct: 10", base, Pass, "", ptrTo(10.0)},
		{"key: checkpoint_p99_s\n    max_regression_pct: 9.99", base, Fail, "regression 10.0 % against the baseline (max 9.99 %)", ptrTo(10.0)},
		// higher is better: −10 % is a regression of 10 %.
		{"key: actors_per_node\n    max_regression_pct: 10", base, Pass, "", ptrTo(-10.0)},
		{"key: actors_per_node\n    max_regression_pct: 5", base, Fail, "regression 10.0 % against the baseline (max 5.0 %)", ptrTo(-10.0)},
		// Improvements never fail a regression gate.
		{"key: checkpoint_p99_s\n    max_regression_pct: 0\n    direction: higher", base, Pass, "", ptrTo(10.0)},
		{"key: checkpoint_p99_s\n    max_regression_pct: 5", nil, Fail, ReasonNoBaseline, nil},
		{"key: cluster_packing_p50\n    max_regression_pct: 5", base, Fail, ReasonBaselineNotMeasured, nil},
		{"key: restore_p50_s\n    max_regression_pct: 5", base, Fail, "regression from a baseline of 0 to 1.0", nil},
		{"key: oom_events_pod\n    max_regression_pct: 5", base, Pass, "", nil}, // 0 → 0
	} {
		gs, err := ParseGates([]byte("gates:\n  - " + c.gate + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.gate, err)
		}
		r := Evaluate(gs, run, c.base)[0]
		if r.Verdict != c.verdict || r.Reason != c.reason {
			t.Errorf("%q: %s %q, want %s %q", c.gate, r.Verdict, r.Reason, c.verdict, c.reason)
		}
		if (r.DeltaPct == nil) != (c.delta == nil) || r.DeltaPct != nil && *r.DeltaPct != *c.delta {
			t.Errorf("%q: delta %v, want %v", c.gate, r.DeltaPct, c.delta)
		}
	}
}

const sampleGates = `gates:
  - key: cluster_packing_p50
    min: 0.8
  - key: restore_p99_s
    max: 5
  - key: checkpoint_p99_s
    max_regression_pct: 10
  - key: oom_events_pod
    max: 0
  - key: ladder_summary.max_sustained_rps
    min: 800
    allow_null: true
`

func sampleResults(t *testing.T) []GateResult {
	gs, err := ParseGates([]byte(sampleGates))
	if err != nil {
		t.Fatal(err)
	}
	run := testRun("b", "cluster_packing_p50", "0.72", "restore_p99_s", "4.1", "checkpoint_p99_s", "2.5", "oom_events_pod", "0")
	base := testRun("a", "checkpoint_p99_s", "2.0")
	return Evaluate(gs, run, base)
}

func TestGateRows(t *testing.T) {
	rows := GateRows(sampleResults(t), "2026-12-01T10:00:00Z", "abc", "nightly")
	var lines []string
	for _, r := range rows {
		b, err := r.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "gate_rows.jsonl")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("gate rows:\n%s\nwant:\n%s", got, want)
	}
	last := rows[len(rows)-1]
	if last.Metric != MetricGateSummary {
		t.Fatalf("last row %s", last.Metric)
	}
	if v, _ := last.Measurements.Get("failed"); v != "2" {
		t.Errorf("failed = %v, want 2", v)
	}
	if !MatchGateRows("2026-12-01T10:00:00Z", "abc", "nightly")([]byte(lines[0])) {
		t.Error("MatchGateRows does not match its own row")
	}
}

func TestJUnit(t *testing.T) {
	data, err := JUnit(sampleResults(t), "nightly")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Class   string `xml:"classname,attr"`
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Name != "density gates" || s.Tests != 5 || s.Failures != 2 || s.Cases[0].Failure.Message != "0.72 below min 0.8" {
		t.Errorf("junit %+v\n%s", doc, data)
	}
	if strings.Contains(string(data), "timestamp=") {
		t.Error("junit carries a timestamp")
	}
	// An independent reader: Debian's python3-junitparser.
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import junitparser").Run(); err != nil {
		t.Skip("python3-junitparser not installed")
	}
	f := filepath.Join(t.TempDir(), "gates.xml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", `
import sys
from junitparser import JUnitXml, Failure
x = JUnitXml.fromfile(sys.argv[1])
cases = [c for s in x for c in s]
fails = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
print(len(cases), len(fails), fails[0].name, fails[0].result[0].message)
`, f).CombinedOutput()
	if err != nil {
		t.Fatalf("junitparser: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "5 2 cluster_packing_p50 0.72 below min 0.8" {
		t.Errorf("junitparser read %q", got)
	}
}

func TestCompare(t *testing.T) {
	a := testRun("a", "run_start", "100", "restore_p99_s", "4.0", "actors_per_node", "100", "node_count", "3",
		"psi_cpu_stall_p50", "1.0", "checkpoint_p99_s", "2.0", "oom_events_pod", "0", "machine_type", "n2",
		"metadata_x", "1", "cluster_packing_p50", nil, "active_actors_p50", "50")
	b := testRun("b", "active_actors_p50", "49.5", "oom_events_pod", "2", "checkpoint_p99_s", "1.8", "psi_cpu_stall_p50", "1.02",
		"node_count", "4", "actors_per_node", "90", "restore_p99_s", "4.6", "run_start", "200",
		"machine_type", "n2", "metadata_x", "2", "cluster_packing_p50", "0.8")
	c := Compare(a, b, DefaultNoisePct)
	var got []string
	for _, r := range c.Rows {
		got = append(got, r.Key+":"+r.Verdict)
	}
	want := "restore_p99_s:worse actors_per_node:worse node_count:changed psi_cpu_stall_p50:same checkpoint_p99_s:better oom_events_pod:worse active_actors_p50:same"
	if strings.Join(got, " ") != want {
		t.Errorf("compare:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if len(c.Skipped) != 1 || c.Skipped[0] != "cluster_packing_p50" {
		t.Errorf("skipped %v", c.Skipped)
	}
	if c.Rows[0].DeltaPct == nil || *c.Rows[0].DeltaPct != 15 || c.Rows[5].DeltaPct != nil {
		t.Errorf("delta pct %v %v", c.Rows[0].DeltaPct, c.Rows[5].DeltaPct)
	}
}

func TestRunFromRows(t *testing.T) {
	rows := []artifact.Row{
		{Timestamp: "t", Tag: "g", TestName: "n", Metric: "server_summary", Measurements: artifact.Object{{Key: "restore_p99_s", Value: "1.0"}}},
		{Timestamp: "t", Tag: "g", TestName: "n", Metric: "ladder_summary", Measurements: artifact.Object{{Key: "max_sustained_rps", Value: "700"}}},
		{Timestamp: "t", Tag: "g", TestName: "n", Metric: "server_summary", Measurements: artifact.Object{{Key: "restore_p99_s", Value: "2.0"}}},
		{Timestamp: "t", Tag: "g", TestName: "n", Metric: "gate_summary", Measurements: artifact.Object{{Key: "failed", Value: "1"}}},
		{Timestamp: "t", Tag: "g", TestName: "n", Metric: "trial_summary", Measurements: artifact.Object{{Key: "run_start", Value: "1700000000"}}},
	}
	r := RunFromRows(rows)
	if x, _ := r.Number("restore_p99_s"); x != 2 {
		t.Errorf("last row set should win: %v", x)
	}
	if x, _ := r.Number("ladder_summary.max_sustained_rps"); x != 700 {
		t.Errorf("dotted key %v", x)
	}
	if _, ok := r.Get("gate_summary.failed"); ok {
		t.Error("gate rows are not measurements")
	}
	if r.Start != 1700000000 || r.TestName != "n" {
		t.Errorf("identity %+v", r)
	}
}

func FuzzParseGates(f *testing.F) {
	f.Add([]byte(sampleGates))
	f.Add([]byte("gates:\n  - key: x.y\n    min: 1\n    max: 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		gs, err := ParseGates(data)
		if err != nil {
			if !errors.Is(err, ErrGates) {
				t.Fatalf("error not wrapping ErrGates: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, g := range gs.Gates {
			if g.Min == nil && g.Max == nil && g.MaxRegressionPct == nil {
				t.Fatal("gate without a bound accepted")
			}
			if g.Min != nil && g.Max != nil && *g.Min > *g.Max {
				t.Fatal("min > max accepted")
			}
			if seen[Sanitise(g.Key)] {
				t.Fatal("duplicate accepted")
			}
			seen[Sanitise(g.Key)] = true
		}
		rs := Evaluate(gs, testRun("x"), nil)
		for _, r := range rs {
			if r.Verdict == Pass && !r.Gate.AllowNull {
				t.Fatal("an unmeasured value passed")
			}
		}
	})
}

// TestParseGatesErrorText: a structural mistake names its line, the gate
// and, for an unknown field, the nearest known field; all on one line.
func TestParseGatesErrorText(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown field", "gates:\n  - key: cluster_packing_p50\n    min: 0.8\n  - key: restore_p99_s\n    mx: 5\n",
			`gates file: line 5: gate 2 (restore_p99_s): unknown field "mx" (did you mean max?); known: key, min, max, max_regression_pct, allow_null, direction`},
		{"near a long field", "gates:\n  - key: restore_p99_s\n    max_regresion_pct: 5\n",
			`line 3: gate 1 (restore_p99_s): unknown field "max_regresion_pct" (did you mean max_regression_pct?)`},
		{"no near field", "gates:\n  - key: restore_p99_s\n    max: 5\n    threshold: 3\n",
			`line 4: gate 1 (restore_p99_s): unknown field "threshold"; known: key,`},
		{"gate without a key", "gates:\n  - mix: 5\n",
			`line 2: gate 1: unknown field "mix" (did you mean min?)`},
		{"unknown top", "gate:\n  - key: restore_p99_s\n    max: 5\n",
			`line 1: the file: unknown field "gate" (did you mean gates?)`},
		{"string bound", "gates:\n  - key: restore_p99_s\n    max: five\n",
			"gates file: gate 1 (restore_p99_s): line 3: cannot unmarshal !!str `five` into float64"},
		{"malformed", "gates: [\n", "gates file: yaml: line 1:"},
		{"not a list", "gates: 3\n", "gates file: line 1: gates is not a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGates([]byte(tc.text))
			if !errors.Is(err, ErrGates) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v\nwant one line with %q", err, tc.want)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	fields := gateFields()
	for s, want := range map[string]string{"mx": "max", "maxx": "max", "allownull": "allow_null", "directon": "direction", "key": "key", "zzzzzz": ""} {
		if got := nearest(s, fields); got != want {
			t.Errorf("nearest(%q) = %q, want %q", s, got, want)
		}
	}
}
