package plugin

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/internal/objstoretest"
	"github.com/substrate/density/internal/storetest"
)

// The stored-run reads over GCS (fake-gcs-server behind a counting proxy,
// through gcsblob as production reads gs://): each query over a store of
// nightly runs, through gRPC, on a new datasource instance reads each
// object it needs at most once, and the identical query again on the same
// instance (within the listing's liveTTL) sends no request at all and
// answers the same. The store holds 12 rich runs written from the template
// export (server_summary.json, status.json, stats.jsonl, psi_series.json)
// and 20 runs of stats.jsonl alone whose restores slow down at run 12 (one
// change point).
func TestStoredRunsOverGCS(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	m := storetest.BuildMany(t, 12, now)
	const nightly = "nightly"
	storeNightly(t, m.Root, 20, 12, now.Unix())
	g := objstoretest.StartGCS(t)
	u := g.Bucket(t, m.Root)
	bucket := strings.TrimPrefix(u, "gs://")
	stored := objstoretest.Keys(t, m.Root)
	from, to := now.Add(-22*24*time.Hour).Unix(), now.Unix()

	type row struct {
		name       string
		cold, warm objstoretest.ObjectRequests
		needed     int
		rows       int
	}
	var table []row
	for i, c := range []struct {
		name  string
		model map[string]any
		// needed are the objects the query may read, each at most once:
		// the files of its test's runs named files (the listing's and the
		// query's own) and the test-level files it looks up, stored or not.
		test   string
		files  []string
		lookup []string
		// headThenWhole: server_summary.json is requested twice cold, its
		// head (the metadata, the GET ended early) by the listing that
		// resolves latest and then whole by the panel reading the run.
		headThenWhole bool
	}{
		{"summary", map[string]any{"queryType": "summary", "run": "range", "testName": m.TestName}, m.TestName, []string{"server_summary.json", "status.json", "stats.jsonl"}, nil, false},
		{"summary numeric", map[string]any{"queryType": "summary", "run": "range", "testName": m.TestName, "format": "numeric"}, m.TestName, []string{"server_summary.json", "status.json", "stats.jsonl"}, nil, false},
		{"freshness", map[string]any{"queryType": "freshness", "testName": m.TestName}, m.TestName, []string{"server_summary.json", "status.json", "stats.jsonl"}, nil, false},
		{"runs", map[string]any{"queryType": "runs", "testName": m.TestName}, m.TestName, []string{"server_summary.json", "status.json"}, nil, false},
		{"changePoints", map[string]any{"queryType": "changePoints", "testName": nightly}, nightly, []string{"stats.jsonl"}, []string{"acks.yaml"}, false},
		{"summary nightly", map[string]any{"queryType": "summary", "run": "range", "testName": nightly}, nightly, []string{"stats.jsonl"}, nil, false},
		{"annotations", map[string]any{"queryType": "annotations", "testName": nightly, "changePoints": true}, nightly, []string{"stats.jsonl"}, []string{"acks.yaml"}, false},
		// run latest: every panel of a dashboard resolves it on each refresh.
		{"summary latest", map[string]any{"queryType": "summary", "run": "latest", "testName": m.TestName}, m.TestName, []string{"server_summary.json", "status.json", "stats.jsonl", "notices.json"}, nil, true},
		{"packing latest", map[string]any{"queryType": "packing", "run": "latest", "testName": m.TestName}, m.TestName, []string{"server_summary.json", "status.json", "psi_series.json", "notices.json"}, nil, true},
		{"gates latest", map[string]any{"queryType": "gates", "run": "latest", "testName": m.TestName}, m.TestName, []string{"server_summary.json", "status.json", "stats.jsonl"}, nil, false},
	} {
		e := &env{
			name: "gcs", storeRoot: m.Root, promURL: m.PromURL, now: now,
			jsonData: map[string]any{"resultsStore": u, "discoverRuns": false, "timeoutSeconds": 60, "gates": "gates:\n  - {key: cluster_packing_p50, min: 0.5}\n"},
			uid:      fmt.Sprintf("ds-gcs-%d-%d", envSeq.Add(1), i),
		}
		ask := func() (backend.DataResponse, objstoretest.ObjectRequests) {
			g.TakeObjects(bucket)
			r := e.query(t, e.client(t), q("A", from, to, maps.Clone(c.model)))["A"]
			if r.Error != nil {
				t.Fatalf("%s: %v (status %d)", c.name, r.Error, r.Status)
			}
			return r, g.TakeObjects(bucket)
		}
		coldResp, cold := ask()
		warmResp, warm := ask()

		dir := "runs/" + c.test + "/"
		needed := map[string]bool{}
		for k := range stored {
			if strings.HasPrefix(k, dir) && slices.Contains(c.files, path.Base(k)) {
				needed[k] = true
			}
		}
		for _, f := range c.lookup {
			needed[dir+f] = true
		}
		for _, k := range slices.Sorted(maps.Keys(cold.ByKey)) {
			switch {
			case c.headThenWhole && path.Base(k) == "server_summary.json" && cold.ByKey[k] == 2:
			case cold.ByKey[k] > 1:
				t.Errorf("%s cold: %d requests for %s, want at most 1", c.name, cold.ByKey[k], k)
			case !needed[k]:
				t.Errorf("%s cold: read %s, which it does not need", c.name, k)
			}
		}
		if len(cold.Other) > 0 {
			t.Errorf("%s cold: requests naming no object: %v", c.name, cold.Other)
		}
		if cold.Reads() > len(needed) {
			t.Errorf("%s cold: %d object reads, want at most the %d files it needs", c.name, cold.Reads(), len(needed))
		}
		if cold.Lists == 0 || cold.Reads() == 0 {
			t.Errorf("%s cold: %d lists, %d object reads; want the store listed and read", c.name, cold.Lists, cold.Reads())
		}
		if warm.Total != 0 {
			t.Errorf("%s warm: %d requests (%d lists, object reads %v, other %v), want 0", c.name, warm.Total, warm.Lists, warm.ByKey, warm.Other)
		}

		rows := 0
		for _, f := range coldResp.Frames {
			rows += f.Rows()
		}
		if rows == 0 {
			t.Errorf("%s: no row in the answer", c.name)
		}
		if c.name == "changePoints" {
			f := coldResp.Frames[0]
			if f.Rows() != 1 || field(t, f, "key").At(0) != "restore_p99_s" || field(t, f, "kind").At(0) != "regression" {
				t.Errorf("changePoints: %d points, want the restore_p99_s regression at run 12", f.Rows())
			}
		}
		cj, err := json.Marshal(coldResp)
		if err != nil {
			t.Fatal(err)
		}
		wj, err := json.Marshal(warmResp)
		if err != nil {
			t.Fatal(err)
		}
		if string(cj) != string(wj) {
			t.Errorf("%s: the warm answer differs from the cold one:\ncold %s\nwarm %s", c.name, cj, wj)
		}
		table = append(table, row{name: c.name, cold: cold, warm: warm, needed: len(needed), rows: rows})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%d objects in %s (test %s: 12 runs of 4 files; test %s: 20 runs of 1 file)\n", len(stored), u, m.TestName, nightly)
	fmt.Fprintf(&b, "%-16s %5s %5s %13s %5s %6s %5s %4s\n", "query", "cold", "lists", "lists/prefix", "reads", "needed", "warm", "rows")
	for _, r := range table {
		fmt.Fprintf(&b, "%-16s %5d %5d %13d %5d %6d %5d %4d\n", r.name, r.cold.Total, r.cold.Lists, r.cold.PerPrefix(), r.cold.Reads(), r.needed, r.warm.Total, r.rows)
	}
	t.Logf("requests to the bucket per query: cold (a new instance; lists and object reads) and warm (the same query again):\n%s", b.String())
}
