package ladder

import (
	"errors"
	"strings"
	"testing"
)

func TestBuiltinRoundTrip(t *testing.T) {
	y, err := Builtin().YAML()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile(y, DefaultVars())
	if err != nil {
		t.Fatalf("built-in profile does not parse: %v\n%s", err, y)
	}
	ex, err := Builtin().Expand(DefaultVars())
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != len(ex) {
		t.Fatalf("%d figures, want %d", len(p), len(ex))
	}
	for i := range p {
		if p[i].Key != ex[i].Key || p[i].Query != ex[i].Query || p[i].Reduce != ex[i].Reduce || p[i].By != ex[i].By || strings.Join(p[i].Values, ",") != strings.Join(ex[i].Values, ",") {
			t.Errorf("figure %d: %+v, want %+v", i, p[i], ex[i])
		}
	}
	if !strings.Contains(string(y), "${resume_name}") || !strings.Contains(string(y), "quantile:0.99") {
		t.Errorf("printed profile lacks placeholders or quantiles:\n%s", y)
	}
	keys := map[string]bool{}
	for _, f := range ex {
		keys[f.Key] = true
	}
	for _, k := range []string{"resume_requests", "pause_rps", "failures_{snake}", "resume_p50_ms", "resume_server_p99_ms", "pause_server_p90_ms",
		"ateapi_cpu_cores_avg", "postgres_cpu_cores_max", "fake_atelet_memory_gb_max", "postgres_connections_avg", "postgres_commits_per_s", "postgres_waits_avg"} {
		if !keys[k] {
			t.Errorf("built-in profile lacks %s", k)
		}
	}
	if len(ex) != 5+12+9+3 {
		t.Errorf("%d figures", len(ex))
	}
}

func TestParseProfileErrors(t *testing.T) {
	cases := map[string]string{
		"empty":               "",
		"not a list":          "key: a\n",
		"unknown field":       "- key: a\n  query: x\n  reduce: max\n  unit: ms\n",
		"unknown reduction":   "- key: a\n  query: x\n  reduce: median\n",
		"bad quantile":        "- key: a\n  query: x\n  reduce: quantile:1.5\n",
		"quantile no number":  "- key: a\n  query: x\n  reduce: 'quantile:'\n",
		"empty query":         "- key: a\n  query: '  '\n  reduce: max\n",
		"duplicate keys":      "- key: a\n  query: x\n  reduce: max\n- key: a\n  query: y\n  reduce: min\n",
		"growth of rate":      "- key: a\n  query: rate(x[1m])\n  reduce: growth\n",
		"quantile of sum":     "- key: a\n  query: sum(x_bucket)\n  reduce: quantile:0.5\n",
		"bad key":             "- key: A-b\n  query: x\n  reduce: max\n",
		"reserved key":        "- key: users\n  query: x\n  reduce: max\n",
		"template without by": "- key: f_{snake}\n  query: x\n  reduce: growth\n",
		"by without template": "- key: f\n  query: x\n  reduce: growth\n  by: name\n",
		"values without by":   "- key: f\n  query: x\n  reduce: growth\n  values: [a]\n",
		"bad label":           "- key: f_{value}\n  query: x\n  reduce: growth\n  by: 'a-b'\n",
		"unknown placeholder": "- key: a\n  query: x{n=\"${nope}\"}\n  reduce: growth\n",
		"fan-out collision":   "- key: f_{snake}\n  query: x\n  reduce: growth\n  by: name\n- key: f_a\n  query: y\n  reduce: growth\n",
		"no figures":          "[]\n",
	}
	for name, y := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseProfile([]byte(y), DefaultVars())
			if !errors.Is(err, ErrProfile) {
				t.Fatalf("err = %v, want ErrProfile", err)
			}
		})
	}
}

func TestParseProfileUser(t *testing.T) {
	y := `
- key: resume_rps
  query: 'locust_requests_total{name="${resume_name}", status="success"}'
  reduce: growth_rate
- key: api_cpu
  query: sum(rate(container_cpu_usage_seconds_total{container="x"}[1m]))
  reduce: mean
- key: p95_ms
  query: 'h_bucket{name="${pause_name}"}'
  reduce: quantile:0.95
`
	p, err := ParseProfile([]byte(y), Vars{"resume_name": "R", "pause_name": "P"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 3 || p[0].Query != `locust_requests_total{name="R", status="success"}` || p[2].Query != `h_bucket{name="P"}` {
		t.Fatalf("%+v", p)
	}
	if q, ok := p[2].Quantile(); !ok || q != 0.95 {
		t.Errorf("quantile %v %v", q, ok)
	}
}

func FuzzParseProfile(f *testing.F) {
	b, _ := Builtin().YAML()
	f.Add(b)
	f.Add([]byte("- key: a\n  query: x\n  reduce: quantile:0.5\n"))
	f.Add([]byte("- {key: f_{snake}, query: 'x{a=\"${resume_name}\"}', reduce: growth, by: name, values: [a, b]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data, DefaultVars())
		if err != nil {
			if !errors.Is(err, ErrProfile) {
				t.Fatalf("error without ErrProfile: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed profile does not validate: %v", err)
		}
		y, err := p.YAML()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseProfile(y, DefaultVars())
		if err != nil || len(q) != len(p) {
			t.Fatalf("printed profile does not parse back: %v\n%s", err, y)
		}
	})
}
