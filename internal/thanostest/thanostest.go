// Package thanostest runs a Thanos Query in front of two Prometheus replicas
// holding the same OpenMetrics file, for tests of the export and the plugin
// against Thanos. Each Prometheus (internal/promtest) carries the external
// label replica="a" or "b" and is read by its own Thanos sidecar over the
// Prometheus remote-read API (no object storage, so the block durations of
// Prometheus need no change); Query deduplicates on the replica label.
//
// The thanos binary is built by scripts/thanos.sh from tools/thanos and
// cached under ~/.cache/substrate-density; tests skip when it is absent.
package thanostest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/toolcache"
)

// Environment and build command.
const (
	// EnvThanos overrides the binary path.
	EnvThanos = "THANOS"
	// EnvCache overrides the cache root, as in scripts/thanos.sh.
	EnvCache = toolcache.EnvCache
	// BuildCommand builds the binary into the cache.
	BuildCommand = "bash scripts/thanos.sh"
	// ReplicaLabel is the external label that tells the replicas apart.
	ReplicaLabel = "replica"
)

// launchTimeout bounds the start of the whole stack in tests.
const launchTimeout = 60 * time.Second

// ErrNotBuilt is wrapped by BinaryPath when the binary is not in the cache.
var ErrNotBuilt = errors.New("thanos is not built")

// BinaryPath is where thanos is looked for: $THANOS, else the cache path of
// scripts/thanos.sh for this checkout's tools/thanos/go.sum. The error says
// how to build it.
func BinaryPath() (string, error) {
	if p := os.Getenv(EnvThanos); p != "" {
		if err := toolcache.Executable(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w: %w (unset it to use the cache, or build with `%s`)", EnvThanos, p, ErrNotBuilt, err, BuildCommand)
		}
		return p, nil
	}
	p, root, err := toolcache.Cached("thanos", "thanos", EnvThanos)
	if err != nil {
		return "", err
	}
	if err := toolcache.Executable(p); err != nil {
		return "", fmt.Errorf("%w (%v): run `cd %s && %s` once (a cold build took about 4.5 min here: 96 s of downloads, 165 s of build; "+
			"later runs reuse the cache), or point $%s at a thanos v0.42 binary", ErrNotBuilt, err, root, BuildCommand, EnvThanos)
	}
	return p, nil
}

// Stack is two Prometheus replicas, a sidecar each, and one Query.
type Stack struct {
	URL        string // Query's HTTP API, http://127.0.0.1:<port>
	Prometheus [2]*promtest.Server
	Sidecars   [2]*Process
	Query      *Process
	// StartTime is how long the whole launch took (backfills included).
	StartTime time.Duration
}

// Process is one running thanos component.
type Process struct {
	Name     string
	HTTPAddr string
	GRPCAddr string
	cmd      *exec.Cmd
	done     chan struct{}
	log      string
}

