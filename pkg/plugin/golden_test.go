package plugin

import (
	"path/filepath"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/experimental"

	"github.com/substrate/density/pkg/runs"
)

// TestGoldenResponses pins the full response (frames, field names, units,
// display names, executed PromQL, notices) of every query type for the
// steady scenario. Rewrite with `go test ./pkg/plugin -run Golden -update`.
func TestGoldenResponses(t *testing.T) {
	e := newEnv(t, "steady")
	e.uid = "golden-steady" // stable across runs
	c := e.client(t)
	cases := map[string]map[string]any{
		"runs":              {"queryType": "runs"},
		"tests":             {"queryType": "tests"},
		"annotations":       {"queryType": "annotations"},
		"packing":           {"queryType": "packing", "run": e.runID},
		"psi-node-cpu":      {"queryType": "psi", "run": e.runID, "scope": "node", "resource": "cpu"},
		"psi-pod-io":        {"queryType": "psi", "run": e.runID, "scope": "pod", "resource": "io"},
		"snapshots":         {"queryType": "snapshots", "run": e.runID},
		"activeActors":      {"queryType": "activeActors", "run": e.runID},
		"workingSet-worker": {"queryType": "workingSet", "run": e.runID, "block": "worker"},
		"oomEvents":         {"queryType": "oomEvents", "run": e.runID},
		"clusterFacts":      {"queryType": "clusterFacts", "run": e.runID},
		"frontier":          {"queryType": "frontier", "run": e.runID},
		"summary":           {"queryType": "summary", "run": e.runID},
	}
	for name, model := range cases {
		t.Run(name, func(t *testing.T) {
			r := e.query(t, c, q("A", e.truth.Start-600, e.truth.End+600, model))["A"]
			experimental.CheckGoldenJSONResponse(t, "testdata/golden", "steady-"+name, &r, *update)
		})
	}
}

// TestGoldenStoredResponses pins the full responses of the query types
// that read stored rows: phases on a stored run's phase rows, ladder on the
// simulated ladder's stored rows, and compare, changePoints and gates on 20
// stored nightly runs whose restores slow down at run 12. Rewrite with
// `go test ./pkg/plugin -run Golden -update`.
func TestGoldenStoredResponses(t *testing.T) {
	t.Run("phases", func(t *testing.T) {
		e := newEnv(t, "steady")
		e.uid = "golden-phases"
		storePhaseRows(t, e, phaseRowsOf(e, phaseGroups)...)
		c := e.client(t)
		for name, model := range map[string]map[string]any{
			"phases":         {"queryType": "phases", "run": e.runID},
			"phases-restore": {"queryType": "phases", "run": e.runID, "op": "restore"},
		} {
			r := e.one(t, c, model)
			experimental.CheckGoldenJSONResponse(t, "testdata/golden", "steady-"+name, &r, *update)
		}
	})
	t.Run("ladder", func(t *testing.T) {
		e := newEnv(t, "ladder-steps")
		e.uid = "golden-ladder"
		e.jsonData["discoverRuns"] = false
		writeRows(t, filepath.Join(e.runDir(), runs.FileStatsJSONL), ladderRows(e.truth))
		r := e.one(t, e.client(t), map[string]any{"queryType": "ladder", "run": e.runID})
		experimental.CheckGoldenJSONResponse(t, "testdata/golden", "ladder-steps-ladder", &r, *update)
	})
	t.Run("nightly", func(t *testing.T) {
		e := newEnv(t, "steady")
		e.uid = "golden-nightly"
		end := e.now.Unix()
		ids := storeNightly(t, e.storeRoot, 20, 12, end)
		e.jsonData["gates"] = "gates:\n  - key: restore_p99_s\n    max_regression_pct: 10\n  - key: cluster_packing_p50\n    min: 0.95\n"
		c := e.client(t)
		for name, model := range map[string]map[string]any{
			"compare":             {"queryType": "compare", "baseline": ids[11], "candidate": ids[12]},
			"changePoints":        {"queryType": "changePoints", "testName": "nightly"},
			"changePoints-latest": {"queryType": "changePoints", "testName": "nightly", "run": "latest"},
			"gates-latest":        {"queryType": "gates", "run": "latest", "testName": "nightly", "baseline": "latest"},
			"gates-run":           {"queryType": "gates", "run": ids[12], "baseline": ids[11]},
		} {
			t.Run(name, func(t *testing.T) {
				r := e.query(t, c, q("A", end-30*86400, end, model))["A"]
				if r.Error != nil {
					t.Fatal(r.Error)
				}
				experimental.CheckGoldenJSONResponse(t, "testdata/golden", "nightly-"+name, &r, *update)
			})
		}
	})
}
