// Package ladder holds the per-step figures of a ladder run
// (ladder-steps.md): the profile of figures, its evaluation over each
// step's steady window with the promql engine, the ladder_step rows and the
// ladder_summary row.
package ladder

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/substrate/density/pkg/promql"
)

// Reductions of a figure.
const (
	ReduceGrowth     = "growth"      // restart-aware window growth, summed
	ReduceGrowthRate = "growth_rate" // that growth / W
	ReduceMean       = "mean"        // mean of a range read at 10 s inside [A, B]
	ReduceMax        = "max"
	ReduceMin        = "min"
	reduceQuantile   = "quantile:" // quantile:<q> of per-le growth of a _bucket selector
)

// Figure is one entry of a profile: a key of the step rows, the PromQL
// it reads and how the read becomes one value.
type Figure struct {
	Key    string `json:"key"`
	Query  string `json:"query"`
	Reduce string `json:"reduce"`
	// By fans the figure out per value of a label: Key holds `{snake}`
	// (the value by the camel-to-snake rule) or `{value}`.
	By string `json:"by,omitempty"`
	// Values are label values of By always reported. A value without
	// series in the window is 0 when another growth figure selecting
	// By="value" found series (a load generator creates its failure
	// series only on the first failure, its success series are there),
	// else null.
	Values []string `json:"values,omitempty"`
}

// Profile is the list of figures evaluated over every step window, in row
// key order (fanned-out keys sorted in place of their entry).
type Profile []Figure

// Vars fill a profile's `${name}` placeholders (the export's flags).
type Vars map[string]string

// DefaultVars are the flags' defaults (ladder-steps.md).
func DefaultVars() Vars {
	return Vars{
		"resume_name":           "ResumeActorCold",
		"pause_name":            "SuspendActorAsync",
		"ateapi_namespace":      "ate-system",
		"ateapi_container":      "ate-api-server",
		"postgres_namespace":    "ate-system",
		"postgres_container":    "postgres",
		"fake_atelet_namespace": "ate-system",
		"fake_atelet_container": "fake-atelet",
	}
}

// Components are the three workloads whose CPU and memory the built-in
// profile reads: key prefix and the placeholder prefix of their namespace
// and container.
var components = []string{"ateapi", "postgres", "fake_atelet"}

// Builtin is the spec's table as a profile (placeholders unexpanded).
func Builtin() Profile {
	req := func(op, status string) string {
		return `locust_requests_total{name="${` + op + `}", status="` + status + `"}`
	}
	p := Profile{
		{Key: "resume_requests", Query: req("resume_name", "success"), Reduce: ReduceGrowth},
		{Key: "pause_requests", Query: req("pause_name", "success"), Reduce: ReduceGrowth},
		{Key: "resume_rps", Query: req("resume_name", "success"), Reduce: ReduceGrowthRate},
		{Key: "pause_rps", Query: req("pause_name", "success"), Reduce: ReduceGrowthRate},
		{Key: "failures_{snake}", Query: `locust_requests_total{status="failure"}`, Reduce: ReduceGrowth,
			By: "name", Values: []string{"${resume_name}", "${pause_name}"}},
	}
	for _, op := range []string{"resume", "pause"} {
		for _, hist := range []struct{ infix, family string }{
			{"", "locust_request_duration_milliseconds_bucket"},
			{"_server", "locust_server_duration_milliseconds_bucket"},
		} {
			for _, q := range []string{"50", "90", "99"} {
				p = append(p, Figure{
					Key:    op + hist.infix + "_p" + q + "_ms",
					Query:  hist.family + `{name="${` + op + `_name}"}`,
					Reduce: reduceQuantile + "0." + q,
				})
			}
		}
	}
	for _, c := range components {
		sel := `{namespace="${` + c + `_namespace}", container="${` + c + `_container}"}`
		cpu := `sum(rate(container_cpu_usage_seconds_total` + sel + `[1m]))`
		p = append(p,
			Figure{Key: c + "_cpu_cores_avg", Query: cpu, Reduce: ReduceMean},
			Figure{Key: c + "_cpu_cores_max", Query: cpu, Reduce: ReduceMax},
			Figure{Key: c + "_memory_gb_max", Query: `sum(container_memory_working_set_bytes` + sel + `) / 1073741824`, Reduce: ReduceMax},
		)
	}
	return append(p,
		Figure{Key: "postgres_connections_avg", Query: `sum(pg_stat_database_numbackends)`, Reduce: ReduceMean},
		Figure{Key: "postgres_commits_per_s", Query: `pg_stat_database_xact_commit`, Reduce: ReduceGrowthRate},
		Figure{Key: "postgres_waits_avg", Query: `sum(pg_stat_activity_count{wait_event_type=~"Lock|LWLock|IO"})`, Reduce: ReduceMean},
	)
}

