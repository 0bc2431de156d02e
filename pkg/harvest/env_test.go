package harvest_test

import (
	"context"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/substrate/density/internal/oracle"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// scenarioEnv is one generated scenario; its Prometheus and
// VictoriaMetrics are started at most once per test binary (promtest.Cache).
type scenarioEnv struct {
	name  string
	sc    simrun.Scenario
	truth *simrun.Truth
	dir   string
	store *oracle.Store // nil for lean scenarios (no per-sample truth)
}

var (
	cache *promtest.Cache
	envMu sync.Mutex
	envs  = map[string]*scenarioEnv{}
)

func TestMain(m *testing.M) {
	flag.Parse()
	cache = promtest.NewCache()
	code := m.Run()
	cache.Close()
	os.Exit(code)
}

// loadScenario generates the named scenario once per binary.
func loadScenario(t testing.TB, name string) *scenarioEnv {
	t.Helper()
	run := cache.Generated(t, name)
	envMu.Lock()
	defer envMu.Unlock()
	if e, ok := envs[name]; ok {
		return e
	}
	sc, _ := simrun.ByName(name)
	e := &scenarioEnv{name: name, sc: sc, truth: run.Truth, dir: run.Dir}
	if len(run.Truth.Exported) > 0 {
		e.store = oracle.NewStore(run.Truth.Exported)
	}
	envs[name] = e
	return e
}

// prom returns a client of the scenario's Prometheus.
func (e *scenarioEnv) prom(t testing.TB) *promql.Client {
	t.Helper()
	_, srv := cache.Prometheus(t, e.name)
	return newClient(t, srv.URL)
}

// vm returns a client of the scenario's VictoriaMetrics.
func (e *scenarioEnv) vm(t testing.TB) *promql.Client {
	t.Helper()
	_, srv := cache.VictoriaMetrics(t, e.name)
	return newClient(t, srv.URL)
}

func newClient(t testing.TB, url string) *promql.Client {
	t.Helper()
	c, err := promql.New(promql.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// params is the run as the export would see it: the run window and lag
// from the truth, the steady window from the user samples (Truth applies
// runs.md's rule) or, without stats_history.csv, the run window.
func (e *scenarioEnv) params() harvest.Params {
	tr := e.truth
	p := harvest.Params{Start: tr.Start, End: tr.End, SteadyStart: tr.SteadyStart, SteadyEnd: tr.SteadyEnd, LagS: tr.LagS, Sel: harvest.DefaultSelectors()}
	if e.sc.NoHistory {
		p.SteadyStart, p.SteadyEnd = tr.Start, tr.End
	}
	return p
}

func harvestOf(t testing.TB, c *promql.Client, p harvest.Params) *harvest.Result {
	t.Helper()
	return harvest.Harvest(context.Background(), c, p)
}
