package promtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/substrate/density/internal/simrun"
)

// launchTimeout bounds one backfill + start in tests.
const launchTimeout = 90 * time.Second

func fatalLaunch(t testing.TB, kind string, err error) {
	t.Helper()
	if errors.Is(err, ErrMissingBinary) {
		// Never skip: CI installs the package, a developer must too.
		t.Fatalf("%s is required for this test: %v", kind, err)
	}
	t.Fatalf("launching %s: %v", kind, err)
}

// Start backfills omFile into a fresh Prometheus for this test and stops it
// in t.Cleanup. A missing binary fails the test naming the apt package.
func Start(t testing.TB, omFile string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
	defer cancel()
	s, err := Launch(ctx, omFile, t.TempDir())
	if err != nil {
		fatalLaunch(t, "prometheus", err)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("prometheus %s: backfill %v, ready %v", s.URL, s.LoadTime.Round(time.Millisecond), s.ReadyTime.Round(time.Millisecond))
	return s
}

// StartRuns is Start for several runs backfilled into one Prometheus.
func StartRuns(t testing.TB, omFiles ...string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
	defer cancel()
	s, err := LaunchRuns(ctx, t.TempDir(), omFiles...)
	if err != nil {
		fatalLaunch(t, "prometheus", err)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("prometheus %s: backfill of %d runs %v, ready %v", s.URL, len(omFiles), s.LoadTime.Round(time.Millisecond), s.ReadyTime.Round(time.Millisecond))
	return s
}

// StartVM is Start for VictoriaMetrics.
func StartVM(t testing.TB, omFile string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
	defer cancel()
	s, err := LaunchVM(ctx, omFile, t.TempDir())
	if err != nil {
		fatalLaunch(t, "victoria-metrics", err)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("victoria-metrics %s: ready %v, import %v", s.URL, s.ReadyTime.Round(time.Millisecond), s.LoadTime.Round(time.Millisecond))
	return s
}

// Run is one generated scenario and the servers loaded with it.
type Run struct {
	Name  string
	Dir   string // the run directory: metrics.om, stats_history.csv, stats.csv, run.json
	Truth *simrun.Truth
	OM    string // path of metrics.om

	genErr   error
	prom, vm *Server
	promErr  error
	vmErr    error
	promOnce sync.Once
	vmOnce   sync.Once
	genOnce  sync.Once
}

// Cache generates each scenario once and starts at most one Prometheus and
// one VictoriaMetrics per scenario for a whole test binary. Create it in
// TestMain and Close it after m.Run:
//
//	var cache *promtest.Cache
//	func TestMain(m *testing.M) {
//		cache = promtest.NewCache()
//		code := m.Run()
//		cache.Close()
//		os.Exit(code)
//	}
//
// Tests must treat the servers as read-only.
type Cache struct {
	mu   sync.Mutex
	root string
	err  error
	runs map[string]*Run
}

// NewCache creates an empty cache with its own temporary directory.
func NewCache() *Cache {
	root, err := os.MkdirTemp("", "promtest-")
	return &Cache{root: root, err: err, runs: map[string]*Run{}}
}

func (c *Cache) run(t testing.TB, name string) *Run {
	t.Helper()
	if c.err != nil {
		t.Fatalf("promtest cache: %v", c.err)
	}
	c.mu.Lock()
	r, ok := c.runs[name]
	if !ok {
		r = &Run{Name: name, Dir: filepath.Join(c.root, name)}
		c.runs[name] = r
	}
	c.mu.Unlock()
	r.genOnce.Do(func() {
		sc, ok := simrun.ByName(name)
		if !ok {
			r.genErr = fmt.Errorf("no scenario named %q", name)
			return
		}
		r.Truth, r.genErr = simrun.Generate(sc, r.Dir)
		r.OM = filepath.Join(r.Dir, simrun.OMFile)
	})
	if r.genErr != nil {
		t.Fatalf("generating scenario %s: %v", name, r.genErr)
	}
	return r
}

// Generated returns the scenario's run without starting a server.
func (c *Cache) Generated(t testing.TB, name string) *Run {
	t.Helper()
	return c.run(t, name)
}

// Prometheus returns the scenario's run with a Prometheus loaded with it,
// starting it on first use.
func (c *Cache) Prometheus(t testing.TB, name string) (*Run, *Server) {
	t.Helper()
	r := c.run(t, name)
	return r, r.launchOnce(t, &r.promOnce, &r.prom, &r.promErr, "prometheus", "prom", Launch)
}

// VictoriaMetrics is Prometheus for VictoriaMetrics.
func (c *Cache) VictoriaMetrics(t testing.TB, name string) (*Run, *Server) {
	t.Helper()
	r := c.run(t, name)
	return r, r.launchOnce(t, &r.vmOnce, &r.vm, &r.vmErr, "victoria-metrics", "vm", LaunchVM)
}

// launchOnce starts one kind of server for the run on first use and fails
// the test when it cannot start.
func (r *Run) launchOnce(t testing.TB, once *sync.Once, srv **Server, srvErr *error, kind, sub string,
	launch func(ctx context.Context, omFile, workDir string) (*Server, error)) *Server {
	t.Helper()
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
		defer cancel()
		*srv, *srvErr = launch(ctx, r.OM, filepath.Join(r.Dir, sub))
		if *srvErr == nil {
			t.Logf("%s for %s: load %v, ready %v", kind, r.Name, (*srv).LoadTime.Round(time.Millisecond), (*srv).ReadyTime.Round(time.Millisecond))
		}
	})
	if *srvErr != nil {
		fatalLaunch(t, kind, *srvErr)
	}
	return *srv
}

// Close stops every server and removes the cache's files.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.runs {
		r.prom.Close()
		r.vm.Close()
	}
	if c.root == "" {
		return nil
	}
	return os.RemoveAll(c.root)
}