// Quantile returns q of a `quantile:<q>` reduction.
func (f Figure) Quantile() (float64, bool) {
	s, ok := strings.CutPrefix(f.Reduce, reduceQuantile)
	if !ok {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || !(q >= 0 && q <= 1) {
		return 0, false
	}
	return q, true
}

// reservedKeys are the step-row keys that come from the log line.
var reservedKeys = map[string]bool{
	"step": true, "steps": true, "users": true, "target_rps": true,
	"window_start": true, "window_end": true, "window_s": true,
}

var (
	keyRe         = regexp.MustCompile(`^[a-z][a-z0-9_]*(\{snake\}|\{value\})?[a-z0-9_]*$`)
	labelNameRe   = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	placeholderRe = regexp.MustCompile(`\$\{([^}]*)\}`)
)

// ErrProfile marks an invalid profile (a usage error of the export).
var ErrProfile = errors.New("invalid ladder profile")

// Expand fills `${name}` placeholders in queries and values; an unknown
// name is an error.
func (p Profile) Expand(vars Vars) (Profile, error) {
	var bad []string
	fill := func(s string) string {
		return placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
			name := m[2 : len(m)-1]
			v, ok := vars[name]
			if !ok {
				bad = append(bad, m)
			}
			return v
		})
	}
	out := make(Profile, len(p))
	for i, f := range p {
		f.Query = fill(f.Query)
		if f.Values != nil {
			vs := make([]string, len(f.Values))
			for j, v := range f.Values {
				vs[j] = fill(v)
			}
			f.Values = vs
		}
		out[i] = f
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: unknown placeholder %s", ErrProfile, strings.Join(bad, ", "))
	}
	return out, nil
}

// Validate checks an expanded profile: keys well formed and unique (after
// fan-out templates), queries non-empty, reductions known, plain selectors
// where a growth read needs one (checked with the engine's parser).
func (p Profile) Validate() error {
	if len(p) == 0 {
		return fmt.Errorf("%w: no figures", ErrProfile)
	}
	seen := map[string]bool{}
	for i, f := range p {
		where := fmt.Sprintf("entry %d (%q)", i+1, f.Key)
		switch {
		case !keyRe.MatchString(f.Key):
			return fmt.Errorf("%w: %s: key must be lower snake case (with at most one {snake} or {value} when by: is set)", ErrProfile, where)
		case reservedKeys[f.Key]:
			return fmt.Errorf("%w: %s: key is taken from the log line", ErrProfile, where)
		case seen[f.Key]:
			return fmt.Errorf("%w: %s: duplicate key", ErrProfile, where)
		case strings.TrimSpace(f.Query) == "":
			return fmt.Errorf("%w: %s: empty query", ErrProfile, where)
		}
		seen[f.Key] = true
		templated := strings.Contains(f.Key, "{")
		switch {
		case f.By != "" && !labelNameRe.MatchString(f.By):
			return fmt.Errorf("%w: %s: by: %q is not a label name", ErrProfile, where, f.By)
		case f.By != "" && !templated:
			return fmt.Errorf("%w: %s: by: needs {snake} or {value} in the key", ErrProfile, where)
		case f.By == "" && templated:
			return fmt.Errorf("%w: %s: {snake}/{value} in the key needs by:", ErrProfile, where)
		case f.By == "" && len(f.Values) > 0:
			return fmt.Errorf("%w: %s: values: needs by:", ErrProfile, where)
		}
		switch f.Reduce {
		case ReduceGrowth, ReduceGrowthRate:
		case ReduceMean, ReduceMax, ReduceMin:
			continue
		default:
			if _, ok := f.Quantile(); !ok {
				return fmt.Errorf("%w: %s: unknown reduction %q (growth, growth_rate, mean, max, min, quantile:<q> with 0 <= q <= 1)", ErrProfile, where, f.Reduce)
			}
		}
		if err := promql.PlainSelector(f.Query); err != nil {
			return fmt.Errorf("%w: %s: %s needs a plain selector: %v", ErrProfile, where, f.Reduce, err)
		}
	}
	// Fanned-out keys must not collide with plain ones.
	for _, f := range p {
		if !strings.Contains(f.Key, "{") {
			continue
		}
		pre, post, _ := strings.Cut(f.Key, "{")
		_, post, _ = strings.Cut(post, "}")
		for _, g := range p {
			if g.Key != f.Key && !strings.Contains(g.Key, "{") && strings.HasPrefix(g.Key, pre) && strings.HasSuffix(g.Key, post) && len(g.Key) > len(pre)+len(post) {
				return fmt.Errorf("%w: key %q may collide with the fan-out of %q", ErrProfile, g.Key, f.Key)
			}
		}
	}
	return nil
}

// ParseProfile reads a YAML profile (a list of key, query, reduce, and
// optionally by and values); unknown fields are errors. The result is
// validated after expanding vars.
func ParseProfile(data []byte, vars Vars) (Profile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty file", ErrProfile)
	}
	var p Profile
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProfile, err)
	}
	for i, f := range p {
		p[i].Key, p[i].Reduce, p[i].By = strings.TrimSpace(f.Key), strings.TrimSpace(f.Reduce), strings.TrimSpace(f.By)
	}
	ex, err := p.Expand(vars)
	if err != nil {
		return nil, err
	}
	if err := ex.Validate(); err != nil {
		return nil, err
	}
	return ex, nil
}

// YAML is the profile in ParseProfile's form.
func (p Profile) YAML() ([]byte, error) {
	return yaml.Marshal(p)
}

// Summary inputs: the keys the summary rule reads from the step rows.
const (
	KeyResumeRPS      = "resume_rps"
	KeyResumeRequests = "resume_requests"
)

// fanKey is the row key of one label value of a fanned-out figure.
func fanKey(tmpl, value string) string {
	if strings.Contains(tmpl, "{snake}") {
		return strings.Replace(tmpl, "{snake}", snake(value), 1)
	}
	return strings.Replace(tmpl, "{value}", value, 1)
}

func sortedStrings(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
