package verdicts

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/percentile"
)

// ErrGates wraps every problem of a gates file (a usage error).
var ErrGates = errors.New("gates file")

// Gate is one objective of a gates file.
type Gate struct {
	Key              string   `json:"key"`
	Min              *float64 `json:"min,omitempty"`
	Max              *float64 `json:"max,omitempty"`
	MaxRegressionPct *float64 `json:"max_regression_pct,omitempty"`
	AllowNull        bool     `json:"allow_null,omitempty"`
	// Direction overrides the key's built-in direction ("higher"/"lower").
	Direction string `json:"direction,omitempty"`

	dir Direction
}

// Dir is the direction the gate judges regressions by.
func (g Gate) Dir() Direction { return g.dir }

// Gates is a parsed, validated gates file.
type Gates struct {
	Gates []Gate `json:"gates"`
}

// NeedsBaseline reports whether a gate compares against a baseline.
func (gs Gates) NeedsBaseline() bool {
	for _, g := range gs.Gates {
		if g.MaxRegressionPct != nil {
			return true
		}
	}
	return false
}

// ParseGates reads and validates a gates file: unknown fields, a key with
// no bound, min > max, an unknown undotted key, duplicate keys after
// sanitising, a regression bound on a key without a direction, or
// malformed YAML are errors wrapping ErrGates. A structural mistake (bad
// YAML, an unknown field, a value of the wrong kind) names its line, the
// gate, and for a field the nearest known one.
func ParseGates(data []byte) (Gates, error) {
	var gs Gates
	if len(bytes.TrimSpace(data)) == 0 {
		return gs, fmt.Errorf("%w: empty", ErrGates)
	}
	if err := checkGatesYAML(data); err != nil {
		return Gates{}, err
	}
	if err := yaml.UnmarshalStrict(data, &gs); err != nil {
		return Gates{}, fmt.Errorf("%w: %v", ErrGates, err)
	}
	if len(gs.Gates) == 0 {
		return Gates{}, fmt.Errorf("%w: no gates", ErrGates)
	}
	seen := map[string]string{}
	for i := range gs.Gates {
		g := &gs.Gates[i]
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: gate %d (%s): %s", ErrGates, i+1, g.Key, fmt.Sprintf(format, a...))
		}
		switch {
		case g.Key == "":
			return Gates{}, fmt.Errorf("%w: gate %d: no key", ErrGates, i+1)
		case !strings.Contains(g.Key, ".") && !Known(g.Key):
			return Gates{}, bad("unknown key (not a server_summary or trial_summary key, and not <metric>.<key>)")
		case g.Min == nil && g.Max == nil && g.MaxRegressionPct == nil:
			return Gates{}, bad("no bound (min, max or max_regression_pct)")
		case g.Min != nil && g.Max != nil && *g.Min > *g.Max:
			return Gates{}, bad("min %s > max %s", artifact.FormatFloat(*g.Min), artifact.FormatFloat(*g.Max))
		case g.MaxRegressionPct != nil && *g.MaxRegressionPct < 0:
			return Gates{}, bad("max_regression_pct is negative")
		}
		for _, p := range []*float64{g.Min, g.Max, g.MaxRegressionPct} {
			if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
				return Gates{}, bad("bounds must be finite numbers")
			}
		}
		g.dir = DirectionOf(g.Key)
		if g.Direction != "" {
			d, ok := ParseDirection(g.Direction)
			if !ok {
				return Gates{}, bad("direction %q (want higher or lower)", g.Direction)
			}
			g.dir = d
		}
		if g.MaxRegressionPct != nil && g.dir == None {
			return Gates{}, bad("max_regression_pct on a key without a direction (set direction: higher|lower)")
		}
		s := Sanitise(g.Key)
		if prev, dup := seen[s]; dup {
			return Gates{}, bad("same row name gate_%s as key %s", s, prev)
		}
		seen[s] = g.Key
	}
	return gs, nil
}

// Verdicts of a gate.
const (
	Pass = "pass"
	Fail = "fail"
)

// Reasons a gate gives.
const (
	ReasonNotMeasured         = "not measured"
	ReasonBaselineNotMeasured = "baseline not measured"
	ReasonNoBaseline          = "no baseline"
)

// GateResult is the verdict of one gate.
type GateResult struct {
	Gate     Gate
	Value    *float64
	Baseline *float64
	DeltaPct *float64
	Verdict  string
	Reason   string // "" when passed without remark
}

// Evaluate judges every gate on run; baseline is nil when no baseline run
// was given (a regression gate then fails with reason "no baseline").
// Unmeasured values (null, absent, not a number) fail unless the gate
// allows null. Bounds are inclusive.
func Evaluate(gs Gates, run *Run, baseline *Run) []GateResult {
	out := make([]GateResult, 0, len(gs.Gates))
	for _, g := range gs.Gates {
		out = append(out, evaluate(g, run, baseline))
	}
	return out
}

