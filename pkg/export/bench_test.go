package export

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/substrate/density/internal/cputime"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/cli"
)

// The export benchmarks. They report ratios and counts
// measured in one run (the machines have 2 shared cores: wall times are
// noisy, so nothing here asserts a duration). scripts/bench-export.sh runs
// them and turns the output into the table of docs/performance.md.

// promStats are counters Prometheus keeps about itself, read from its own
// /metrics: they count every request the export really made (retries and
// range chunks included) without a proxy in this process, whose CPU would
// otherwise be charged to the export.
type promStats struct {
	requests  float64 // /api/v1/query and /api/v1/query_range requests
	respBytes float64 // bytes of their answers
	cpu       float64 // process_cpu_seconds_total
	rss       float64 // process_resident_memory_bytes (current)
}

var apiHandlers = []string{`handler="/api/v1/query"`, `handler="/api/v1/query_range"`}

func readPromStats(ctx context.Context, base string) (promStats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return promStats{}, fmt.Errorf("building /metrics request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return promStats{}, fmt.Errorf("reading %s/metrics: %w", base, err)
	}
	defer resp.Body.Close()
	var st promStats
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		name := line[:i]
		switch {
		case name == "process_cpu_seconds_total":
			st.cpu = v
		case name == "process_resident_memory_bytes":
			st.rss = v
		case strings.HasPrefix(name, "prometheus_http_requests_total{") && hasAPIHandler(name):
			st.requests += v
		case strings.HasPrefix(name, "prometheus_http_response_size_bytes_sum{") && hasAPIHandler(name):
			st.respBytes += v
		}
	}
	if err := sc.Err(); err != nil {
		return promStats{}, fmt.Errorf("reading %s/metrics: %w", base, err)
	}
	return st, nil
}

func hasAPIHandler(series string) bool {
	for _, h := range apiHandlers {
		if strings.Contains(series, h) {
			return true
		}
	}
	return false
}

