package export

// The fault matrix of the export path: one row per fault × path.
// Each row injects one fault into an otherwise healthy export of the
// simulator's "steady" run (real Prometheus 2.42, a fake Kubernetes API
// server holding a synthetic cluster, Locust files on disk or in a file://
// results store) and asserts what a CI job relies on: the artifacts are
// written, the fields the fault touches are null (never 0) while the others
// keep their clean values, stdout carries a notice naming the cause, and the
// exit code is 0.
//
// Prometheus faults come from internal/promfake (what a real server cannot
// be made to do) or from a proxy in front of the real Prometheus that
// rewrites its answers (partial-data warnings, NaN/Inf values, a 429 before
// each answer), so the rest of the answer stays real.
//
// With -reliability-doc (or RELIABILITY_DOC=1) the rows and their observed
// outcomes are written to the export section of docs/reliability.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/internal/damage"
	"github.com/substrate/density/internal/faultdoc"
	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

var reliabilityDoc = flag.Bool("reliability-doc", false, "write the fault matrix outcomes to docs/reliability.md (also RELIABILITY_DOC=1)")

// kubeToken is the only bearer token the fake API servers accept.
const kubeToken = "k8s-t0ken"

// The synthetic clusters of the matrix: a small one, and one with more
// worker pods than a list page (500) so that listing paginates.
var (
	smallCluster = kubefake.Synthetic{Nodes: 3, WorkerNodes: 2, Pods: 10, Workers: 4,
		Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
	pagedCluster = kubefake.Synthetic{Nodes: 4, WorkerNodes: 2, Pods: 1400, Workers: 1100,
		Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
)

// Field groups of the two stats.jsonl rows.
var (
	// kubeServerFields are the server_summary fields read from Kubernetes
	// (before/after snapshot); every other server_summary field comes from
	// Prometheus.
	kubeServerFields = []string{"oom_events_worker_restarts", "oom_events_worker_oomkilled_pods", "oom_events_evicted", "oom_events_worker_pods_lost"}
	// factFields are the trial_summary fields that depend on the cluster
	// facts.
	factFields = []string{"machine_type", "node_count", "allocatable_cores", "allocatable_ram_gb", "worker_pod_count",
		"kubernetes_version", "worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class",
		"multi_actor_worker", "actors_per_node", "actors_per_vcpu", "actors_per_gb_ram",
		"actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99"}
	// userFields are the trial_summary fields that need the observed user
	// counts of stats_history.csv.
	userFields = []string{"multi_actor_worker", "actors_per_node", "actors_per_vcpu", "actors_per_gb_ram",
		"actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99"}
)

// exportRows is what one export wrote: the server_summary and trial_summary
// measurements of the rows it appended (nil maps when absent).
type exportRows struct {
	server, trial map[string]any
	trialWritten  bool
}

// faultFixture is one row's export before the fault is injected: a fresh
// run directory (with the "before" snapshot) or results store, arguments
// for a healthy export, and a healthy Kubernetes client.
type faultFixture struct {
	t        *testing.T
	run      *promtest.Run
	promURL  string // the real Prometheus
	dir      string // the run directory (--run-dir) or the stored run's directory
	out      string // where the artifacts land
	store    string // file:// URL with --store, else ""
	storeID  string
	args     []string // every flag but --prometheus-url
	kube     func(cluster.Access) (kubernetes.Interface, error)
	prefix   []byte // bytes stats.jsonl held before the export (--run-dir)
	howNotes []string
}

func (f *faultFixture) setPrometheus(u string) { f.promURL = u }

// note records how the fault was produced, for the doc.
func (f *faultFixture) note(s string) { f.howNotes = append(f.howNotes, s) }

// fileInRun is the path of one of the run's files (run dir or stored run).
func (f *faultFixture) fileInRun(name string) string { return filepath.Join(f.dir, name) }

// exportFault is one matrix row.
type exportFault struct {
	fault string
	path  string // "export --run-dir" or "export --store"
	// setup injects the fault.
	setup func(f *faultFixture)
	// null lists fields that must be null; promNull adds every Prometheus
	// field of server_summary.
	null     []string
	promNull bool
	// skip lists fields not compared with the clean export (they describe
	// another cluster); check asserts them.
	skip []string
	// steadyFallback: stats_history.csv is unreadable, so by runs.md the
	// steady window is the run window; the steady-window statistics are
	// then recomputed over it (not compared), and the metadata must say so.
	steadyFallback bool
	// dropRatios: stats.csv is unreadable, so trial_summary has only
	// aggregate_failure_ratio, null (cluster-facts.md).
	dropRatios bool
	// says are substrings stdout must contain (the notice naming the
	// cause); never are substrings it must not (HTML pages).
	says, never []string
	// noTrial: no trial_summary row is expected.
	noTrial bool
	// quiet explains, for the doc, why a row needs no notice.
	quiet string
	// exit is the expected exit code (default 0).
	exit int
	// check runs extra assertions.
	check func(t *testing.T, f *faultFixture, got exportRows, stdout string)
}

// matrixRow is one recorded outcome.
type matrixRow struct{ fault, path, outcome string }

// TestExportFaultMatrix runs every fault row; see the file comment.
func TestExportFaultMatrix(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	healthy := kubefake.New(kubefake.Config{Token: kubeToken, TLS: true, Pods: smallCluster.PodSource(), Nodes: smallCluster.NodeSource()})
	t.Cleanup(healthy.Close)
	before := recordBeforeFile(t, run, healthy)

	// The clean export every row is compared with.
	base := newFixture(t, run, prom.URL, healthy, before, nil)
	clean, code, stdout := base.export()
	if code != cli.ExitOK || clean.server == nil || clean.trial == nil {
		t.Fatalf("clean export: exit %d, rows %v\n%s", code, clean, stdout)
	}
	archived := map[string][]byte{}
	for _, name := range []string{runs.FileServerSummary, runs.FileStatsJSONL} {
		b, err := os.ReadFile(filepath.Join(base.out, name))
		if err != nil {
			t.Fatal(err)
		}
		archived[name] = b
	}
	// The same export re-harvested from the store must equal it.
	sf := newFixture(t, run, prom.URL, healthy, before, archived)
	fromStore, code, stdout := sf.export()
	if code != cli.ExitOK || !equalJSON(fromStore.server, clean.server) || !equalJSON(fromStore.trial, clean.trial) {
		t.Fatalf("re-harvest from the store: exit %d, rows differ from the run directory's:\n%v\n%v\n%s", code, fromStore, clean, stdout)
	}
	promFields := slices.Sorted(maps.Keys(clean.server))
	promFields = slices.DeleteFunc(promFields, func(k string) bool { return slices.Contains(kubeServerFields, k) })
	for _, k := range append(slices.Clone(kubeServerFields), "node_count", "actors_per_node", "aggregate_failure_ratio") {
		if clean.server[k] == nil && clean.trial[k] == nil {
			t.Fatalf("the clean export has %s null: the matrix could not tell a fault from a clean run", k)
		}
	}
	measured := 0
	for _, k := range promFields {
		if clean.server[k] != nil {
			measured++
		}
	}
	if measured < len(promFields)*3/4 {
		t.Fatalf("the clean export measured only %d of %d Prometheus fields", measured, len(promFields))
	}

	var (
		mu   sync.Mutex
		rows []matrixRow
	)
	for _, row := range exportFaults(run) {
		t.Run(row.fault+" ("+row.path+")", func(t *testing.T) {
			var arch map[string][]byte
			if row.path == "export --store" {
				arch = archived
			}
			f := newFixture(t, run, prom.URL, healthy, before, arch)
			if row.setup != nil {
				row.setup(f)
			}
			got, code, stdout := f.export()
			t.Logf("output:\n%s", stdout)
			outcome := checkRow(t, row, f, clean, promFields, got, code, stdout)
			mu.Lock()
			rows = append(rows, matrixRow{row.fault, row.path, outcome})
			mu.Unlock()
		})
	}
	if faultdoc.Requested(*reliabilityDoc) {
		if t.Failed() {
			t.Log("docs/reliability.md not written: a row failed")
			return
		}
		faultdoc.WriteTable(t, "export", exportDocIntro, docRows(rows))
	}
}

const exportDocIntro = "## Faults: the export\n\n" +
	"Path `export`: `density export` (pkg/export.Main) on the simulator's \"steady\" run, " +
	"real Prometheus 2.42, a fake Kubernetes API server (internal/kubefake) holding a synthetic cluster, " +
	"and a \"before\" snapshot recorded with `--before`. Each row injects one fault; the test asserts the exit code, " +
	"that `server_summary.json` and the `stats.jsonl` rows are written, that the fields the fault touches are null " +
	"(never 0) while every other field equals the clean export's, and that stdout names the cause."

// checkRow asserts one row and returns its outcome text for the doc.
func checkRow(t *testing.T, row exportFault, f *faultFixture, clean exportRows, promFields []string, got exportRows, code int, stdout string) string {
	t.Helper()
	if code != row.exit {
		t.Fatalf("exit %d, want %d\nstdout:\n%s", code, row.exit, stdout)
	}
	if row.exit != cli.ExitOK {
		if got.server != nil {
			t.Errorf("exit %d but rows were written", code)
		}
		for _, s := range row.says {
			if !strings.Contains(stdout, s) {
				t.Errorf("output does not name the cause %q:\n%s", s, stdout)
			}
		}
		return fmt.Sprintf("exit %d (usage error), nothing written; stderr: %q", code, firstLine(stdout, row.says))
	}
	if got.server == nil {
		t.Fatalf("no server_summary row written\nstdout:\n%s", stdout)
	}
	ss, err := os.ReadFile(filepath.Join(f.out, runs.FileServerSummary))
	if err != nil {
		t.Fatalf("server_summary.json not written: %v", err)
	}
	if !json.Valid(ss) || bytes.Contains(ss, []byte("NaN")) || bytes.Contains(ss, []byte("Infinity")) {
		t.Fatalf("server_summary.json is not valid JSON without NaN/Infinity:\n%.400s", ss)
	}
	var doc struct {
		Metadata struct {
			Start       int64 `json:"start_ts"`
			End         int64 `json:"end_ts"`
			SteadyStart int64 `json:"steady_start_ts"`
			SteadyEnd   int64 `json:"steady_end_ts"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(ss, &doc); err != nil {
		t.Fatal(err)
	}
	md := doc.Metadata
	if row.steadyFallback {
		if md.SteadyStart != md.Start || md.SteadyEnd != md.End {
			t.Errorf("steady window [%d, %d], want the run window [%d, %d] (stats_history.csv unreadable)", md.SteadyStart, md.SteadyEnd, md.Start, md.End)
		}
		if !strings.Contains(stdout, "steady window = run window") {
			t.Errorf("no notice of the steady-window fallback:\n%s", stdout)
		}
	} else if md.SteadyStart != f.run.Truth.SteadyStart || md.SteadyEnd != f.run.Truth.SteadyEnd {
		t.Errorf("steady window [%d, %d], want the simulator's [%d, %d]", md.SteadyStart, md.SteadyEnd, f.run.Truth.SteadyStart, f.run.Truth.SteadyEnd)
	}
	if row.noTrial == got.trialWritten {
		t.Errorf("trial_summary written = %v, want %v", got.trialWritten, !row.noTrial)
	}

	mustNull := map[string]bool{}
	for _, k := range row.null {
		mustNull[k] = true
	}
	if row.promNull {
		for _, k := range promFields {
			mustNull[k] = true
		}
	}
	var nulled, kept []string
	compare := func(name string, gotM, cleanM map[string]any) {
		for k, want := range cleanM {
			v, present := gotM[k]
			switch {
			case slices.Contains(row.skip, k):
			case row.dropRatios && strings.HasSuffix(k, "_failure_ratio") && k != "aggregate_failure_ratio":
				if present {
					t.Errorf("%s.%s = %v, want absent (stats.csv unreadable)", name, k, v)
				}
			case row.steadyFallback && name == "server_summary" && !slices.Contains(kubeServerFields, k) && !strings.HasPrefix(k, "oom_events_"):
				// recomputed over the run window (checked below)
			case mustNull[k]:
				if v != nil {
					t.Errorf("%s.%s = %v, want null", name, k, v)
				} else if want != nil {
					nulled = append(nulled, k)
				}
			case gotM != nil && !equalJSON(v, want):
				t.Errorf("%s.%s = %v, want the clean export's %v (a field the fault does not touch)", name, k, v, want)
			default:
				kept = append(kept, k)
			}
		}
	}
	compare("server_summary", got.server, clean.server)
	if got.trialWritten && clean.trial != nil {
		compare("trial_summary", got.trial, clean.trial)
	}
	for k := range mustNull {
		if _, ok := clean.server[k]; ok {
			continue
		}
		if got.trial != nil {
			if v, ok := got.trial[k]; ok && v != nil {
				t.Errorf("trial_summary.%s = %v, want null", k, v)
			}
		}
	}
	for _, s := range row.says {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout does not name the cause %q:\n%s", s, stdout)
		}
	}
	for _, s := range row.never {
		if strings.Contains(stdout, s) {
			t.Errorf("stdout shows %q:\n%s", s, stdout)
		}
	}
	if row.check != nil {
		row.check(t, f, got, stdout)
	}
	written := "server_summary.json and the server_summary row"
	if got.trialWritten {
		written = "server_summary.json and both rows"
	}
	notice := fmt.Sprintf("notice: %q", firstLine(stdout, row.says))
	if len(row.says) == 0 {
		notice = row.quiet
	}
	outcome := fmt.Sprintf("exit 0; %s written; %s; %s", written, nullSummary(nulled, row), notice)
	if len(f.howNotes) > 0 {
		outcome += " (" + strings.Join(f.howNotes, "; ") + ")"
	}
	return outcome
}

// nullSummary says which measured fields became null, by kind.
func nullSummary(nulled []string, row exportFault) string {
	rest := "every other field as in the clean export"
	if row.steadyFallback {
		rest = "steady window = run window (the runs.md fallback), so the steady-window statistics are recomputed over it; every other field as in the clean export"
	}
	if len(nulled) == 0 {
		return "every field as in the clean export"
	}
	kinds := []struct {
		name string
		n    int
		is   func(string) bool
	}{
		{"Prometheus fields", 0, func(k string) bool { return false }},
		{"cluster facts", 0, func(k string) bool { return slices.Contains(factFields[:9], k) }},
		{"frontiers", 0, func(k string) bool { return slices.Contains(userFields, k) }},
		{"Kubernetes OOM counts", 0, func(k string) bool { return slices.Contains(kubeServerFields, k) }},
		{"aggregate_failure_ratio", 0, func(k string) bool { return k == "aggregate_failure_ratio" }},
	}
	for _, k := range nulled {
		i := slices.IndexFunc(kinds, func(c struct {
			name string
			n    int
			is   func(string) bool
		}) bool {
			return c.is(k)
		})
		if i < 0 {
			i = 0
		}
		kinds[i].n++
	}
	var parts []string
	for _, k := range kinds {
		switch {
		case k.n == 0:
		case k.name == "aggregate_failure_ratio":
			parts = append(parts, k.name)
		default:
			parts = append(parts, fmt.Sprintf("%d %s", k.n, k.name))
		}
	}
	return "null: " + strings.Join(parts, ", ") + "; " + rest
}

// firstLine returns the first stdout line containing every one of says
// (else the first containing says[0]), trimmed for the doc.
func firstLine(out string, says []string) string {
	if len(says) == 0 {
		return ""
	}
	lines := strings.Split(out, "\n")
	pick := ""
	for _, l := range lines {
		all := true
		for _, s := range says {
			if !strings.Contains(l, s) {
				all = false
				break
			}
		}
		if all {
			pick = l
			break
		}
	}
	if pick == "" {
		for _, l := range lines {
			if strings.Contains(l, says[0]) {
				pick = l
				break
			}
		}
	}
	pick = faultdoc.Stable(strings.Join(strings.Fields(pick), " "))
	if len(pick) > 180 {
		pick = pick[:177] + "..."
	}
	return pick
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// exportFaults is the matrix. Prometheus rows replace the real Prometheus;
// Kubernetes rows replace the healthy API server; store rows damage the
// stored run's files.
func exportFaults(run *promtest.Run) []exportFault {
	okVector := promfake.Success("vector", "[]")
	kubeRow := func(fault string, cfg kubefake.Config, says ...string) exportFault {
		return exportFault{
			fault: fault, path: "export --run-dir",
			setup: func(f *faultFixture) {
				cfg.TLS = true
				srv := kubefake.New(cfg)
				f.t.Cleanup(srv.Close)
				f.kube = kubeClient1s(srv, kubeToken)
			},
			null: append(slices.Clone(kubeServerFields), factFields...), says: says,
		}
	}
	return []exportFault{
		// Prometheus.
		{fault: "Prometheus: connection refused", path: "export --run-dir",
			setup:    func(f *faultFixture) { f.setPrometheus(promfake.ClosedURL(f.t)) },
			promNull: true, says: []string{"connection refused"}},
		{fault: "Prometheus: DNS failure (.invalid host)", path: "export --run-dir",
			setup:    func(f *faultFixture) { f.setPrometheus("http://prometheus.invalid:9090") },
			promNull: true, says: []string{"lookup prometheus.invalid", "no such host"}},
		{fault: "Prometheus: slower than the timeout", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.New(f.t, promfake.Always(promfake.Reply{Delay: 10 * time.Second, Body: okVector})).URL)
				f.args = append(f.args, "--timeout", "300ms")
			},
			promNull: true, says: []string{"no answer within the 300ms timeout"}},
		{fault: "Prometheus: HTTP 502 HTML page (every attempt)", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.New(f.t, promfake.Always(promfake.HTML(http.StatusBadGateway))).URL)
			},
			promNull: true, says: []string{"502"}, never: []string{"<html>", "nginx"}},
		{fault: "Prometheus: HTTP 503 HTML page (every attempt)", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.New(f.t, promfake.Always(promfake.HTML(http.StatusServiceUnavailable))).URL)
			},
			promNull: true, says: []string{"503"}, never: []string{"<html>", "nginx"}},
		{fault: "Prometheus: HTTP 502 once, then answered", path: "export --run-dir",
			setup: func(f *faultFixture) {
				p := newFaultProxy(f.t, f.promURL, firstAttempt(func(w http.ResponseWriter) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusBadGateway)
					_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
				}))
				f.setPrometheus(p.URL)
				f.t.Cleanup(func() {
					// The first backoff is 100 ms (pkg/promql).
					if gap, ok := p.minRetryGap(); !ok || gap < 100*time.Millisecond {
						f.t.Errorf("retry after a 502: retried %v, shortest gap %v (want >= 100ms backoff)", ok, gap)
					}
				})
				f.note("each request's first attempt answered 502 by a proxy in front of the real Prometheus")
			},
			quiet: "no notice needed: the retry (bounded, with backoff) recovered every answer"},
		{fault: "Prometheus: 429 with Retry-After: 1, then answered", path: "export --run-dir",
			setup: func(f *faultFixture) {
				p := newFaultProxy(f.t, f.promURL, firstAttempt(func(w http.ResponseWriter) {
					w.Header().Set("Retry-After", "1")
					http.Error(w, "rate limited", http.StatusTooManyRequests)
				}))
				f.setPrometheus(p.URL)
				f.t.Cleanup(func() {
					gap, ok := p.minRetryGap()
					switch {
					case !ok:
						f.t.Error("no request was retried after its 429")
					case gap < time.Second:
						f.t.Errorf("a retry came %v after its 429, sooner than Retry-After: 1", gap)
					}
				})
				f.note("a proxy answers each request's first attempt with 429 Retry-After: 1; every retry came ≥ 1 s later")
			},
			quiet: "no notice needed: the retry, after the server's Retry-After, recovered every answer"},
		{fault: "Prometheus: 429 with Retry-After: 120 (beyond the 2 s retry cap)", path: "export --run-dir",
			setup: func(f *faultFixture) {
				s := promfake.New(f.t, promfake.Always(promfake.TooManyRequests("120")))
				f.setPrometheus(s.URL)
				f.t.Cleanup(func() {
					seen := map[string]int{}
					for _, r := range s.Requests() {
						seen[r.Path+"?"+r.Form.Encode()]++
					}
					for q, n := range seen {
						if n > 1 {
							f.t.Errorf("%q was retried %d times despite Retry-After: 120", q, n-1)
						}
					}
				})
				f.note("not retried: retrying sooner than asked would only add load")
			},
			promNull: true, says: []string{"429"}},
		{fault: "Prometheus: truncated JSON", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.New(f.t, promfake.Always(promfake.Truncated(promfake.Success("matrix", `[{"metric":{"a":"b"},"values":[[1700000000,"1"]]}]`)))).URL)
			},
			promNull: true, says: []string{"unexpected end of JSON input"}},
		{fault: "Prometheus: status error with errorType", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.New(f.t, promfake.Always(promfake.APIError("execution", "expanding series: store gateway unavailable"))).URL)
			},
			promNull: true, says: []string{"execution", "store gateway unavailable"}},
		{fault: "Prometheus: wrong result type", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.New(f.t, func(r promfake.Request) promfake.Reply {
					if strings.HasSuffix(r.Path, "/query_range") {
						return promfake.OK(promfake.Success("vector", "[]"))
					}
					return promfake.OK(promfake.Success("string", promfake.Scalar(promfake.Point{T: 1700000000, V: "surprise"})))
				}).URL)
			},
			promNull: true, says: []string{"unexpected result type"}},
		{fault: "Prometheus: NaN and ±Inf values", path: "export --run-dir",
			setup: func(f *faultFixture) {
				p := newFaultProxy(f.t, f.promURL, nil)
				p.rewrite = promfake.NonFinite
				f.setPrometheus(p.URL)
				f.note("a proxy replaces every sample value of the real answers with NaN, +Inf or -Inf")
			},
			promNull: true, says: []string{"null"},
			check: func(t *testing.T, f *faultFixture, _ exportRows, _ string) {
				// A series whose every sample is NaN or ±Inf is no series:
				// working_set counts are null, never 0.
				b, err := os.ReadFile(filepath.Join(f.out, runs.FileServerSummary))
				if err != nil {
					t.Fatal(err)
				}
				var doc struct {
					WS map[string]struct {
						Count *int `json:"count"`
					} `json:"working_set"`
				}
				if err := json.Unmarshal(b, &doc); err != nil {
					t.Fatal(err)
				}
				for name, blk := range doc.WS {
					if blk.Count != nil {
						t.Errorf("working_set.%s.count = %d for series of NaN and ±Inf only, want null", name, *blk.Count)
					}
				}
			}},
		{fault: "Prometheus: partial data with warnings (Thanos/Mimir)", path: "export --run-dir",
			setup: func(f *faultFixture) {
				p := newFaultProxy(f.t, f.promURL, nil)
				p.rewrite = promfake.AddWarning("partial response: store 10.0.0.3:10901 unavailable")
				f.setPrometheus(p.URL)
				f.note("values are kept as answered (as Grafana's Prometheus datasource does) and flagged")
			},
			says: []string{"the server warned that the answer may be incomplete: partial response: store 10.0.0.3:10901 unavailable"}},
		{fault: "Prometheus: answer larger than the response-size limit", path: "export --run-dir",
			setup: func(f *faultFixture) {
				f.setPrometheus(promfake.OversizedServer(f.t, promql.DefaultMaxResponseBytes+1))
			},
			promNull: true, says: []string{"MaxResponseBytes limit of 67108864 bytes"}},

		// Kubernetes.
		kubeRow("Kubernetes: 401 Unauthorized", kubefake.Config{Token: "another-token", Pods: smallCluster.PodSource(), Nodes: smallCluster.NodeSource()},
			"401", "Unauthorized"),
		kubeRow("Kubernetes: 403 Forbidden", kubefake.Config{Token: kubeToken, Pods: smallCluster.PodSource(), Nodes: smallCluster.NodeSource(),
			Faults: map[string]kubefake.Fault{kubefake.Pods: {Status: http.StatusForbidden}, kubefake.Nodes: {Status: http.StatusForbidden}, kubefake.Events: {Status: http.StatusForbidden}}},
			"403", "forbidden"),
		kubeRow("Kubernetes: timeout", kubefake.Config{Token: kubeToken, Pods: smallCluster.PodSource(), Nodes: smallCluster.NodeSource(),
			Faults: map[string]kubefake.Fault{kubefake.Pods: {Delay: time.Minute}, kubefake.Nodes: {Delay: time.Minute}, kubefake.Events: {Delay: time.Minute}}},
			"timed out"),
		{fault: "Kubernetes: continue token expires (410) twice mid-pagination", path: "export --run-dir",
			setup: expiringContinue(2, fmt.Sprintf("%d worker pods, pages of 500; the list restarts once, the second expiry fails it", pagedCluster.Workers)),
			// evicted comes from the event list, which does not paginate here.
			null: append([]string{"oom_events_worker_restarts", "oom_events_worker_oomkilled_pods", "oom_events_worker_pods_lost"}, factFields...),
			skip: []string{"oom_events_evicted"}, says: []string{"410", "expired twice"}},
		{fault: "Kubernetes: continue token expires (410) once mid-pagination", path: "export --run-dir",
			setup: expiringContinue(1, "the list restarts from scratch once and completes: one consistent snapshot"),
			quiet: "no notice needed: worker_pod_count = 1100, every pod matched before/after",
			skip:  append(slices.Clone(kubeServerFields), factFields...),
			check: func(t *testing.T, f *faultFixture, got exportRows, _ string) {
				if got.trial["worker_pod_count"] != strconv.Itoa(pagedCluster.Workers) {
					t.Errorf("worker_pod_count = %v after a restarted list, want %d", got.trial["worker_pod_count"], pagedCluster.Workers)
				}
				if got.server["oom_events_worker_pods_lost"] != "0" {
					t.Errorf("worker_pods_lost = %v, want 0 (same pods before and after)", got.server["oom_events_worker_pods_lost"])
				}
			}},

		// Results store (a file:// store holding the run as uploaded,
		// re-harvested with --store) and the run directory's stats.jsonl.
		{fault: "Results store: the run is not in the store", path: "export --store",
			setup: func(f *faultFixture) {
				f.args[slices.Index(f.args, "--run")+1] = strings.Replace(f.storeID, "/"+itoa(run.Truth.Start)+"/", "/1500000000/", 1)
			},
			exit: cli.ExitUsage, says: []string{"run not found"}},
		{fault: "Results store: missing object (stats.csv not uploaded)", path: "export --store",
			setup: func(f *faultFixture) { damage.Remove(f.t, f.fileInRun(runs.FileStats)) },
			null:  []string{"aggregate_failure_ratio"}, dropRatios: true, says: []string{"stats.csv unreadable", "not found"}},
		{fault: "Results store: permission denied", path: "export --store",
			setup: func(f *faultFixture) { denyRead(f, runs.FileStats) },
			null:  []string{"aggregate_failure_ratio"}, dropRatios: true, says: []string{"stats.csv unreadable"},
			check: func(t *testing.T, f *faultFixture, _ exportRows, stdout string) {
				if os.Geteuid() != 0 && !strings.Contains(stdout, "permission denied") {
					t.Errorf("stdout does not say permission denied:\n%s", stdout)
				}
			}},
		{fault: "Results store: corrupt stats_history.csv line", path: "export --store",
			setup: func(f *faultFixture) {
				damage.InsertLine(f.t, f.fileInRun(runs.FileStatsHistory), "\x00\xff\xfe garbage \xc3\x28\n")
			},
			null: userFields, steadyFallback: true, says: []string{"stats_history.csv unreadable", "invalid UTF-8"}},
		{fault: "Results store: corrupt stats.csv line", path: "export --store",
			setup: func(f *faultFixture) {
				damage.InsertLine(f.t, f.fileInRun(runs.FileStats), "grpc,Resume,12x,oops,1,1\n")
			},
			null: []string{"aggregate_failure_ratio"}, dropRatios: true, says: []string{"corrupt count", "12x"}},
		{fault: "Results store: corrupt stats.jsonl line", path: "export --store",
			setup: func(f *faultFixture) {
				// Without server_summary.json the window comes from the
				// last trial_summary row of stats.jsonl.
				damage.Remove(f.t, f.fileInRun(runs.FileServerSummary))
				damage.InsertLine(f.t, f.fileInRun(runs.FileStatsJSONL), "{\"metric\": \"trial_summary\", \"measurements\": {\"run_end\"\n")
			},
			quiet: "no notice: the window comes from the last readable trial_summary row; a line that is not JSON is skipped (it may be another tool's)"},
		{fault: "Results store: half-written stats_history.csv (upload cut mid-line)", path: "export --store",
			setup: func(f *faultFixture) { damage.Cut(f.t, f.fileInRun(runs.FileStatsHistory), 0.6) },
			null:  userFields, steadyFallback: true, says: []string{"stats_history.csv unreadable", "half-written"}},
		{fault: "Results store: half-written stats.csv (upload cut mid-line)", path: "export --store",
			setup: func(f *faultFixture) { damage.Cut(f.t, f.fileInRun(runs.FileStats), 0.9) },
			null:  []string{"aggregate_failure_ratio"}, dropRatios: true, says: []string{"stats.csv unreadable", "half-written"}},
		{fault: "Results store: half-written server_summary.json", path: "export --store",
			setup: func(f *faultFixture) { damage.Cut(f.t, f.fileInRun(runs.FileServerSummary), 0.5) },
			says:  []string{"server_summary.json unreadable", "unexpected EOF"}},
		{fault: "Run directory: corrupt stats.jsonl line (appended after)", path: "export --run-dir",
			setup: func(f *faultFixture) {
				writeFile(f.t, f.fileInRun(runs.FileStatsJSONL), []byte("{\"metric\": \"locust_summary\"}\n\x00\xffnot json at all\n"))
			},
			quiet: "no notice: the corrupt line is not this project's; it is kept byte for byte and the rows are appended after it"},
		{fault: "Run directory: half-written stats.jsonl (last line cut)", path: "export --run-dir",
			setup: func(f *faultFixture) {
				writeFile(f.t, f.fileInRun(runs.FileStatsJSONL), []byte("{\"metric\": \"locust_summary\"}\n{\"timestamp\": \"2024-03-12T10:00:00Z\", \"metr"))
			},
			quiet: "no notice: the half line is kept byte for byte and terminated; the new rows start on their own line"},
	}
}

// expiringContinue runs the export against the paged cluster whose pod
// list's continue token expires (410) times times mid-pagination; the before
// snapshot comes from a twin server without faults.
func expiringContinue(times int, note string) func(*faultFixture) {
	return func(f *faultFixture) {
		twin := kubefake.New(kubefake.Config{Token: kubeToken, TLS: true, Pods: pagedCluster.PodSource(), Nodes: pagedCluster.NodeSource()})
		f.t.Cleanup(twin.Close)
		writeBefore(f.t, f.dir, recordBeforeFile(f.t, f.run, twin))
		srv := kubefake.New(kubefake.Config{Token: kubeToken, TLS: true, Pods: pagedCluster.PodSource(), Nodes: pagedCluster.NodeSource(),
			Faults: map[string]kubefake.Fault{kubefake.Pods: {ExpireContinue: times}}})
		f.t.Cleanup(srv.Close)
		f.kube = kubeClientTimeout(srv, kubeToken, pagedListTimeout)
		f.note(note)
	}
}

// denyRead makes one stored file unreadable (see damage.DenyRead).
func denyRead(f *faultFixture, name string) {
	f.note(damage.DenyRead(f.t, f.fileInRun(name)))
}

// newFixture prepares a healthy export of run: a run directory (or, with
// store, a file:// results store holding the run as the orchestrator
// uploads it) with the "before" snapshot, and the healthy Kubernetes API.
func newFixture(t *testing.T, run *promtest.Run, promURL string, kube *kubefake.Server, before []byte, archived map[string][]byte) *faultFixture {
	store := archived != nil
	t.Helper()
	tr := run.Truth
	f := &faultFixture{t: t, run: run, promURL: promURL, kube: kubeClient1s(kube, kubeToken)}
	if store {
		root := t.TempDir()
		f.dir = filepath.Join(root, "runs", tr.TestName, "run_date="+time.Unix(tr.Start, 0).UTC().Format("2006-01-02"),
			"run_ts="+itoa(tr.Start), "run_tag="+tr.Tag)
		f.store = "file://" + root
		f.storeID = runs.StoreRunID(tr.TestName, tr.Start, tr.Tag)
		f.out = filepath.Join(t.TempDir(), "out")
		f.args = []string{"--store", f.store, "--run", f.storeID, "--out", f.out}
	} else {
		f.dir = t.TempDir()
		f.out = f.dir
		f.args = []string{"--run-dir", f.dir}
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{runs.FileStatsHistory, runs.FileStats} {
		b, err := os.ReadFile(filepath.Join(run.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(f.dir, name), b)
	}
	writeFile(t, filepath.Join(f.dir, runs.FileStatus), []byte(`{"locust_exit_code": 0, "stats_generated": true}`))
	writeBefore(t, f.dir, before)
	if store {
		// An archived run holds its first export's artifacts too.
		for name, b := range archived {
			writeFile(t, filepath.Join(f.dir, name), b)
		}
	}
	f.args = append(f.args, "--atelet-lag-s", itoa(tr.LagS), "--no-wait", "--actors-per-user", "2")
	return f
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeBefore(t *testing.T, dir string, before []byte) {
	t.Helper()
	writeFile(t, filepath.Join(dir, runs.FileClusterBefore), before)
}

// recordBeforeFile records the "before" snapshot of the cluster kube serves
// with `density export --before` and returns the file.
func recordBeforeFile(t *testing.T, run *promtest.Run, kube *kubefake.Server) []byte {
	t.Helper()
	dir := t.TempDir()
	e := newEnv(nil, nil)
	e.Kube = kubeClientTimeout(kube, kubeToken, pagedListTimeout)
	if code := Main(context.Background(), []string{"--run-dir", dir, "--before"}, e.Env); code != cli.ExitOK {
		t.Fatalf("--before: exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, runs.FileClusterBefore))
	if err != nil {
		t.Fatalf("--before wrote nothing: %v\n%s", err, e.out.String())
	}
	return b
}

// kubeClient1s builds a real client-go clientset for a fake API server
// (served over TLS: a token goes only to https://) with a 1 s request
// timeout (the rows whose server never answers).
func kubeClient1s(srv *kubefake.Server, token string) func(cluster.Access) (kubernetes.Interface, error) {
	return kubeClientTimeout(srv, token, time.Second)
}

// pagedListTimeout is the request timeout of the reads that list the
// 1,100-pod paged cluster: one page takes longer than a second under the
// race detector on a loaded 2-core machine.
const pagedListTimeout = 30 * time.Second

func kubeClientTimeout(srv *kubefake.Server, token string, timeout time.Duration) func(cluster.Access) (kubernetes.Interface, error) {
	u, ca := srv.URL, srv.CACertPEM()
	return func(cluster.Access) (kubernetes.Interface, error) {
		return cluster.NewClient(cluster.Access{Mode: cluster.ModeToken, URL: u, Token: token, CACert: ca, Timeout: timeout})
	}
}

// export runs the export and reads the rows it appended.
func (f *faultFixture) export() (exportRows, int, string) {
	f.t.Helper()
	jsonl := filepath.Join(f.out, runs.FileStatsJSONL)
	f.prefix, _ = os.ReadFile(jsonl)
	e := newEnv(nil, nil)
	e.Kube = f.kube
	args := append(slices.Clone(f.args), "--prometheus-url", f.promURL)
	code := Main(context.Background(), args, e.Env)
	out := e.out.String() + e.errOut.String()
	var got exportRows
	b, err := os.ReadFile(jsonl)
	if err != nil {
		return got, code, out
	}
	if !bytes.HasPrefix(b, f.prefix) {
		f.t.Errorf("stats.jsonl's previous bytes were changed:\nbefore %q\nafter  %q", f.prefix, b)
		return got, code, out
	}
	added := b[len(f.prefix):]
	if len(f.prefix) > 0 && f.prefix[len(f.prefix)-1] != '\n' {
		if len(added) == 0 || added[0] != '\n' {
			f.t.Errorf("the new rows were glued to a half-written line: %q", added)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(added)), "\n") {
		var row struct {
			Metric       string         `json:"metric"`
			Measurements map[string]any `json:"measurements"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			f.t.Errorf("appended line %q is not JSON: %v", line, err)
			continue
		}
		switch row.Metric {
		case "server_summary":
			got.server = row.Measurements
		case "trial_summary":
			got.trial, got.trialWritten = row.Measurements, true
		}
	}
	return got, code, out
}

// faultProxy is a reverse proxy in front of the real Prometheus that can
// answer a request itself (fail) or rewrite the real answer (rewrite).
type faultProxy struct {
	*httptest.Server
	rewrite func(body []byte) []byte

	mu       sync.Mutex
	failedAt map[string]time.Time
	gaps     []time.Duration
}

func newFaultProxy(t *testing.T, target string, fail func(p *faultProxy, w http.ResponseWriter, r *http.Request) bool) *faultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{failedAt: map[string]time.Time{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	director := rp.Director
	rp.Director = func(r *http.Request) {
		director(r)
		r.Header.Del("Accept-Encoding") // rewrite plain JSON
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.rewrite == nil {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = p.rewrite(b)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail != nil && fail(p, w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// firstAttempt fails the first attempt of every distinct request with
// answer and lets its retries through, recording the gap.
func firstAttempt(answer func(w http.ResponseWriter)) func(p *faultProxy, w http.ResponseWriter, r *http.Request) bool {
	return func(p *faultProxy, w http.ResponseWriter, r *http.Request) bool {
		_ = r.ParseForm()
		key := r.URL.Path + "?" + r.Form.Encode()
		// ParseForm consumed a POST body: put it back for the proxy.
		if r.Method == http.MethodPost {
			body := r.PostForm.Encode()
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		p.mu.Lock()
		at, seen := p.failedAt[key]
		if !seen {
			p.failedAt[key] = time.Now()
		} else if !at.IsZero() {
			p.gaps = append(p.gaps, time.Since(at))
			p.failedAt[key] = time.Time{}
		}
		p.mu.Unlock()
		if seen {
			return false
		}
		answer(w)
		return true
	}
}

// minRetryGap is the shortest time between a failed first attempt and its
// retry; ok is false when nothing was retried.
func (p *faultProxy) minRetryGap() (gap time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.gaps) == 0 {
		return 0, false
	}
	return slices.Min(p.gaps), true
}

func docRows(rows []matrixRow) []faultdoc.Row {
	out := make([]faultdoc.Row, len(rows))
	for i, r := range rows {
		out[i] = faultdoc.Row{Fault: r.fault, Path: r.path, Outcome: r.outcome}
	}
	return out
}