func evaluate(g Gate, run, baseline *Run) GateResult {
	r := GateResult{Gate: g, Verdict: Pass}
	var reasons []string
	fail := func(reason string) {
		r.Verdict = Fail
		reasons = append(reasons, reason)
	}
	v, ok := run.Number(g.Key)
	if ok {
		r.Value = &v
	}
	if baseline != nil {
		if b, bok := baseline.Number(g.Key); bok {
			r.Baseline = &b
			if ok && b != 0 {
				d := percentile.Round((v-b)/math.Abs(b)*100, 4)
				r.DeltaPct = &d
			}
		}
	}
	if !ok {
		if g.AllowNull {
			r.Reason = ReasonNotMeasured + " (allowed)"
			return r
		}
		fail(ReasonNotMeasured)
		r.Reason = strings.Join(reasons, "; ")
		return r
	}
	if g.Min != nil && v < *g.Min {
		fail(fmt.Sprintf("%s below min %s", artifact.FormatFloat(v), artifact.FormatFloat(*g.Min)))
	}
	if g.Max != nil && v > *g.Max {
		fail(fmt.Sprintf("%s above max %s", artifact.FormatFloat(v), artifact.FormatFloat(*g.Max)))
	}
	if g.MaxRegressionPct != nil {
		switch {
		case baseline == nil:
			fail(ReasonNoBaseline)
		case r.Baseline == nil:
			fail(ReasonBaselineNotMeasured)
		case r.DeltaPct == nil: // baseline 0: judged by sign
			if worse(g.dir, v-*r.Baseline) {
				fail(fmt.Sprintf("regression from a baseline of 0 to %s", artifact.FormatFloat(v)))
			}
		default:
			bad := *r.DeltaPct
			if g.dir == Higher {
				bad = -bad
			}
			if bad > *g.MaxRegressionPct {
				fail(fmt.Sprintf("regression %s %% against the baseline (max %s %%)",
					artifact.FormatFloat(bad), artifact.FormatFloat(*g.MaxRegressionPct)))
			}
		}
	}
	r.Reason = strings.Join(reasons, "; ")
	return r
}

// worse reports whether a change of sign delta is bad in direction d.
func worse(d Direction, delta float64) bool {
	return d == Lower && delta > 0 || d == Higher && delta < 0
}

// GateSummary counts the verdicts.
type GateSummary struct {
	Gates, Passed, Failed int
}

// Verdict is pass only when every gate passed.
func (s GateSummary) Verdict() string {
	if s.Failed == 0 {
		return Pass
	}
	return Fail
}

// Summarise counts results.
func Summarise(rs []GateResult) GateSummary {
	s := GateSummary{Gates: len(rs)}
	for _, r := range rs {
		if r.Verdict == Pass {
			s.Passed++
		} else {
			s.Failed++
		}
	}
	return s
}

// Metric of the summary row of the gate family.
const MetricGateSummary = artifact.MetricGateSummary

// GateRows are the gate family's stats.jsonl rows: one gate_<key> row per
// gate, then gate_summary; every value a string or null.
func GateRows(rs []GateResult, timestamp, tag, testName string) []artifact.Row {
	num := func(p *float64) any { return artifact.FloatMeasurement(p) }
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	rows := make([]artifact.Row, 0, len(rs)+1)
	for _, r := range rs {
		rows = append(rows, artifact.Row{
			Timestamp: timestamp, Tag: tag, TestName: testName,
			Metric: "gate_" + Sanitise(r.Gate.Key),
			Measurements: artifact.Object{
				{Key: "key", Value: r.Gate.Key},
				{Key: "value", Value: num(r.Value)},
				{Key: "min", Value: num(r.Gate.Min)},
				{Key: "max", Value: num(r.Gate.Max)},
				{Key: "baseline", Value: num(r.Baseline)},
				{Key: "delta_pct", Value: num(r.DeltaPct)},
				{Key: "max_regression_pct", Value: num(r.Gate.MaxRegressionPct)},
				{Key: "verdict", Value: r.Verdict},
				{Key: "reason", Value: str(r.Reason)},
			},
		})
	}
	s := Summarise(rs)
	rows = append(rows, artifact.Row{
		Timestamp: timestamp, Tag: tag, TestName: testName, Metric: MetricGateSummary,
		Measurements: artifact.Object{
			{Key: "gates", Value: strconv.Itoa(s.Gates)},
			{Key: "passed", Value: strconv.Itoa(s.Passed)},
			{Key: "failed", Value: strconv.Itoa(s.Failed)},
			{Key: "verdict", Value: s.Verdict()},
		},
	})
	return rows
}

// MatchGateRows matches the gate family's lines of one run (for replacing
// an earlier family in place).
func MatchGateRows(timestamp, tag, testName string) func(line []byte) bool {
	return artifact.MatchRunFamily(timestamp, tag, testName, IsGateMetric)
}
