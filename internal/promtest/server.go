// Package promtest runs a real Prometheus (the prometheus and promtool on
// PATH, Debian's 2.42; PROMETHEUS_BIN and PROMTOOL_BIN override them) or VictoriaMetrics loaded with an OpenMetrics file, for tests and
// the demo command. Launch/LaunchVM are the plain API; Start/StartVM and
// Cache are the testing wrappers.
package promtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Binaries used, the variables that override where Prometheus and promtool
// are found, and the Debian packages that ship them.
const (
	PrometheusEnv = "PROMETHEUS_BIN"
	PromtoolEnv   = "PROMTOOL_BIN"
	VMBin         = "/usr/bin/victoria-metrics"

	PrometheusPkg = "prometheus"
	VMPkg         = "victoria-metrics"
)

// ErrMissingBinary is wrapped by Launch/LaunchVM when a binary is not
// installed; the message names the apt package.
var ErrMissingBinary = errors.New("binary not installed")

// Server is a running Prometheus or VictoriaMetrics.
type Server struct {
	URL  string // http://127.0.0.1:<port>
	Kind string // "prometheus" or "victoria-metrics"
	Dir  string // work directory (data, log)
	// StartTime is how long the launch took, split into loading (backfill
	// or import) and the server becoming ready.
	LoadTime, ReadyTime time.Duration

	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// PrometheusBin is the prometheus binary: $PROMETHEUS_BIN, else the one on
// PATH. The error wraps ErrMissingBinary and names the apt package.
func PrometheusBin() (string, error) {
	return FindBinary(os.Getenv, PrometheusEnv, "prometheus", PrometheusPkg)
}

// PromtoolBin is the promtool binary: $PROMTOOL_BIN, else the one on PATH.
func PromtoolBin() (string, error) {
	return FindBinary(os.Getenv, PromtoolEnv, "promtool", PrometheusPkg)
}

// FindBinary returns the path in the variable env when it is set (the file
// must exist), else name looked up on PATH. The error wraps
// ErrMissingBinary and says how to install pkg or set env.
func FindBinary(getenv func(string) string, env, name, pkg string) (string, error) {
	if p := getenv(env); p != "" {
		if err := needBinary(p, pkg); err != nil {
			return "", fmt.Errorf("%s=%s: %w", env, p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found on PATH: %w: install it with `apt-get install -y --no-install-recommends %s` or set %s", name, ErrMissingBinary, pkg, env)
	}
	return p, nil
}

func needBinary(path, pkg string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s: %w: install it with `apt-get install -y --no-install-recommends %s`", path, ErrMissingBinary, pkg)
	}
	return nil
}

// freePort asks the kernel for an unused 127.0.0.1 port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Launch backfills omFile into workDir/data with promtool and starts
// Prometheus on a free 127.0.0.1 port over that storage (retention 100y, so
// old backfilled blocks are kept and queryable; lookback stays the default
// 5m). ctx bounds the backfill and the wait for /-/ready; the server runs
// until Close.
func Launch(ctx context.Context, omFile, workDir string) (*Server, error) {
	return LaunchRuns(ctx, workDir, omFile)
}

// LaunchRuns is Launch for several runs: every OpenMetrics file is
// backfilled into the same storage before the one Prometheus starts (runs
// at different times become separate blocks), so a test of many stored
// runs needs a single server.
func LaunchRuns(ctx context.Context, workDir string, omFiles ...string) (*Server, error) {
	return launch(ctx, workDir, nil, omFiles)
}

// LaunchLabeled is Launch with global.external_labels set in the Prometheus
// config, as a Thanos sidecar requires to tell replicas apart.
func LaunchLabeled(ctx context.Context, omFile, workDir string, externalLabels map[string]string) (*Server, error) {
	return launch(ctx, workDir, externalLabels, []string{omFile})
}

func launch(ctx context.Context, workDir string, externalLabels map[string]string, omFiles []string) (*Server, error) {
	if len(omFiles) == 0 {
		return nil, errors.New("no OpenMetrics file to backfill")
	}
	promtool, err := PromtoolBin()
	if err != nil {
		return nil, err
	}
	prometheus, err := PrometheusBin()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(workDir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		return nil, fmt.Errorf("creating %s: %w", data, err)
	}
	t0 := time.Now()
	for _, omFile := range omFiles {
		bf := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", omFile, data) // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
		if out, err := bf.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("backfilling %s with promtool: %w: %s", omFile, err, lastLines(out, 10))
		}
	}
	load := time.Since(t0)
	cfg := filepath.Join(workDir, "prometheus.yml")
	conf := "global:\n  scrape_interval: 1h\n  evaluation_interval: 1h\n"
	if len(externalLabels) > 0 {
		keys := make([]string, 0, len(externalLabels))
		for k := range externalLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		conf += "  external_labels:\n"
		for _, k := range keys {
			conf += "    " + k + ": " + strconv.Quote(externalLabels[k]) + "\n"
		}
	}
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return nil, fmt.Errorf("writing prometheus config: %w", err)
	}
	var s *Server
	for attempt := 0; attempt < 3; attempt++ {
		s, err = startProcess(ctx, "prometheus", prometheus, workDir, func(addr string) []string {
			return []string{
				"--config.file=" + cfg,
				"--storage.tsdb.path=" + data,
				"--storage.tsdb.retention.time=100y",
				"--web.listen-address=" + addr,
				"--query.lookback-delta=5m",
				"--log.level=warn",
			}
		}, "/-/ready")
		if err == nil || !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	s.LoadTime = load
	return s, nil
}

var errPortTaken = errors.New("port taken")

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startProcess runs bin with args on a free port and waits for readyPath
// to answer 200.
func startProcess(ctx context.Context, kind, bin, workDir string, args func(addr string) []string, readyPath string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logPath := filepath.Join(workDir, kind+".log")
	lf, err := os.Create(logPath) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", logPath, err)
	}
	cmd := exec.Command(bin, args(addr)...) // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
	cmd.Dir = workDir
	cmd.Stdout, cmd.Stderr = lf, lf
	// Its own process group (a Ctrl-C reaches the test binary, which
	// closes the server), and killed with its parent so a test binary that
	// dies on a timeout does not leave servers behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &Server{URL: "http://" + addr, Kind: kind, Dir: workDir, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait() // the exit is seen through s.done; its status is in the log
		lf.Close()
		close(s.done)
	}()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Close()
			return nil, fmt.Errorf("waiting for %s to be ready: %w", kind, ctx.Err())
		case <-s.done:
			msg := tail(logPath, 15)
			if strings.Contains(msg, "address already in use") {
				return nil, fmt.Errorf("%s on %s: %w", kind, addr, errPortTaken)
			}
			return nil, fmt.Errorf("%s exited before it was ready: %s", kind, msg)
		case <-tick.C:
			resp, err := client.Get(s.URL + readyPath)
			if err != nil {
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.ReadyTime = time.Since(t0)
				return s, nil
			}
		}
	}
}

