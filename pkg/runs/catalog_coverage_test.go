package runs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/promql"
)

// TestCoverageLatestAcrossCatalogs pins runs.md "the word latest means the
// newest run across catalogs (optionally of one test name)": with a results
// store and Prometheus discovery both on, latest is whichever catalog holds
// the newer run; with a test name, only the store (discovered runs have no
// test name) is asked.
func TestCoverageLatestAcrossCatalogs(t *testing.T) {
	srv := promtest.Start(t, discoveryOM(t))
	client, err := promql.New(promql.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := t0 + 9000 // discovered runs start at +20, +900, +3000 (ended +4290)
	store := func(t *testing.T, start int64) *Store {
		t.Helper()
		root := t.TempDir()
		dir := filepath.Join(root, "runs/actor-density/run_date=2023-11-14/run_ts="+itoa(start)+"/run_tag=x")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stats_history.csv"), []byte(history(start)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	tests := []struct {
		name     string
		stored   int64
		testName string
		want     string
	}{
		{"the stored run is newer", t0 + 6000, "", "actor-density/" + itoa(t0+6000) + "/x"},
		{"the discovered run is newer", t0 + 2000, "", PromRunID(t0 + 3000)},
		{"of one test name: the store only", t0 + 2000, "actor-density", "actor-density/" + itoa(t0+2000) + "/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Catalogs{Store: store(t, tc.stored), Discovery: NewDiscovery(client, "", 0), DiscoverRuns: true}
			e, err := c.Latest(ctx, tc.testName, now)
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != tc.want {
				t.Errorf("latest = %s, want %s", e.ID, tc.want)
			}
			// The same through a parsed "latest" reference.
			id, err := ParseRunID("latest")
			if err != nil || id.Kind != KindLatest {
				t.Fatalf("ParseRunID(latest) = %+v, %v", id, err)
			}
		})
	}
}

// TestCoverageDiscoveryDefaults pins runs.md's discovery defaults: the
// user-count query sum(locust_users) and a 2-minute gap.
func TestCoverageDiscoveryDefaults(t *testing.T) {
	d := NewDiscovery(nil, "", 0)
	if q := d.Query(); q != "sum(locust_users)" {
		t.Errorf("default user-count query %q, want sum(locust_users)", q)
	}
	if d.gap != 120 {
		t.Errorf("default gap %d s, want 120 (2 minutes)", d.gap)
	}
}