// Launch starts the stack over omFile in workDir; ctx bounds the start. Close
// stops everything.
func Launch(ctx context.Context, bin, omFile, workDir string) (_ *Stack, err error) {
	t0 := time.Now()
	s := &Stack{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	var endpoints []string
	for i, replica := range []string{"a", "b"} {
		pdir := filepath.Join(workDir, "prom-"+replica)
		if err := os.MkdirAll(pdir, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
			return nil, fmt.Errorf("creating %s: %w", pdir, err)
		}
		p, err := promtest.LaunchLabeled(ctx, omFile, pdir, map[string]string{ReplicaLabel: replica})
		if err != nil {
			return nil, fmt.Errorf("prometheus %s: %w", replica, err)
		}
		s.Prometheus[i] = p
		sc, err := start(ctx, bin, "sidecar-"+replica, workDir, func(httpAddr, grpcAddr string) []string {
			return []string{"sidecar",
				"--prometheus.url=" + p.URL,
				"--grpc-address=" + grpcAddr,
				"--http-address=" + httpAddr,
				"--log.level=warn",
			}
		})
		if err != nil {
			return nil, err
		}
		s.Sidecars[i] = sc
		endpoints = append(endpoints, sc.GRPCAddr)
	}
	q, err := start(ctx, bin, "query", workDir, func(httpAddr, grpcAddr string) []string {
		args := []string{"query",
			"--grpc-address=" + grpcAddr,
			"--http-address=" + httpAddr,
			"--query.replica-label=" + ReplicaLabel,
			"--endpoint.info-timeout=2s",
			"--log.level=warn",
		}
		for _, e := range endpoints {
			args = append(args, "--endpoint="+e)
		}
		return args
	})
	if err != nil {
		return nil, err
	}
	s.Query = q
	s.URL = "http://" + q.HTTPAddr
	if err := s.waitStores(ctx, 2); err != nil {
		return nil, err
	}
	s.StartTime = time.Since(t0)
	return s, nil
}

// Start is Launch for a test: the binary comes from BinaryPath (the test
// skips, saying how to build it, when it is absent) and the stack stops in
// t.Cleanup.
func Start(t testing.TB, omFile string) *Stack {
	t.Helper()
	bin, err := BinaryPath()
	if err != nil {
		t.Skipf("skipping the Thanos test: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
	defer cancel()
	s, err := Launch(ctx, bin, omFile, t.TempDir())
	if err != nil {
		t.Fatalf("launching the Thanos stack: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("thanos query %s over 2 sidecars: started in %v", s.URL, s.StartTime.Round(time.Millisecond))
	return s
}

// StopSidecar stops sidecar i (0 or 1) and waits until Query sees only the
// sidecars still running.
func (s *Stack) StopSidecar(ctx context.Context, i int) error {
	s.Sidecars[i].Close()
	running := 0
	for _, sc := range s.Sidecars {
		if !sc.exited() {
			running++
		}
	}
	return s.waitStores(ctx, running)
}

// exited reports whether the process has stopped.
func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Close stops Query, the sidecars and the Prometheus servers.
func (s *Stack) Close() {
	s.Query.Close()
	for i := range s.Sidecars {
		s.Sidecars[i].Close()
	}
	for i := range s.Prometheus {
		if s.Prometheus[i] != nil {
			s.Prometheus[i].Close()
		}
	}
}

// waitStores waits until Query's /api/v1/stores lists exactly n healthy
// sidecars (no lastError).
func (s *Stack) waitStores(ctx context.Context, n int) error {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		got, err := healthyStores(ctx, client, s.URL)
		if err == nil && got == n {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d healthy stores", got)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for thanos query to see %d stores (%s): %w\nquery:\n%s\nsidecar a:\n%s\nsidecar b:\n%s",
				n, last, ctx.Err(), lastLine(s.Query.Log()), s.Sidecars[0].Log(), s.Sidecars[1].Log())
		case <-s.Query.done:
			return fmt.Errorf("thanos query exited: %s", s.Query.Log())
		case <-tick.C:
		}
	}
}

func healthyStores(ctx context.Context, client *http.Client, base string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/stores", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/api/v1/stores: %s", resp.Status)
	}
	var body struct {
		Data map[string][]struct {
			LastError *string `json:"lastError"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("/api/v1/stores: %w", err)
	}
	n := 0
	for _, stores := range body.Data {
		for _, st := range stores {
			if st.LastError == nil || *st.LastError == "" {
				n++
			}
		}
	}
	return n, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// start runs one thanos component on free ports and waits for its /-/ready.
func start(ctx context.Context, bin, name, workDir string, args func(httpAddr, grpcAddr string) []string) (*Process, error) {
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	grpcAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(workDir, name+".log")
	lf, err := os.Create(logPath) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", logPath, err)
	}
	cmd := exec.Command(bin, args(httpAddr, grpcAddr)...) // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
	cmd.Dir = workDir
	cmd.Stdout, cmd.Stderr = lf, lf
	// Killed with its parent, so a test binary that dies on a timeout leaves
	// no component behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("starting thanos %s: %w", name, err)
	}
	p := &Process{Name: name, HTTPAddr: httpAddr, GRPCAddr: grpcAddr, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait() // the exit is seen through p.done; its status is in the log
		lf.Close()
		close(p.done)
	}()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			p.Close()
			return nil, fmt.Errorf("waiting for thanos %s to be ready: %w\n%s", name, ctx.Err(), p.Log())
		case <-p.done:
			return nil, fmt.Errorf("thanos %s exited before it was ready:\n%s", name, p.Log())
		case <-tick.C:
			resp, err := client.Get("http://" + httpAddr + "/-/ready")
			if err != nil {
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
	}
}

// Close stops the process (SIGTERM, then SIGKILL after 10 s) and waits.
func (p *Process) Close() {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Log returns the last lines the process logged.
func (p *Process) Log() string {
	if p == nil {
		return ""
	}
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
