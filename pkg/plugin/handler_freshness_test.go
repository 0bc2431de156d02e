package plugin

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"

	"github.com/substrate/density/internal/demo"
	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// recordSandboxClass sets the trial_summary row's sandbox_class of a
// stats.jsonl (a template run exported without cluster facts).
func recordSandboxClass(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := artifact.ReadRows(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, l := range lines {
		raw := l.Raw
		if r := l.Row; r != nil && r.Metric == artifact.MetricTrialSummary {
			for i, f := range r.Measurements {
				if f.Key == "sandbox_class" {
					r.Measurements[i].Value = "template"
				}
			}
			if raw, err = r.MarshalLine(); err != nil {
				t.Fatal(err)
			}
		}
		out = append(append(out, raw...), '\n')
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// freshnessTruth is what freshness must say of a store's runs at now: per
// sandbox class, the hours since the newest run's recorded end and the
// runs started in the 7 days up to now.
func freshnessTruth(t *testing.T, rs []demo.StoreRun, now time.Time) map[string][2]float64 {
	t.Helper()
	out := map[string][2]float64{}
	ends := map[string]int64{}
	for _, r := range rs {
		b, err := os.ReadFile(filepath.Join(r.Dir, runs.FileServerSummary))
		if err != nil {
			t.Fatal(err)
		}
		s, err := artifact.ReadServerSummary(b)
		if err != nil {
			t.Fatal(err)
		}
		v := out[r.Sandbox]
		if s.Meta.End > ends[r.Sandbox] {
			ends[r.Sandbox] = s.Meta.End
		}
		if age := now.Unix() - r.Start; age >= 0 && age <= 7*86400 {
			v[1]++
		}
		out[r.Sandbox] = v
	}
	for k, end := range ends {
		v := out[k]
		v[0] = math.Round(float64(now.Unix()-end)/3600*100) / 100
		out[k] = v
	}
	return out
}

// readFreshness reads a freshness answer with Grafana's dataplane reader:
// numeric-wide 0.1, every field labelled; it returns the two numbers per
// sandbox class.
func readFreshness(t *testing.T, r backend.DataResponse, testName string) map[string][2]float64 {
	t.Helper()
	c := numericCollection(t, r, data.FrameTypeNumericWide)
	out := map[string][2]float64{}
	for _, ref := range c.Refs {
		l := ref.GetLabels()
		if l[labelTestName] != testName {
			t.Errorf("series %s%s: test_name label, want %s", ref.GetMetricName(), l, testName)
		}
		v, _, err := ref.NullableFloat64Value()
		if err != nil || v == nil {
			t.Fatalf("series %s%s: %v %v", ref.GetMetricName(), l, v, err)
		}
		x := out[l["sandbox_class"]]
		switch ref.GetMetricName() {
		case freshHours:
			x[0] = *v
		case freshRuns:
			x[1] = *v
		default:
			t.Errorf("unexpected series %s", ref.GetMetricName())
		}
		out[l["sandbox_class"]] = x
	}
	if len(c.Refs) != 2*len(out) {
		t.Errorf("%d series for %d cohorts", len(c.Refs), len(out))
	}
	return out
}

// Freshness over a store of two cohorts (gVisor and microVM nightly runs),
// over gRPC with the datasource's clock set: per cohort the hours since its
// newest run's recorded end and its runs of the last 7 days, whatever the
// query's range; a day later the hours grow by 24 and the week holds fewer
// runs.
func TestFreshness(t *testing.T) {
	now := time.Date(2026, 3, 10, 9, 30, 0, 0, time.UTC)
	// The template run has no cluster facts: record a sandbox class so that
	// each written run records its series' class (its cohort).
	tmpl, promURL := storetest.Template(t)
	recordSandboxClass(t, filepath.Join(tmpl, runs.FileStatsJSONL))
	m, err := storetest.WriteMany(tmpl, t.TempDir(), 20, now)
	if err != nil {
		t.Fatal(err)
	}
	m.PromURL = promURL
	e := &env{name: "freshness", storeRoot: m.Root, promURL: m.PromURL, now: now,
		jsonData: map[string]any{"resultsStore": m.URL, "discoverRuns": false, "timeoutSeconds": 30},
		uid:      fmt.Sprintf("ds-freshness-%d", envSeq.Add(1))}

	for _, at := range []time.Time{now, now.Add(24 * time.Hour)} {
		e.now = at
		c := e.client(t)
		want := freshnessTruth(t, m.Runs, at)
		// A range far from every run: freshness ignores it.
		r := e.query(t, c, q("A", 1e9, 1e9+3600, map[string]any{"queryType": "freshness"}))["A"]
		got := readFreshness(t, r, m.TestName)
		if len(got) != 2 {
			t.Fatalf("%d cohorts, want gvisor and microvm: %v", len(got), got)
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("at %s, cohort %s: hours_since_last_run %v, runs_last_7d %v; want %v, %v", at, k, got[k][0], got[k][1], w[0], w[1])
			}
		}
		t.Logf("at %s: %v", at.Format(time.RFC3339), got)
	}

	e.now = now
	c := e.client(t)
	other := e.query(t, c, q("A", 0, 1, map[string]any{"queryType": "freshness", "testName": "another-test"}))["A"]
	if other.Error != nil || len(other.Frames) != 1 || len(other.Frames[0].Fields) != 0 {
		t.Errorf("a test without runs: %v, %d frames, want the empty numeric-wide frame", other.Error, len(other.Frames))
	}
	hours := e.query(t, c, q("A", 0, 1, map[string]any{"queryType": "freshness", "keys": "hours_since_last_run"}))["A"]
	if hours.Error != nil || len(hours.Frames[0].Fields) != 2 || hours.Frames[0].Fields[1].Name != freshHours {
		t.Errorf("keys hours_since_last_run: %v, want that field per cohort alone", hours.Error)
	}
	if r := e.query(t, c, q("A", 0, 1, map[string]any{"queryType": "freshness", "keys": "hours"}))["A"]; r.Status != backend.StatusBadRequest {
		t.Errorf("keys hours: status %d, want 400", r.Status)
	}
	bad := e.query(t, c, q("A", 0, 1, map[string]any{"queryType": "freshness", "testName": "../x"}))["A"]
	if bad.Status != backend.StatusBadRequest {
		t.Errorf("testName ../x: status %d, want 400", bad.Status)
	}

	e.uid = "golden-freshness"
	r := e.query(t, e.client(t), q("A", 0, 1, map[string]any{"queryType": "freshness"}))["A"]
	experimental.CheckGoldenJSONResponse(t, "testdata/golden", "many-freshness", &r, *update)
}

// Without a results store freshness says what to configure.
func TestFreshnessNeedsAStore(t *testing.T) {
	e := newEnv(t, "steady")
	delete(e.jsonData, "resultsStore")
	r := e.query(t, e.client(t), q("A", 0, 1, map[string]any{"queryType": "freshness"}))["A"]
	if r.Status != backend.StatusBadRequest || r.Error == nil {
		t.Fatalf("status %d, error %v: want a 400 naming the results store", r.Status, r.Error)
	}
}

// The freshness numbers of one cohort: hours rounded to 2 decimals from
// the newest known end, null (never 0) when no run's end is known; the
// count of runs started in the 7 × 24 h up to now is a number even when 0
// (a run starting after now or before the window is not counted).
func TestFreshnessFieldsNullAndRounding(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	h := int64(3600)
	entry := func(start, end int64, known bool) runs.Entry {
		return runs.Entry{Run: runs.Run{Start: start, End: end}, EndKnown: known}
	}
	for _, c := range []struct {
		name   string
		es     []runs.Entry
		hours  *float64
		recent float64
	}{
		{"newest known end, rounded", []runs.Entry{
			entry(now.Unix()-30*h, now.Unix()-29*h, true),
			entry(now.Unix()-3*h, now.Unix()-2*h-1234, true), // 2 h 20 min 34 s
			entry(now.Unix()-h, now.Unix()-h, false)}, ptrTo(2.34), 3},
		{"no end known: null", []runs.Entry{entry(now.Unix()-h, now.Unix()-h, false)}, nil, 1},
		{"none in the window: 0", []runs.Entry{
			entry(now.Unix()-8*24*h, now.Unix()-8*24*h+h, true),
			entry(now.Unix()+h, now.Unix()+h, false)}, ptrTo(191.0), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &freshGroup{labels: data.Labels{labelTestName: "t"}}
			for _, e := range c.es {
				g.add(e, now)
			}
			fs := freshnessFields([]*freshGroup{g}, nil, now)
			if len(fs) != 2 || fs[0].Name != freshHours || fs[1].Name != freshRuns {
				t.Fatalf("fields %v, want %s and %s", fieldNames(fs), freshHours, freshRuns)
			}
			hours, _ := fs[0].At(0).(*float64)
			if (hours == nil) != (c.hours == nil) || (hours != nil && *hours != *c.hours) {
				t.Errorf("%s = %s, want %s", freshHours, fmtPtr(hours), fmtPtr(c.hours))
			}
			if recent, _ := fs[1].At(0).(*float64); recent == nil || *recent != c.recent {
				t.Errorf("%s = %s, want %v", freshRuns, fmtPtr(recent), c.recent)
			}
		})
	}
}
