package plugin

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/experimental"
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
