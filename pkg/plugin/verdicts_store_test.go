package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/verdicts"
	"github.com/substrate/density/pkg/verdicts/command"
)

// storeEnv is a datasource over the store (no Prometheus discovery), its
// clock a day after the newest run.
func storeEnv(st *storetest.Store, name string) *env {
	last := st.Runs[len(st.Runs)-1]
	return &env{
		name: name, storeRoot: st.Root, promURL: st.Prom.URL,
		now: time.Unix(last.Start+day, 0),
		jsonData: map[string]any{
			"resultsStore": st.URL, "discoverRuns": false, "timeoutSeconds": 30,
			"gates": "gates:\n  - key: restore_p99_s\n    max: 0.8\n  - key: cluster_packing_p50\n    min: 0.9\n",
		},
		uid: fmt.Sprintf("ds-%s-%d", name, envSeq.Add(1)),
	}
}

// cliChangePoints are the change points `density regressions --json`
// prints for the store.
func cliChangePoints(t *testing.T, st *storetest.Store, extra ...string) []verdicts.ChangePoint {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"--store", st.URL, "--test-name", st.TestName, "--json"}, extra...)
	if code := command.RegressionsCommand(command.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}).Main(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("density regressions: exit %d: %s", code, errOut.String())
	}
	var got struct {
		ChangePoints []verdicts.ChangePoint `json:"change_points"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return got.ChangePoints
}

// alertQuery is a query the way a Grafana alert rule sends it: no
// frontend, the FromAlert header, the rule's relative range resolved.
func alertQuery(e *env, from, to int64, model map[string]any) *backend.QueryDataRequest {
	model["refId"] = "A"
	model["datasource"] = map[string]any{"type": "substrate-density-datasource", "uid": e.uid}
	model["intervalMs"], model["maxDataPoints"] = 1000, 43200
	b, _ := json.Marshal(model)
	return &backend.QueryDataRequest{
		PluginContext: e.pluginContext(),
		Headers:       map[string]string{"FromAlert": "true", "X-Rule-Uid": "density-regressions"},
		Queries: []backend.DataQuery{{RefID: "A", QueryType: model["queryType"].(string), JSON: b,
			TimeRange: backend.TimeRange{From: time.Unix(from, 0), To: time.Unix(to, 0)}, Interval: time.Second, MaxDataPoints: 43200}},
	}
}

// alertNumber is the single number of the response's frame named name.
func alertNumber(t *testing.T, r backend.DataResponse, name string) float64 {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("alert query: %v", r.Error)
	}
	for _, f := range r.Frames {
		if f.Name == name {
			if len(f.Fields) != 1 || f.Rows() != 1 || f.Fields[0].Type() != data.FieldTypeFloat64 {
				t.Fatalf("frame %s: %d fields, %d rows", name, len(f.Fields), f.Rows())
			}
			return f.Fields[0].At(0).(float64)
		}
	}
	t.Fatalf("no %s frame among %d frames", name, len(r.Frames))
	return 0
}

// The datasource over the store of 20 exported nightly runs whose
// restores slow down at run 12, over gRPC: `changePoints` returns the
// change points `density regressions` prints, the changePoints annotations
// say the same at each run start, and with run latest the changePoints and
// gates queries return the one-number frames an alert rule evaluates
// through QueryData.
func TestVerdictsOverExportedStore(t *testing.T) {
	st := storetest.Build(t, storetest.Options{})
	e := storeEnv(st, "nightly-store")
	c := e.client(t)
	first, last := st.Runs[0], st.Runs[len(st.Runs)-1]
	from, to := first.Start-day, last.Start+day
	at := st.Runs[12]

	want := cliChangePoints(t, st)
	r := e.query(t, c, q("A", from, to, map[string]any{"queryType": "changePoints", "testName": st.TestName}))["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	f := r.Frames[0]
	if f.Rows() != len(want) {
		t.Fatalf("%d change points over gRPC, %d from density regressions", f.Rows(), len(want))
	}
	found := false
	for i, cp := range want {
		got := fmt.Sprint(field(t, f, "key").At(i), field(t, f, "run").At(i), field(t, f, "kind").At(i), field(t, f, "title").At(i), field(t, f, "p_value").At(i))
		if w := fmt.Sprint(cp.Key, cp.Run, cp.Kind, cp.Title(), cp.PValue); got != w {
			t.Errorf("change point %d: %s over gRPC, %s from density regressions", i, got, w)
		}
		if cp.Key == "restore_p99_s" {
			found = cp.Run == at.ID && cp.Kind == verdicts.Regression && cp.PreviousTag == st.Runs[11].Tag
			t.Logf("restore_p99_s: %s at %s (%s..%s)", cp.Title(), cp.Run, cp.PreviousTag, cp.Tag)
		}
	}
	if !found {
		t.Errorf("no restore_p99_s regression at %s among %+v", at.ID, want)
	}

	annotations := func() map[string][]string {
		t.Helper()
		r := e.query(t, c, q("N", from, to, map[string]any{"queryType": "annotations", "testName": st.TestName, "changePoints": true}))["N"]
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		f := r.Frames[0]
		out := map[string][]string{}
		for i := range f.Rows() {
			tags := field(t, f, "tags").At(i).(string)
			if !strings.HasPrefix(tags, "change-point,") {
				continue
			}
			ts, te := field(t, f, "time").At(i).(time.Time), field(t, f, "timeEnd").At(i).(time.Time)
			title := field(t, f, "title").At(i).(string)
			out[title] = []string{ts.UTC().Format(time.RFC3339), te.UTC().Format(time.RFC3339), field(t, f, "text").At(i).(string), tags}
		}
		return out
	}
	got := annotations()
	if len(got) != len(want) {
		t.Errorf("%d change-point annotations, want %d", len(got), len(want))
	}
	for _, cp := range want {
		a, ok := got[cp.Title()]
		start := time.Unix(cp.Start, 0).UTC().Format(time.RFC3339)
		if !ok || a[0] != start || a[1] != start {
			t.Errorf("annotation %q: %v, want a point at %s", cp.Title(), a, start)
			continue
		}
		if wantTags := "change-point," + cp.Kind + "," + cp.Key + "," + st.TestName; a[3] != wantTags {
			t.Errorf("annotation %q tags %q, want %q", cp.Title(), a[3], wantTags)
		}
		if !strings.Contains(a[2], cp.PreviousTag+".."+cp.Tag) || !strings.Contains(a[2], fmt.Sprintf("p = %.3g", cp.PValue)) {
			t.Errorf("annotation %q text %q", cp.Title(), a[2])
		}
	}
	for title, a := range got {
		if strings.HasPrefix(title, "restore_p99_s ") {
			t.Logf("annotation %q at %s: %s [%s]", title, a[0], a[2], a[3])
		}
	}

	// Alerting: the rule's range ends the night the change first has
	// min_runs runs after it (run 14); it keeps counting on later nights
	// (the clock is a day after run 19, the change 8 days old) until
	// acknowledged, as `density regressions` keeps exiting 4.
	alert := func(to int64, model map[string]any) backend.DataResponse {
		t.Helper()
		resp, err := c.QueryData(context.Background(), alertQuery(e, from, to, model))
		if err != nil {
			t.Fatalf("QueryData: %v", err)
		}
		return resp.Responses["A"]
	}
	cpQuery := func() map[string]any {
		return map[string]any{"queryType": "changePoints", "run": "latest", "testName": st.TestName, "keys": "restore_p99_s"}
	}
	if n := alertNumber(t, alert(st.Runs[14].Start+3600, cpQuery()), "unacknowledged_regressions"); n != 1 {
		t.Errorf("unacknowledged regressions at run 14: %v, want 1", n)
	}
	if n := alertNumber(t, alert(to, cpQuery()), "unacknowledged_regressions"); n != 1 {
		t.Errorf("unacknowledged regressions at run 19: %v, want 1 (8 runs old, not acknowledged)", n)
	}
	// Option minRuns is the search's --min-runs: 9 runs after the change
	// are needed with 9 (8 followed it), 1 finds it as 3 does.
	withMinRuns := func(minRuns any) backend.DataResponse {
		m := cpQuery()
		m["minRuns"] = minRuns
		return alert(to, m)
	}
	if n := alertNumber(t, withMinRuns(9), "unacknowledged_regressions"); n != 0 {
		t.Errorf("unacknowledged regressions with minRuns 9: %v, want 0 (8 runs followed the change)", n)
	}
	if n := alertNumber(t, withMinRuns(1), "unacknowledged_regressions"); n != 1 {
		t.Errorf("unacknowledged regressions with minRuns 1: %v, want 1", n)
	}
	if r := withMinRuns(0); r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "minRuns") {
		t.Errorf("minRuns 0: status %d, %v; want 400 naming minRuns", r.Status, r.Error)
	}
	if n := alertNumber(t, alert(to, map[string]any{"queryType": "gates", "run": "latest", "testName": st.TestName}), "failed_gates"); n != 1 {
		t.Errorf("failed gates of the newest run: %v, want 1 (restore_p99_s above 0.8)", n)
	}

	// An acknowledgement in the store: once the acks.yaml read is older
	// than liveTTL, the alert number drops, the point and its annotation
	// stay, tagged acknowledged.
	ack := "- {key: restore_p99_s, run: " + st.Runs[13].ID + ", reason: slower restore path}\n"
	if err := os.WriteFile(filepath.Join(st.Root, "runs", st.TestName, "acks.yaml"), []byte(ack), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := alertNumber(t, alert(to, cpQuery()), "unacknowledged_regressions"); n != 1 {
		t.Errorf("unacknowledged regressions within %s of the ack: %v, want 1 (acks.yaml as read before)", liveTTL, n)
	}
	e.now = e.now.Add(liveTTL + time.Second)
	c = e.client(t)
	for _, end := range []int64{st.Runs[14].Start + 3600, to} {
		if n := alertNumber(t, alert(end, cpQuery()), "unacknowledged_regressions"); n != 0 {
			t.Errorf("unacknowledged regressions after the ack (range to %d): %v, want 0", end, n)
		}
	}
	for _, cp := range want {
		if cp.Key != "restore_p99_s" {
			continue
		}
		a := annotations()[cp.Title()]
		if len(a) != 4 || !strings.HasSuffix(a[3], ","+st.TestName+",acknowledged") || !strings.Contains(a[2], "acknowledged: slower restore path") {
			t.Errorf("acked annotation %v", a)
		}
	}
}
