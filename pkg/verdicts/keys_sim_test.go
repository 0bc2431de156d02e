package verdicts_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/substrate/density/internal/statstest"
	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/verdicts"
)

// TestKnownKeysAreTheExportsKeys: the key registry is exactly the
// undotted keys the real export writes into a simulated run's
// server_summary and trial_summary rows (per-operation failure ratios,
// matched by their pattern, and the run's metadata_* aside), so a key
// added to or dropped from the artifact without the registry fails here.
func TestKnownKeysAreTheExportsKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates, backfills and exports a run")
	}
	st := storetest.Build(t, storetest.Options{Runs: 1})
	seen := map[string]bool{}
	var written []string
	for _, row := range statstest.Rows(t, filepath.Join(st.Runs[0].Dir, "stats.jsonl")) {
		if row.Metric != artifact.MetricServerSummary && row.Metric != artifact.MetricTrialSummary {
			continue
		}
		seen[row.Metric] = true
		for _, fd := range row.Measurements {
			k := fd.Key
			if strings.HasPrefix(k, "metadata_") {
				continue
			}
			if !verdicts.Known(k) {
				t.Errorf("%s key %s is not known to the gates", row.Metric, k)
			}
			if strings.HasSuffix(k, "_failure_ratio") && k != frontier.RatioKey(frontier.AggregateName) {
				continue // a per-operation ratio: a pattern, not a registry entry
			}
			written = append(written, k)
		}
	}
	if !seen[artifact.MetricServerSummary] || !seen[artifact.MetricTrialSummary] {
		t.Fatalf("rows written %v, want server_summary and trial_summary", seen)
	}
	slices.Sort(written)
	if got := verdicts.KnownKeys(); !slices.Equal(got, written) {
		t.Errorf("registry (%d keys) != the export's keys (%d)\nregistry: %v\nexport:   %v", len(got), len(written), got, written)
	}
	if verdicts.Known("no_such_key") {
		t.Error("an unknown key is known")
	}
}