// Close stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (s *Server) Close() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

// Log returns the last lines the server logged (for failure messages).
func (s *Server) Log() string { return tail(s.log, 30) }

// LaunchVM starts VictoriaMetrics on a free 127.0.0.1 port with storage in
// workDir/vmdata and imports omFile through /api/v1/import/prometheus
// (timestamps converted from the file's seconds to milliseconds, comments
// dropped), then flushes so the data is searchable at once. VictoriaMetrics
// drops NaN samples on ingestion; compare against the file without them.
func LaunchVM(ctx context.Context, omFile, workDir string) (*Server, error) {
	if err := needBinary(VMBin, VMPkg); err != nil {
		return nil, err
	}
	data := filepath.Join(workDir, "vmdata")
	if err := os.MkdirAll(data, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		return nil, fmt.Errorf("creating %s: %w", data, err)
	}
	var s *Server
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		s, err = startProcess(ctx, "victoria-metrics", VMBin, workDir, func(addr string) []string {
			return []string{
				"-storageDataPath=" + data,
				"-retentionPeriod=100y",
				"-search.latencyOffset=0s",
				"-search.disableCache",
				"-httpListenAddr=" + addr,
				"-loggerLevel=WARN",
			}
		}, "/health")
		if err == nil || !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := s.importOM(ctx, omFile); err != nil {
		s.Close()
		return nil, err
	}
	s.LoadTime = time.Since(t0)
	return s, nil
}