// benchRunDir copies a generated run's Locust files into a fresh directory
// (the export reads its steady window from stats_history.csv).
func benchRunDir(b *testing.B, r *promtest.Run) string {
	b.Helper()
	dir := b.TempDir()
	for _, name := range []string{simrun.HistoryFile, simrun.StatsFile} {
		data, err := os.ReadFile(filepath.Join(r.Dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func exportArgs(runDir, out, promURL string, start, end int64, inFlight int) []string {
	return []string{
		"--run-dir", runDir, "--out", out,
		"--start", strconv.FormatInt(start, 10), "--end", strconv.FormatInt(end, 10),
		"--prometheus-url", promURL, "--no-cluster-facts", "--no-wait",
		"--max-concurrency", strconv.Itoa(inFlight),
	}
}

// BenchmarkExportDemo is the full export (validation, harvest of every
// block, artifact writes) of the 1-hour demo run against a local Prometheus
// 2.42, at 1, 2, 4 and 8 Prometheus requests in flight.
//
// Reported per export: requests/op and resp-KiB/op (HTTP API requests and
// answer bytes as Prometheus counted them), queries/op (PromQL strings
// issued), export-cpu-% (this process's CPU time over wall time: the
// export's own work; the goal is < 10 %) and prom-cpu-% (the
// Prometheus process's CPU over the same wall time), and both CPU times per
// export in ms (steadier than the shares on a shared machine). ns/op is the
// wall time of one export; compare sub-benchmarks as ratios.
func BenchmarkExportDemo(b *testing.B) {
	r, srv := cache.Prometheus(b, "demo")
	runDir := benchRunDir(b, r)
	ctx := context.Background()
	for _, inFlight := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("inflight=%d", inFlight), func(b *testing.B) {
			o, err := ParseFlags(exportArgs(runDir, b.TempDir(), srv.URL, r.Truth.Start, r.Truth.End, inFlight), io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			env := DefaultEnv(io.Discard, io.Discard)
			var (
				wall, cpu            time.Duration
				reqs, resp, promCPU  float64
				queries, nullNotices int
			)
			for b.Loop() {
				b.StopTimer()
				before, err := readPromStats(ctx, srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				c0 := cputime.Now(b)
				t0 := time.Now()
				b.StartTimer()

				out, code := Execute(ctx, o, env)

				b.StopTimer()
				wall += time.Since(t0)
				cpu += cputime.Now(b) - c0
				after, err := readPromStats(ctx, srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				if code != cli.ExitOK || out == nil || out.Result == nil {
					b.Fatalf("export exit %d", code)
				}
				// A harvest that came back empty would make every ratio
				// meaningless: the demo run has snapshots and packing.
				if out.Result.Snapshots.CheckpointsCumulative == nil || out.Result.Packing.Summary.P50 == nil {
					b.Fatalf("export came back without snapshots or packing: %v", out.Result.Notices)
				}
				reqs += after.requests - before.requests
				resp += after.respBytes - before.respBytes
				promCPU += after.cpu - before.cpu
				queries = len(out.Result.Queries)
				for _, n := range out.Result.Notices {
					if strings.HasPrefix(n.Reason, "null: the read") {
						nullNotices++
					}
				}
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(reqs/n, "requests/op")
			b.ReportMetric(resp/n/1024, "resp-KiB/op")
			b.ReportMetric(float64(queries), "queries/op")
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "export-cpu-%")
			b.ReportMetric(100*promCPU/wall.Seconds(), "prom-cpu-%")
			// The shares move with the wall time, which a shared machine
			// stretches; CPU time per export is the steadier figure.
			b.ReportMetric(float64(cpu.Milliseconds())/n, "export-cpu-ms/op")
			b.ReportMetric(1000*promCPU/n, "prom-cpu-ms/op")
			b.ReportMetric(float64(nullNotices)/n, "failed-reads/op")
		})
	}
}

// recordedRequest is one request the export sent, as the recording proxy
// saw it.
type recordedRequest struct {
	Path             string
	Query            string
	Start, End, Step float64 // range queries
	Status           int
	Bytes            int64
	Refused          bool // the server refused it for its sample budget
}

// points is the number of evaluation steps of a range request: the points
// each series of its answer can have.
func (r recordedRequest) points() int64 {
	if r.Step <= 0 {
		return 0
	}
	return int64(math.Floor((r.End-r.Start)/r.Step)) + 1
}

// recorder is a reverse proxy in front of Prometheus that records every
// request (query, range, status, answer size).
type recorder struct {
	upstream string
	mu       sync.Mutex
	reqs     []recordedRequest
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	form, _ := url.ParseQuery(r.URL.RawQuery)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if bf, err := url.ParseQuery(string(body)); err == nil {
			for k, v := range bf {
				form[k] = append(form[k], v...)
			}
		}
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, rec.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		// Typically the export gave up (its timeout) and the request was
		// cancelled: recorded as failed, with no answer.
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recordedRequest{Path: r.URL.Path, Query: form.Get("query"), Status: http.StatusBadGateway})
		rec.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	var head bytes.Buffer
	n, _ := io.Copy(w, io.TeeReader(resp.Body, &limitWriter{w: &head, left: 4096}))
	f := func(k string) float64 { v, _ := strconv.ParseFloat(form.Get(k), 64); return v }
	rr := recordedRequest{Path: r.URL.Path, Query: form.Get("query"), Status: resp.StatusCode, Bytes: n}
	if strings.HasSuffix(r.URL.Path, "/query_range") {
		rr.Start, rr.End, rr.Step = f("start"), f("end"), f("step")
	}
	if resp.StatusCode != http.StatusOK {
		text := head.Bytes()
		if resp.Header.Get("Content-Encoding") == "gzip" { // passed through from the client
			if zr, err := gzip.NewReader(bytes.NewReader(text)); err == nil {
				text, _ = io.ReadAll(io.LimitReader(zr, 4096)) // a cut stream still yields its start
			}
		}
		rr.Refused = bytes.Contains(text, []byte("too many samples"))
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, rr)
	rec.mu.Unlock()
}

type limitWriter struct {
	w    io.Writer
	left int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left > 0 {
		k := min(len(p), l.left)
		l.w.Write(p[:k])
		l.left -= k
	}
	return len(p), nil
}

// largeSize parses DENSITY_BENCH_LARGE="<hours>:<worker pods>".
func largeSize(b *testing.B) (hours, pods int) {
	v := os.Getenv("DENSITY_BENCH_LARGE")
	if v == "" {
		b.Skip("set DENSITY_BENCH_LARGE=<hours>:<worker pods> (e.g. 6:500) to run the large export; scripts/bench-export.sh does")
	}
	h, p, ok := strings.Cut(v, ":")
	hours, err1 := strconv.Atoi(h)
	pods, err2 := strconv.Atoi(p)
	if !ok || err1 != nil || err2 != nil || hours <= 0 || pods <= 0 {
		b.Fatalf("DENSITY_BENCH_LARGE=%q is not <hours>:<worker pods>", v)
	}
	return hours, pods
}

// densityBinary returns $DENSITY_BIN or builds cmd/density into a temp dir.
func densityBinary(b *testing.B) string {
	if bin := os.Getenv("DENSITY_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "density")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/density")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building density: %v: %s", err, out)
	}
	return bin
}

// BenchmarkExportLarge generates simrun.Large (10 s scrape; size from
// DENSITY_BENCH_LARGE, e.g. 6:500 for the 6 hours over 500 worker
// pods), backfills it with promtool into a fresh Prometheus 2.42 and runs
// `density export` once as a subprocess through a recording proxy, with
// its defaults and with --timeout 60s (sub-benchmarks). The export's peak
// RSS and CPU come from the subprocess's rusage. It fails if the export
// exits non-zero or any range request asks for more than 11,000 points per
// series. Run it with -benchtime=1x: one export is the measurement,
// generation and backfill are setup (reported, not timed).
func BenchmarkExportLarge(b *testing.B) {
	hours, pods := largeSize(b)
	bin := densityBinary(b)
	sc := simrun.Large(simrun.LargeParams{Hours: hours, Pods: pods})
	work := b.TempDir()
	if d := os.Getenv("DENSITY_BENCH_DIR"); d != "" {
		work = d // a roomier disk for the OpenMetrics file
	}
	runDir := filepath.Join(work, "run")

	t0 := time.Now()
	truth, err := simrun.Generate(sc, runDir)
	if err != nil {
		b.Fatal(err)
	}
	genTime := time.Since(t0)
	omPath := filepath.Join(runDir, simrun.OMFile)
	b.Logf("generated %s: %.0f MiB OpenMetrics in %v", sc.Name, float64(truth.OMBytes)/(1<<20), genTime.Round(time.Second))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	srv, err := promtest.Launch(ctx, omPath, filepath.Join(work, "prom"))
	if err != nil {
		b.Fatalf("launching prometheus: %v", err)
	}
	defer srv.Close()
	b.Logf("promtool backfill %v, prometheus ready %v", srv.LoadTime.Round(time.Second), srv.ReadyTime.Round(time.Second))
	_ = os.Remove(omPath) // the blocks hold it now; free the disk

	rec := &recorder{upstream: srv.URL}
	proxy := httptest.NewServer(rec)
	defer proxy.Close()

	// The export with its defaults (8 s range timeout), then with a longer
	// timeout: at this size the defaults are what a CI job gets, the second
	// shows what the engine does when Prometheus is given the time.
	for _, v := range []struct {
		name  string
		extra []string
	}{{"defaults", nil}, {"timeout=60s", []string{"--timeout", "60s"}}} {
		b.Run(v.name, func(b *testing.B) {
			exportLarge(ctx, b, bin, runDir, truth, srv, proxy.URL, rec, v.extra)
			b.ReportMetric(genTime.Seconds(), "gen-s")
			b.ReportMetric(float64(truth.OMBytes)/(1<<20), "om-MiB")
			b.ReportMetric(srv.LoadTime.Seconds(), "backfill-s")
		})
	}
}

// exportLarge runs `density export` once as a subprocess through the
// recording proxy and reports what it cost.
func exportLarge(ctx context.Context, b *testing.B, bin, runDir string, truth *simrun.Truth, srv *promtest.Server, proxyURL string, rec *recorder, extra []string) {
	var (
		wall          time.Duration
		ru            *syscall.Rusage
		before, after promStats
		stdout        string
	)
	for b.Loop() {
		rec.mu.Lock()
		rec.reqs = nil
		rec.mu.Unlock()
		var err error
		if before, err = readPromStats(ctx, srv.URL); err != nil {
			b.Fatal(err)
		}
		args := append([]string{"export"}, exportArgs(runDir, b.TempDir(), proxyURL, truth.Start, truth.End, 8)...)
		cmd := exec.CommandContext(ctx, bin, append(args, extra...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		t0 := time.Now()
		err = cmd.Run()
		wall = time.Since(t0)
		if err != nil {
			b.Fatalf("density export: %v\n%s\n%s", err, out.String(), errOut.String())
		}
		ru = cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if after, err = readPromStats(ctx, srv.URL); err != nil {
			b.Fatal(err)
		}
		stdout = out.String()
	}

	var maxPoints, refused, failed, respBytes, maxResp int64
	ranges := 0
	rec.mu.Lock()
	reqs := rec.reqs
	rec.mu.Unlock()
	for _, r := range reqs {
		respBytes += r.Bytes
		maxResp = max(maxResp, r.Bytes)
		if p := r.points(); p > 0 {
			ranges++
			maxPoints = max(maxPoints, p)
		}
		if r.Refused {
			refused++
		}
		if r.Status != http.StatusOK {
			failed++
		}
	}
	b.Logf("export output:\n%s", stdout)
	if maxPoints > 11000 {
		b.Errorf("a range request asked for %d points per series, over Prometheus's 11,000", maxPoints)
	}
	nulls := strings.Count(stdout, "null: the read failed")
	b.ReportMetric(wall.Seconds(), "export-wall-s")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB") // Linux reports KiB
	b.ReportMetric(time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(), "export-cpu-s")
	b.ReportMetric(after.cpu-before.cpu, "prom-cpu-s")
	b.ReportMetric(after.rss/(1<<20), "prom-rss-MiB")
	b.ReportMetric(float64(len(reqs)), "requests")
	b.ReportMetric(float64(ranges), "range-requests")
	b.ReportMetric(float64(respBytes)/(1<<20), "resp-MiB")
	b.ReportMetric(float64(maxResp)/(1<<20), "max-resp-MiB")
	b.ReportMetric(float64(maxPoints), "max-points")
	b.ReportMetric(float64(refused), "refused")
	b.ReportMetric(float64(failed), "failed")
	b.ReportMetric(float64(nulls), "failed-read-notices")
}
