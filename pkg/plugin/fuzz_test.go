package plugin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// fuzzSeeds are query JSONs of every shape the editors and dashboards send,
// plus the malformed kinds a hand-edited dashboard holds.
var fuzzSeeds = []string{
	`{"refId":"A","queryType":"packing","run":"actor-density/1710237600/c0ffee1"}`,
	`{"refId":"A","queryType":"psi","run":"latest","scope":"pod","resource":"memory","testName":"actor-density"}`,
	`{"queryType":"workingSet","run":["a/1/b","{c/2/d,e/3/f}"],"block":"per_actor"}`,
	`{"queryType":"summary","run":"range","testName":"x","tag":"y"}`,
	`{"queryType":"runs","run":null}`,
	`{"queryType":"frontier","run":"prom-1710237605"}`,
	`{"queryType":"snapshots","run":"$run"}`,
	`{"queryType":"tests","testName":"${test:csv}"}`,
	`{"queryType":"annotations","run":[1,2]}`,
	`{"queryType":"packing","run":"../../etc/passwd/x"}`,
	`{"queryType":"oomEvents","run":"%2e%2e/1/x"}`,
	`{"queryType":"clusterFacts","run":`,
	`[]`, `null`, ``, `{"queryType":7}`, `{"run":{"a":1}}`,
}

// FuzzParseQuery: any query JSON either parses to a model whose run
// references are non-empty, deduplicated and free of unresolved variables
// (and that parses back to the same model once re-encoded), or fails with
// a downstream 400 naming the query, never a plugin error.
func FuzzParseQuery(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(`{}`), "packing")
	f.Fuzz(func(t *testing.T, raw []byte, queryType string) {
		q := backend.DataQuery{RefID: "A", QueryType: queryType, JSON: raw}
		m, err := parseQuery(q)
		if err != nil {
			r := errorResponse(err)
			if r.Status != backend.StatusBadRequest || r.ErrorSource != backend.ErrorSourceDownstream {
				t.Fatalf("parse error %v answered %d %s, want a downstream 400", err, r.Status, r.ErrorSource)
			}
			if !strings.Contains(err.Error(), "query A") && !strings.Contains(err.Error(), "$") {
				t.Fatalf("error %q does not name the query", err)
			}
			return
		}
		ids := m.Run.ids()
		if len(ids) == 0 {
			t.Fatal("no run reference")
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if id == "" || seen[id] {
				t.Fatalf("empty or repeated run reference in %q", ids)
			}
			seen[id] = true
			if _, ok := unresolvedVariable(id); ok {
				t.Fatalf("unresolved variable %q accepted", id)
			}
		}
		// JSON cannot carry invalid UTF-8 (json.Marshal writes U+FFFD); a
		// query type from the request itself could hold it.
		for _, v := range append([]string{m.QueryType, m.Scope, m.Resource, m.Block, m.TestName, m.Tag}, ids...) {
			if !utf8.ValidString(v) {
				return
			}
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseQuery(backend.DataQuery{RefID: "A", JSON: again})
		if err != nil {
			t.Fatalf("re-encoded model %s does not parse: %v", again, err)
		}
		if m2.QueryType != m.QueryType || m2.Scope != m.Scope || m2.Resource != m.Resource || m2.Block != m.Block ||
			m2.TestName != m.TestName || m2.Tag != m.Tag || !slices.Equal(m2.Run.ids(), ids) {
			t.Fatalf("round trip changed the model: %+v -> %+v", m, m2)
		}
	})
}

// FuzzQueryData runs any query JSON through the whole query path (dispatch,
// handlers, catalogs) of an instance whose Prometheus refuses connections
// and whose store is empty: every answer is a frame or a downstream error,
// never a plugin error (a recovered panic is one) and never a missing
// response.
func FuzzQueryData(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "", int64(1710237000), int64(1710241000))
	}
	f.Add([]byte(`{"run":"latest"}`), "psi", int64(0), int64(-1))
	root := f.TempDir()
	jd, _ := json.Marshal(map[string]any{"resultsStore": "file://" + root, "discoverRuns": true, "timeoutSeconds": 1, "cacheEntries": 0})
	d, err := newDatasource(context.Background(), backend.DataSourceInstanceSettings{UID: "fuzz", URL: "http://127.0.0.1:1", JSONData: jd},
		func() time.Time { return time.Unix(1710250000, 0) })
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(d.Dispose)
	f.Fuzz(func(t *testing.T, raw []byte, queryType string, from, to int64) {
		q := backend.DataQuery{RefID: "A", QueryType: queryType, JSON: raw,
			TimeRange: backend.TimeRange{From: time.Unix(from, 0), To: time.Unix(to, 0)}, Interval: 10 * time.Second, MaxDataPoints: 1000}
		resp, err := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{q}})
		if err != nil {
			t.Fatalf("QueryData failed as a whole: %v", err)
		}
		r, ok := resp.Responses["A"]
		if !ok {
			t.Fatal("no response")
		}
		if r.Error != nil && (r.ErrorSource != backend.ErrorSourceDownstream || r.Status == backend.StatusInternal) {
			t.Fatalf("plugin error for %q (type %q): %v", raw, queryType, r.Error)
		}
	})
}
