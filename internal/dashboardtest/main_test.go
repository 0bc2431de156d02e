package dashboardtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/experimental/datasourcetest"

	"github.com/substrate/density/internal/plugintest"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/plugin"
)

const (
	dashPluginID = "substrate-density-datasource"
	// dashRepo is the repository root seen from this package's directory
	// (go test runs in the package directory).
	dashRepo = "../.."
)

// promCache generates each simulator scenario once and backfills it into
// one real Prometheus for the whole test binary.
var promCache *promtest.Cache

// pluginClient talks to the one plugin server of the test binary (the SDK
// registers its gRPC metrics globally); each smoke env is its own
// datasource instance.
var pluginClient *datasourcetest.TestPluginClient

func TestMain(m *testing.M) {
	promCache = promtest.NewCache()
	tp, err := plugintest.Serve(plugin.NewDatasource)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the plugin:", err)
		os.Exit(1)
	}
	pluginClient = tp.Client
	code := m.Run()
	_ = tp.Shutdown()
	_ = promCache.Close()
	os.Exit(code)
}

// storeRun lays a scenario's Locust files out as one run of a results store
// in the orchestrator's layout; it returns the store root and the run's
// directory.
func storeRun(t testing.TB, r *promtest.Run) (root, dir string) {
	t.Helper()
	tr := r.Truth
	root = t.TempDir()
	dir = filepath.Join(root, "runs", tr.TestName, "run_date="+time.Unix(tr.Start, 0).UTC().Format("2006-01-02"),
		"run_ts="+strconv.FormatInt(tr.Start, 10), "run_tag="+tr.Tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{simrun.HistoryFile, simrun.StatsFile, simrun.LogsFile} {
		b, err := os.ReadFile(filepath.Join(r.Dir, f))
		if f == simrun.LogsFile && errors.Is(err, fs.ErrNotExist) {
			continue // only a ladder run has logs.txt
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, dir
}