// importOM streams omFile to VictoriaMetrics in chunks.
func (s *Server) importOM(ctx context.Context, omFile string) error {
	f, err := os.Open(omFile) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return fmt.Errorf("opening %s: %w", omFile, err)
	}
	defer f.Close()
	pr, pw := io.Pipe()
	series := map[string]struct{}{}
	var samples omSamples
	go func() {
		pw.CloseWithError(convertOMToPromMillis(f, pw, series, &samples))
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v1/import/prometheus", pr)
	if err != nil {
		return fmt.Errorf("building import request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("importing %s into VictoriaMetrics: %w", omFile, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("importing %s into VictoriaMetrics: %s: %s", omFile, resp.Status, body)
	}
	// The import answers before every new series is searchable (ingestion
	// and the series index are asynchronous, slower on a loaded machine):
	// flush and poll until VictoriaMetrics sees every series of the file.
	for {
		if err := s.vmFlush(ctx); err != nil {
			return err
		}
		n, err := s.vmSeriesCount(ctx)
		if err != nil {
			return err
		}
		if n >= len(series) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VictoriaMetrics shows %d of %d imported series: %w", n, len(series), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	// A series can be listed before all its samples are: on a loaded
	// machine a harvest right after the series showed up found whole
	// families empty in the run window. Poll until every finite sample is
	// counted (bounded: should VictoriaMetrics count differently, the wait
	// only costs time and the tests say what differs).
	deadline := time.Now().Add(30 * time.Second)
	for samples.n > 0 && time.Now().Before(deadline) {
		if err := s.vmFlush(ctx); err != nil {
			return err
		}
		n, err := s.vmSampleCount(ctx, samples.first, samples.last)
		if err != nil {
			return err
		}
		if n >= samples.n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VictoriaMetrics counts %d of %d imported samples: %w", n, samples.n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

func (s *Server) vmFlush(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/internal/force_flush", nil)
	if err != nil {
		return fmt.Errorf("building flush request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("flushing VictoriaMetrics: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("flushing VictoriaMetrics: %s", resp.Status)
	}
	return nil
}

// vmSeriesCount is the number of series VictoriaMetrics can find over all
// time (start=1: VictoriaMetrics reads start=0 as "not given", the last day).
func (s *Server) vmSeriesCount(ctx context.Context) (int, error) {
	q := url.Values{"match[]": {`{__name__=~".+"}`}, "start": {"1"}, "end": {strconv.FormatInt(time.Now().Unix()+86400, 10)}}
	var body struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := s.vmGet(ctx, "/api/v1/series", q, &body); err != nil {
		return 0, fmt.Errorf("listing VictoriaMetrics series: %w", err)
	}
	return len(body.Data), nil
}

// omSamples counts an imported file's finite samples and their time span
// (seconds).
type omSamples struct {
	n           int64
	first, last int64
}

// vmSampleCount is how many samples VictoriaMetrics finds in [first, last].
func (s *Server) vmSampleCount(ctx context.Context, first, last int64) (int64, error) {
	q := url.Values{"query": {fmt.Sprintf(`sum(count_over_time({__name__=~".+"}[%ds]))`, last-first+1)},
		"time": {strconv.FormatInt(last, 10)}}
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := s.vmGet(ctx, "/api/v1/query", q, &body); err != nil {
		return 0, fmt.Errorf("counting VictoriaMetrics samples: %w", err)
	}
	if len(body.Data.Result) == 0 {
		return 0, nil
	}
	v, _ := body.Data.Result[0].Value[1].(string)
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("VictoriaMetrics sample count %q: %w", v, err)
	}
	return int64(n), nil
}

// vmGet decodes the JSON answer of GET path?q into out.
func (s *Server) vmGet(ctx context.Context, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// convertOMToPromMillis rewrites OpenMetrics sample lines `name{..} v ts`
// (ts in seconds, possibly fractional) into Prometheus text lines with
// millisecond timestamps, dropping comments and # EOF.
// It records each distinct series (the text before the value) in series,
// and counts the finite samples and their span in samples.
func convertOMToPromMillis(r io.Reader, w io.Writer, series map[string]struct{}, samples *omSamples) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	bw := bufio.NewWriterSize(w, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		i := bytes.LastIndexByte(line, ' ')
		if i < 0 {
			return fmt.Errorf("line without timestamp: %q", line)
		}
		ts, err := strconv.ParseFloat(string(line[i+1:]), 64)
		if err != nil {
			return fmt.Errorf("bad timestamp in %q: %w", line, err)
		}
		// VictoriaMetrics drops NaN samples, so only a finite sample makes a
		// series it will show.
		if j := bytes.LastIndexByte(line[:i], ' '); j > 0 {
			if v, err := strconv.ParseFloat(string(line[j+1:i]), 64); err == nil && !math.IsNaN(v) {
				series[string(line[:j])] = struct{}{}
				sec := int64(ts)
				if samples.n == 0 || sec < samples.first {
					samples.first = sec
				}
				samples.last = max(samples.last, sec)
				samples.n++
			}
		}
		ms := int64(ts * 1000) // the same conversion Prometheus's OpenMetrics parser does
		bw.Write(line[:i+1])
		bw.WriteString(strconv.FormatInt(ms, 10))
		bw.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading OpenMetrics: %w", err)
	}
	return bw.Flush()
}
