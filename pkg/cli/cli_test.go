package cli

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// flags is a small command's flags: two switches that default to on, one
// that is off, a real --no-wait, a repeatable header and the groups.
type flags struct {
	report, ladder, verbose, noWait bool
	headers                         []string
	url, store, run                 string
	timeout                         time.Duration
}

func newFlags() (*flags, *Command) {
	f := &flags{}
	fs := NewFlagSet("density test")
	fs.BoolVar(&f.report, "report", true, "write the report")
	fs.BoolVar(&f.ladder, "ladder", true, "write the ladder rows")
	fs.BoolVar(&f.verbose, "verbose", false, "print queries")
	fs.BoolVar(&f.noWait, "no-wait", false, "do not wait")
	Prometheus{URL: &f.url, DefaultURL: "http://prom:9090", Headers: &f.headers, Timeout: &f.timeout}.AddTo(fs)
	Store{Store: &f.store, Run: &f.run}.AddTo(fs)
	AddNegations(fs)
	return f, &Command{Use: "test [flags]", Long: "A test command.", Flags: fs,
		Run: func(context.Context, []string) int { return 0 }}
}

func TestNegations(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		report, ladder bool
		changed        []string
	}{
		{nil, true, true, nil},
		{[]string{"--no-report"}, false, true, []string{"report"}},
		{[]string{"--no-report", "--no-ladder"}, false, false, []string{"report", "ladder"}},
		{[]string{"--no-report=false"}, true, true, []string{"report"}},
		{[]string{"--report=false", "--no-ladder=true"}, false, false, []string{"report", "ladder"}},
		{[]string{"--no-ladder", "--ladder"}, true, true, []string{"ladder"}}, // the last one wins
	} {
		f, c := newFlags()
		if err := c.Flags.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if f.report != tc.report || f.ladder != tc.ladder {
			t.Errorf("%v: report %v ladder %v, want %v %v", tc.args, f.report, f.ladder, tc.report, tc.ladder)
		}
		for _, name := range tc.changed {
			if !c.Flags.Changed(name) {
				t.Errorf("%v: --%s does not count as given", tc.args, name)
			}
		}
	}
	_, c := newFlags()
	if c.Flags.Lookup("no-verbose") != nil {
		t.Error("a switch that defaults to off got a negation")
	}
	if f := c.Flags.Lookup("no-wait"); f == nil || IsNegation(f) {
		t.Error("--no-wait is a flag of its own, not a negation")
	}
	if f := c.Flags.Lookup("no-report"); f == nil || !f.Hidden {
		t.Error("--no-report is missing or shown in the flag list")
	}
}

func TestEnv(t *testing.T) {
	f, c := newFlags()
	names := EnvNames(c.Flags)
	want := [][2]string{{"--header", "HEADER"}, {"--ladder", "LADDER"}, {"--no-wait", "NO_WAIT"}, {"--prometheus-url", "PROMETHEUS_URL"},
		{"--report", "REPORT"}, {"--run", "RUN"}, {"--store", "STORE"}, {"--timeout", "TIMEOUT"}, {"--verbose", "VERBOSE"}}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("EnvNames\n got %v\nwant %v", names, want)
	}
	env := map[string]string{"HEADER": "A: 1\nB: 2\n", "REPORT": "false", "TIMEOUT": "3s", "NO_REPORT": "false"}
	if err := SetFromEnv(c.Flags, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if f.report || !c.Flags.Changed("report") || f.timeout != 3*time.Second || !reflect.DeepEqual(f.headers, []string{"A: 1", "B: 2"}) || f.url != "http://prom:9090" {
		t.Errorf("from the environment: %+v", f)
	}
	_, c = newFlags()
	err := SetFromEnv(c.Flags, func(k string) string { return map[string]string{"HEADER": "no colon"}[k] })
	if err == nil || !strings.Contains(err.Error(), `HEADER="no colon"`) {
		t.Errorf("bad header from the environment: %v", err)
	}
}

func TestCommandMain(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"--help"}, 0, "Usage: density test [flags]", ""},
		{[]string{"-h"}, 0, "--prometheus-url string", ""},
		{[]string{"--bogus"}, 2, "", "density test: unknown flag --bogus\n"},
		{[]string{"--timeout", "x"}, 2, "", `invalid argument "x" for "--timeout" flag`},
		{[]string{"--no-report"}, 0, "", ""},
	} {
		_, c := newFlags()
		var out, errOut bytes.Buffer
		if code := c.Main(context.Background(), tc.args, &out, &errOut); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.out) || !strings.Contains(errOut.String(), tc.err) {
			t.Errorf("%v: stdout %q stderr %q", tc.args, out.String(), errOut.String())
		}
		if strings.Contains(out.String(), "no-report") {
			t.Errorf("%v: the help lists the hidden --no-report", tc.args)
		}
	}
}
