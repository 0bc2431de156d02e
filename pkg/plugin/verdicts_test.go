package plugin

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/pkg/runs"
)

// storeNightly writes n stored runs of test "nightly" into root whose
// restore_p99_s rises by 30 % from run index at (0-based), one a day
// ending a day before end; it returns their ids, oldest first.
func storeNightly(t *testing.T, root string, n, at int, end int64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 3))
	var ids []string
	for i := range n {
		ts := end - int64(n-i)*86400
		tag := fmt.Sprintf("c%02d", i)
		dir := filepath.Join(root, "runs", "nightly", "run_date="+time.Unix(ts, 0).UTC().Format("2006-01-02"),
			"run_ts="+strconv.FormatInt(ts, 10), "run_tag="+tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		restore := 4.0 * (1 + 0.03*rng.NormFloat64())
		if i >= at {
			restore *= 1.3
		}
		stamp := time.Unix(ts, 0).UTC().Format("2006-01-02T15:04:05Z")
		line := func(metric, m string) string {
			return fmt.Sprintf(`{"timestamp": %q, "tag": %q, "test_name": "nightly", "metric": %q, "measurements": {%s}}`+"\n", stamp, tag, metric, m)
		}
		body := line("server_summary", fmt.Sprintf(`"restore_p99_s": %q, "cluster_packing_p50": "0.9", "psi_cpu_stall_p50": null`, strconv.FormatFloat(restore, 'f', 4, 64))) +
			line("trial_summary", fmt.Sprintf(`"machine_type": "n2", "run_start": "%d", "run_end": "%d"`, ts, ts+600))
		if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, runs.StoreRunID("nightly", ts, tag))
	}
	return ids
}

