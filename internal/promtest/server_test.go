package promtest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const tinyOM = `# TYPE demo_gauge gauge
demo_gauge{job="x",instance="a"} 1.5 1700000000
demo_gauge{job="x",instance="a"} 2.5 1700000015
demo_gauge{job="x",instance="a"} NaN 1700000030
# TYPE demo_events counter
demo_events_total{job="x"} 3 1700000007
demo_events_total{job="x"} 1e+21 1700000022
# EOF
`

func writeTiny(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tiny.om")
	if err := os.WriteFile(p, []byte(tinyOM), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMissingBinaryNamesPackage(t *testing.T) {
	for _, c := range []struct{ bin, pkg string }{
		{"/nonexistent/prometheus", PrometheusPkg},
		{"/nonexistent/victoria-metrics", VMPkg},
	} {
		err := needBinary(c.bin, c.pkg)
		if !errors.Is(err, ErrMissingBinary) {
			t.Fatalf("%s: error %v does not wrap ErrMissingBinary", c.bin, err)
		}
		if want := "apt-get install -y --no-install-recommends " + c.pkg; !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestFindBinary(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "fake-prom")
	if err := os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, c := range []struct {
		name, env, want, wantErr string
	}{
		{"on PATH", "", onPath, ""},
		{"override", onPath, onPath, ""},
		{"override missing", "/nonexistent/prometheus", "", "PROMETHEUS_BIN=/nonexistent/prometheus"},
		{"not on PATH", "", "", "set PROMETHEUS_BIN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "fake-prom"
			if c.name == "not on PATH" {
				name = "no-such-prometheus"
			}
			getenv := func(k string) string {
				if k == PrometheusEnv {
					return c.env
				}
				return ""
			}
			got, err := FindBinary(getenv, PrometheusEnv, name, PrometheusPkg)
			if c.wantErr != "" {
				if !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), PrometheusPkg) {
					t.Fatalf("FindBinary = %q, %v; want an ErrMissingBinary saying %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("FindBinary = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestConvertOMToPromMillis(t *testing.T) {
	cases := []struct{ in, want string }{
		{tinyOM, `demo_gauge{job="x",instance="a"} 1.5 1700000000000
demo_gauge{job="x",instance="a"} 2.5 1700000015000
demo_gauge{job="x",instance="a"} NaN 1700000030000
demo_events_total{job="x"} 3 1700000007000
demo_events_total{job="x"} 1e+21 1700000022000
`},
		{"m{a=\"x y\"} 1 1700000000.5\n# EOF\n", "m{a=\"x y\"} 1 1700000000500\n"},
		{"", ""},
	}
	for _, c := range cases {
		var out bytes.Buffer
		if err := convertOMToPromMillis(strings.NewReader(c.in), &out, map[string]struct{}{}, &omSamples{}); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("got\n%s\nwant\n%s", out.String(), c.want)
		}
	}
	var out bytes.Buffer
	if err := convertOMToPromMillis(strings.NewReader("m 1 soon\n"), &out, map[string]struct{}{}, &omSamples{}); err == nil {
		t.Error("a bad timestamp was accepted")
	}
}

// TestStartAndClose exercises the per-test wrappers on a tiny file: the
// data is queryable at its old timestamps, NaN comes back from Prometheus,
// and Close really stops the process.
func TestStartAndClose(t *testing.T) {
	om := writeTiny(t)
	srv := Start(t, om)
	got, err := srv.Raw(ctx(t), `{__name__=~"demo_.*"}`, 1700000000, 1700000030)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[1].Samples) != 3 || got[1].Samples[0].V != 1.5 || got[0].Samples[1].V != 1e21 {
		t.Fatalf("read back %+v", got)
	}
	// Lookback: the NaN is the latest sample for 5 minutes.
	v, err := srv.Query(ctx(t), `demo_gauge`, 1700000030+300)
	if err != nil || len(v) != 1 || v[0].Samples[0].V == v[0].Samples[0].V {
		t.Fatalf("instant query at the lookback edge: %+v %v", v, err)
	}
	v, err = srv.Query(ctx(t), `demo_gauge`, 1700000030+301)
	if err != nil || len(v) != 0 {
		t.Fatalf("instant query past the lookback: %+v %v", v, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if resp, err := (&http.Client{Timeout: time.Second}).Get(srv.URL + "/-/ready"); err == nil {
		resp.Body.Close()
		t.Fatal("prometheus still answers after Close")
	}

	vm := StartVM(t, om)
	got, err = vm.Raw(ctx(t), `{__name__=~"demo_.*"}`, 1700000000, 1700000030)
	if err != nil {
		t.Fatal(err)
	}
	// VictoriaMetrics drops the NaN.
	if len(got) != 2 || len(got[1].Samples) != 2 || got[1].Samples[1].V != 2.5 {
		t.Fatalf("VictoriaMetrics read back %+v", got)
	}
	vm.Close()
	if resp, err := (&http.Client{Timeout: time.Second}).Get(vm.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Fatal("victoria-metrics still answers after Close")
	}
}

func TestLaunchRejectsBadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.om")
	os.WriteFile(p, []byte("this is not openmetrics\n"), 0o644)
	_, err := Launch(context.Background(), p, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "promtool") {
		t.Fatalf("error %v should name the backfill", err)
	}
}

func TestLaunchHonoursContext(t *testing.T) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Launch(c, writeTiny(t), t.TempDir()); err == nil {
		t.Fatal("Launch with a cancelled context succeeded")
	}
}