// TestVerdictQueries: compare and changePoints over gRPC on 20 stored
// runs whose restores slow down at run 12.
func TestVerdictQueries(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	ids := storeNightly(t, e.storeRoot, 20, 12, end)
	e.jsonData["gates"] = "gates:\n  - key: restore_p99_s\n    max_regression_pct: 10\n  - key: cluster_packing_p50\n    min: 0.95\n"
	c := e.client(t)

	r := e.query(t, c, q("A", end-30*86400, end, map[string]any{"queryType": "changePoints", "testName": "nightly"}))["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	f := r.Frames[0]
	if f.Rows() != 1 {
		t.Fatalf("%d change points, want 1", f.Rows())
	}
	if field(t, f, "key").At(0) != "restore_p99_s" || field(t, f, "run").At(0) != ids[12] || field(t, f, "kind").At(0) != "regression" ||
		field(t, f, "previous_tag").At(0) != "c11" || field(t, f, "acknowledged").At(0) != false {
		t.Errorf("change point %v %v %v", field(t, f, "key").At(0), field(t, f, "run").At(0), field(t, f, "kind").At(0))
	}
	if title := field(t, f, "title").At(0).(string); !strings.HasPrefix(title, "restore_p99_s +") || !strings.HasSuffix(title, "(regression)") {
		t.Errorf("title %q", title)
	}

	r = e.query(t, c, q("B", end-30*86400, end, map[string]any{"queryType": "compare", "baseline": ids[11], "candidate": ids[12]}))["B"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	f = r.Frames[0]
	if field(t, f, "key").At(0) != "restore_p99_s" || field(t, f, "verdict").At(0) != "worse" {
		t.Errorf("compare %v %v", field(t, f, "key").At(0), field(t, f, "verdict").At(0))
	}
	if f.Meta == nil || len(f.Meta.Notices) == 0 || !strings.Contains(f.Meta.Notices[0].Text, "psi_cpu_stall_p50") {
		t.Errorf("no notice of the null key: %+v", f.Meta)
	}

	// gates with run latest: a one-number frame for alerts first, then the table.
	r = e.query(t, c, q("D", end-30*86400, end, map[string]any{"queryType": "gates", "run": "latest", "testName": "nightly", "baseline": "latest"}))["D"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	if len(r.Frames) != 2 || field(t, r.Frames[1], "verdict").At(0) != "pass" || field(t, r.Frames[1], "verdict").At(1) != "fail" ||
		field(t, r.Frames[0], "failed_gates").At(0) != 1.0 {
		t.Errorf("gates latest: %d frames", len(r.Frames))
	}
	r = e.query(t, c, q("E", end-30*86400, end, map[string]any{"queryType": "gates", "run": ids[12], "baseline": ids[11]}))["E"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	if len(r.Frames) != 1 || field(t, r.Frames[0], "verdict").At(0) != "fail" || !strings.HasPrefix(field(t, r.Frames[0], "reason").At(0).(string), "regression") {
		t.Errorf("gates of run 12 against 11: %v", field(t, r.Frames[0], "reason").At(0))
	}
	r = e.query(t, c, q("F", end-30*86400, end, map[string]any{"queryType": "gates", "run": ids[12]}))["F"]
	if r.Error != nil || field(t, r.Frames[0], "reason").At(0) != "no baseline" {
		t.Errorf("gates without a baseline: %v", r.Error)
	}

	r = e.query(t, c, q("C", end-30*86400, end, map[string]any{"queryType": "compare", "baseline": ids[11]}))["C"]
	if r.Error == nil || r.Status != 400 {
		t.Errorf("compare without a candidate: %v %d", r.Error, r.Status)
	}
}

// The setting acks acknowledges change points next to the store's
// acks.yaml: an acknowledged point stays in the table with acknowledged
// true; a malformed setting fails the query as a settings error naming the
// line.
func TestChangePointsAcksSetting(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	ids := storeNightly(t, e.storeRoot, 20, 12, end)
	query := func(e *env) backend.DataResponse {
		return e.query(t, e.client(t), q("A", end-30*86400, end, map[string]any{"queryType": "changePoints", "testName": "nightly"}))["A"]
	}
	acked := func(r backend.DataResponse) []bool {
		t.Helper()
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		var out []bool
		f := field(t, r.Frames[0], "acknowledged")
		for i := range f.Len() {
			out = append(out, f.At(i).(bool))
		}
		return out
	}
	if got := acked(query(e)); !slices.Equal(got, []bool{false}) {
		t.Fatalf("without acks: %v", got)
	}

	// A run inside the new segment acknowledges the point.
	e.jsonData["acks"] = "- key: restore_p99_s\n  run: " + ids[15] + "\n  reason: slower restores expected\n"
	e.uid += "-acks"
	if got := acked(query(e)); !slices.Equal(got, []bool{true}) {
		t.Errorf("with the setting acks: %v", got)
	}
	// Another key's ack, in the store, leaves it unacknowledged; the
	// setting's ack still applies next to it.
	if err := os.WriteFile(filepath.Join(e.storeRoot, "runs", "nightly", "acks.yaml"),
		[]byte("- key: cluster_packing_p50\n  run: "+ids[15]+"\n  reason: other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := acked(query(e)); !slices.Equal(got, []bool{true}) {
		t.Errorf("with the store's and the setting's acks: %v", got)
	}
	e.jsonData["acks"] = "- key: cluster_packing_p50\n  run: " + ids[15] + "\n"
	e.uid += "-other"
	if got := acked(query(e)); !slices.Equal(got, []bool{false}) {
		t.Errorf("acks of other keys only: %v", got)
	}

	e.jsonData["acks"] = "- key: restore_p99_s\n\trun: " + ids[15] + "\n"
	e.uid += "-bad"
	r := query(e)
	if r.Error == nil || r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "acks") || !strings.Contains(r.Error.Error(), "line 2") {
		t.Errorf("malformed acks setting: %v (status %d)", r.Error, r.Status)
	}
}

// maxRunsPerQuery bounds the stored runs changePoints reads: of 20 runs in
// the range, the newest 8 are searched, with a notice.
func TestChangePointsReadAtMostMaxRuns(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	storeNightly(t, e.storeRoot, 20, 12, end)
	e.jsonData["maxRunsPerQuery"] = 8
	r := e.query(t, e.client(t), q("A", end-30*86400, end, map[string]any{"queryType": "changePoints", "testName": "nightly"}))["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	text := strings.Join(notices(r.Frames), "\n")
	for _, want := range []string{"8 stored runs of nightly up to the end of the range searched", "only the newest 8 of 20 stored runs of nightly up to the end of the range were searched (maxRunsPerQuery)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no notice says %q:\n%s", want, text)
		}
	}
}
