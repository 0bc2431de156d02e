package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/harvest"
)

var cache *promtest.Cache

func TestMain(m *testing.M) {
	cache = promtest.NewCache()
	code := m.Run()
	cache.Close()
	os.Exit(code)
}

// copyRun copies a generated scenario's Locust files into a fresh run dir.
func copyRun(t *testing.T, r *promtest.Run) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"stats_history.csv", "stats.csv"} {
		b, err := os.ReadFile(filepath.Join(r.Dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type testEnv struct {
	Env
	out, errOut bytes.Buffer
	slept       time.Duration
}

func newEnv(kube kubernetes.Interface, vars map[string]string) *testEnv {
	e := &testEnv{}
	e.Env = Env{
		Stdout: &e.out, Stderr: &e.errOut,
		Getenv: func(k string) string { return vars[k] },
		Now:    time.Now,
		Sleep: func(_ context.Context, d time.Duration) error {
			e.slept += d
			return nil
		},
		Kube: func(cluster.Access) (kubernetes.Interface, error) {
			if kube == nil {
				return nil, os.ErrNotExist
			}
			return kube, nil
		},
	}
	return e
}

func readRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestUsageErrorsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stats.csv"), []byte("Type,Name,Request Count,Failure Count\n,Aggregated,10,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokenless := filepath.Join(dir, "missing-token")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no run", nil, nil, "one of --run-dir or --store"},
		{"missing run dir", []string{"--run-dir", filepath.Join(dir, "nope")}, nil, "run directory"},
		{"metadata not an object", []string{"--run-dir", dir, "--metadata", "[1,2]"}, nil, "metadata"},
		{"metadata env not an object", []string{"--run-dir", dir}, map[string]string{"BENCHMARK_METADATA": "3"}, "BENCHMARK_METADATA"},
		{"bad prometheus url", []string{"--run-dir", dir, "--prometheus-url", "ftp://x"}, nil, "not an http(s) URL"},
		{"end before start", []string{"--run-dir", dir, "--start", "200", "--end", "100"}, nil, "before --start"},
		{"unknown flag", []string{"--run-dir", dir, "--frobnicate"}, nil, "frobnicate"},
		{"positional argument", []string{"--run-dir", dir, "extra"}, nil, "unexpected argument"},
		{"bad header", []string{"--run-dir", dir, "--header", "novalue"}, nil, "Name: value"},
		{"negative lag", []string{"--run-dir", dir, "--atelet-lag-s", "-1"}, nil, "atelet-lag-s"},
		{"missing token file", []string{"--run-dir", dir, "--bearer-token-file", tokenless}, nil, "bearer-token-file"},
		{"store without run", []string{"--store", "file://" + dir}, nil, "--run"},
		{"no window anywhere", []string{"--run-dir", dir, "--no-wait"}, nil, "--start and --end"},
		{"hostile store run id", []string{"--store", "file://" + dir, "--run", "../../etc/passwd/x"}, nil, "--run"},
	}
	before := listDir(t, dir)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(nil, tc.env)
			code := Main(context.Background(), tc.args, e.Env)
			if code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, cli.ExitUsage, e.errOut.String())
			}
			if !strings.Contains(e.errOut.String(), tc.want) {
				t.Errorf("stderr %q does not mention %q", e.errOut.String(), tc.want)
			}
			if lines := strings.Count(strings.TrimSpace(e.errOut.String()), "\n"); lines > 0 {
				t.Errorf("want one clear line, got %d lines: %q", lines+1, e.errOut.String())
			}
			if after := listDir(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("a usage error wrote files: %v -> %v", before, after)
			}
		})
	}
}

func TestFromEnvMatchesFlags(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{
		"PROMETHEUS_URL": "http://127.0.0.1:9", "ATELET_LAG_S": "30", "CLUSTER_FACTS": "false",
		"WORKER_POOL": "p", "HEADER": "X-Scope-OrgID: t1\nX-Other: 2", "ACTORS_PER_USER": "3", "REPLACE": "true",
	}
	got, err := FromEnv(dir, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseFlags([]string{"--run-dir", dir, "--prometheus-url", "http://127.0.0.1:9", "--atelet-lag-s", "30",
		"--no-cluster-facts", "--worker-pool", "p", "--header", "X-Scope-OrgID: t1", "--header", "X-Other: 2",
		"--actors-per-user", "3", "--replace"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("mage env options differ from flags:\n env  %s\n flag %s", gj, wj)
	}
	if _, err := FromEnv(dir, func(k string) string { return map[string]string{"ATELET_LAG_S": "soon"}[k] }); err == nil {
		t.Error("ATELET_LAG_S=soon must be a usage error")
	}
	for _, kv := range envNames() {
		if kv[1] != cli.EnvName(strings.TrimPrefix(kv[0], "--")) {
			t.Errorf("%v", kv)
		}
	}
}

// TestExportSteadyRun exports a simulated run against a real Prometheus and
// checks what lands on disk: the window and steady window taken from the
// run's files, both rows appended after a foreign line that stays byte for
// byte, a second export appending again, and --replace rewriting only this
// project's rows of the run.
func TestExportSteadyRun(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tr := run.Truth
	dir := copyRun(t, run)
	foreign := `{"timestamp": "2020-01-01T00:00:00Z", "tag": "x", "test_name": "other", "metric": "locust_summary", "measurements": {"a": "1"}}` + "\n"
	jsonl := filepath.Join(dir, "stats.jsonl")
	if err := os.WriteFile(jsonl, []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--test-name", tr.TestName, "--tag", tr.Tag, "--atelet-lag-s", itoa(tr.LagS), "--no-cluster-facts"}
	e := newEnv(nil, nil)
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	if e.slept != 0 {
		t.Errorf("an old run must not wait, slept %v", e.slept)
	}
	var doc struct {
		Metadata map[string]any `json:"metadata"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "server_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	md := doc.Metadata
	if md["steady_start_ts"] != float64(tr.SteadyStart) || md["steady_end_ts"] != float64(tr.SteadyEnd) {
		t.Errorf("steady window %v..%v, want the simulator's %d..%d", md["steady_start_ts"], md["steady_end_ts"], tr.SteadyStart, tr.SteadyEnd)
	}
	if md["prom_url"] != prom.URL || md["test_name"] != tr.TestName || md["atelet_lag_s"] != float64(tr.LagS) {
		t.Errorf("metadata %v", md)
	}
	for _, block := range []string{"cluster_packing", "node_psi", "pod_psi", "snapshots", "active_actors", "working_set", "oom_events"} {
		if !strings.Contains(e.out.String(), block) {
			t.Errorf("no status line for %s in %q", block, e.out.String())
		}
	}

	got, _ := os.ReadFile(jsonl)
	if !strings.HasPrefix(string(got), foreign) {
		t.Fatalf("the foreign line was changed: %q", got)
	}
	rows := readRows(t, jsonl)
	if len(rows) != 3 || rows[1]["metric"] != "server_summary" || rows[2]["metric"] != "trial_summary" {
		t.Fatalf("want foreign + server_summary + trial_summary rows, got %d rows", len(rows))
	}
	if n := len(rows[1]["measurements"].(map[string]any)); n != 80 {
		t.Errorf("server_summary row has %d keys, want 80", n)
	}
	m := rows[1]["measurements"].(map[string]any)
	for _, k := range []string{"cluster_packing_p50", "checkpoints_in_window", "active_actors_p50", "oom_events_node"} {
		if m[k] == nil {
			t.Errorf("%s is null on a run that measured it", k)
		}
	}
	if m["oom_events_worker_restarts"] != nil {
		t.Errorf("with --no-cluster-facts the Kubernetes fields are null, got %v", m["oom_events_worker_restarts"])
	}
	trial := rows[2]["measurements"].(map[string]any)
	if trial["run_start"] != itoa(tr.Start) || trial["node_count"] != nil {
		t.Errorf("trial_summary run_start %v node_count %v", trial["run_start"], trial["node_count"])
	}

	// A second export appends a second pair.
	e2 := newEnv(nil, nil)
	if code := Main(context.Background(), args, e2.Env); code != cli.ExitOK {
		t.Fatalf("second export exit %d: %s", code, e2.errOut.String())
	}
	if rows := readRows(t, jsonl); len(rows) != 5 {
		t.Fatalf("second export: %d rows, want 5", len(rows))
	}
	// --replace rewrites this run's project rows in place.
	e3 := newEnv(nil, nil)
	if code := Main(context.Background(), append(args, "--replace"), e3.Env); code != cli.ExitOK {
		t.Fatalf("replace exit %d: %s", code, e3.errOut.String())
	}
	got, _ = os.ReadFile(jsonl)
	if !strings.HasPrefix(string(got), foreign) {
		t.Fatalf("--replace changed the foreign line")
	}
	if rows := readRows(t, jsonl); len(rows) != 3 {
		t.Fatalf("after --replace: %d rows, want 3", len(rows))
	}
}

// TestExportWindowFromFiles takes the window from stats_history.csv and the
// steady window by the spec's rule, without --start/--end.
func TestExportWindowFromFiles(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	dir := copyRun(t, run)
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--no-cluster-facts", "--no-wait"}, e.Env)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "server_summary.json"))
	var doc struct {
		Metadata struct {
			SteadyStart int64 `json:"steady_start_ts"`
			SteadyEnd   int64 `json:"steady_end_ts"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Metadata.SteadyStart != run.Truth.SteadyStart || doc.Metadata.SteadyEnd != run.Truth.SteadyEnd {
		t.Errorf("steady %d..%d, want %d..%d", doc.Metadata.SteadyStart, doc.Metadata.SteadyEnd, run.Truth.SteadyStart, run.Truth.SteadyEnd)
	}
}

// TestExportWithoutHistory falls back to the run window with a notice.
func TestExportWithoutHistory(t *testing.T) {
	run, prom := cache.Prometheus(t, "no-history")
	tr := run.Truth
	dir := copyRun(t, run)
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--no-cluster-facts",
		"--start", itoa(tr.Start), "--end", itoa(tr.End)}, e.Env)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	if !strings.Contains(e.out.String(), "steady window = run window") {
		t.Errorf("no fallback notice in %q", e.out.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "server_summary.json"))
	if !bytes.Contains(b, []byte(`"steady_start_ts": `+itoa(tr.Start))) {
		t.Errorf("steady_start_ts is not the run start")
	}
}

// TestExportPrometheusUnreachable: every Prometheus field is null, never 0,
// the artifacts are still written and the exit code is 0.
func TestExportPrometheusUnreachable(t *testing.T) {
	closed := promfake.ClosedURL(t)
	run := cache.Generated(t, "steady")
	dir := copyRun(t, run)
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", closed, "--no-cluster-facts", "--timeout", "2s"}, e.Env)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	rows := readRows(t, filepath.Join(dir, "stats.jsonl"))
	for k, v := range rows[0]["measurements"].(map[string]any) {
		if v != nil {
			t.Errorf("%s = %v with Prometheus unreachable, want null", k, v)
		}
	}
	if !strings.Contains(e.out.String(), "null") {
		t.Errorf("status lines do not say null: %q", e.out.String())
	}
	// The closing lines say what was measured: nothing, and no PSI point.
	nBlocks := len(harvest.BlockNames())
	for _, want := range []string{
		"psi_series.json (0 points: none of the 6 PSI series sets was read)",
		fmt.Sprintf("measured 0 of %d blocks in full; %d with null fields: ", nBlocks, nBlocks),
		"nothing was measured: every server_summary field is null",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, e.out.String())
		}
	}
}

func TestExportCannotWrite(t *testing.T) {
	run := cache.Generated(t, "steady")
	dir := copyRun(t, run)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(nil, nil)
	code := Main(context.Background(), []string{"--run-dir", dir, "--out", filepath.Join(blocker, "sub"),
		"--prometheus-url", "http://127.0.0.1:1", "--no-cluster-facts", "--timeout", "1s"}, e.Env)
	if code != cli.ExitWrite {
		t.Fatalf("exit %d, want %d", code, cli.ExitWrite)
	}
}

func TestWaitForLag(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	e := newEnv(nil, nil)
	e.Now = func() time.Time { return now }
	if err := waitForLag(context.Background(), e.Env, now.Unix()+75); err != nil {
		t.Fatal(err)
	}
	if e.slept != 75*time.Second {
		t.Errorf("slept %v, want 75s", e.slept)
	}
	if !strings.Contains(e.out.String(), "waiting 1m15s") || !strings.Contains(e.out.String(), "45s left") {
		t.Errorf("progress output %q", e.out.String())
	}
	e2 := newEnv(nil, nil)
	e2.Now = func() time.Time { return now }
	if err := waitForLag(context.Background(), e2.Env, now.Unix()-1); err != nil || e2.slept != 0 || e2.out.Len() != 0 {
		t.Errorf("a passed deadline must not wait: %v %v %q", err, e2.slept, e2.out.String())
	}
}

func workerPod(uid, name, node string, restarts int32, reason string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "benchmark-workloads", UID: types.UID(uid),
			Labels: map[string]string{"ate.dev/worker-pool": "benchmark-ateom"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "ateom", Image: "registry/ateom-gvisor:1", Args: []string{"--max-actors=50"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "ateom", RestartCount: restarts}}},
	}
	if reason != "" {
		p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: reason}
	}
	return p
}

// TestExportBeforeAndAfter records the before snapshot with --before, then
// exports with the cluster changed: the OOM/restart/loss deltas and the
// frontiers come out of the two reads.
func TestExportBeforeAndAfter(t *testing.T) {
	run, prom := cache.Prometheus(t, "steady")
	tr := run.Truth
	dir := copyRun(t, run)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"node.kubernetes.io/instance-type": "n2-standard-8"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("29Gi")},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2"}}}
	kube := fake.NewClientset(node, workerPod("u1", "benchmark-ateom-1", "n1", 0, ""), workerPod("u2", "benchmark-ateom-2", "n1", 1, ""))
	e := newEnv(kube, nil)
	if code := Main(context.Background(), []string{"--run-dir", dir, "--before"}, e.Env); code != cli.ExitOK {
		t.Fatalf("--before exit %d: %s", code, e.errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster_before.json")); err != nil {
		t.Fatalf("--before wrote no snapshot: %v", err)
	}
	// During the run: u1 OOM-killed twice, u2 deleted, u3 created.
	ctx := context.Background()
	pods := kube.CoreV1().Pods("benchmark-workloads")
	if _, err := pods.Update(ctx, workerPod("u1", "benchmark-ateom-1", "n1", 2, "OOMKilled"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "benchmark-ateom-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, workerPod("u3", "benchmark-ateom-3", "n1", 0, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(kube, nil)
	code := Main(ctx, []string{"--run-dir", dir, "--prometheus-url", prom.URL, "--start", itoa(tr.Start), "--end", itoa(tr.End),
		"--atelet-lag-s", itoa(tr.LagS), "--actors-per-user", "2", "--metadata", `{"suite":"nightly","shards":3}`}, e2.Env)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e2.errOut.String())
	}
	rows := readRows(t, filepath.Join(dir, "stats.jsonl"))
	m := rows[0]["measurements"].(map[string]any)
	want := map[string]any{"oom_events_worker_restarts": "2", "oom_events_worker_oomkilled_pods": "1",
		"oom_events_worker_pods_lost": "1", "oom_events_evicted": "0"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	trial := rows[1]["measurements"].(map[string]any)
	peakActors := tr.PeakUsers * 2
	wantTrial := map[string]any{
		"node_count": "1", "allocatable_cores": "7.91", "allocatable_ram_gb": "29.0", "worker_pod_count": "2",
		"machine_type": "n2-standard-8", "kubernetes_version": "v1.37.2", "worker_actor_capacity": "50",
		"worker_memory_limit_gb": "16.0", "sandbox_class": "gvisor", "metadata_suite": "nightly", "metadata_shards": "3",
		"actors_per_node": pyFloat(round2(peakActors / 1)),
	}
	for k, v := range wantTrial {
		if trial[k] != v {
			t.Errorf("trial_summary %s = %v, want %v", k, trial[k], v)
		}
	}
}

var _ = simrun.OMFile

// An old run window (no lag wait) in seconds.
const (
	covStart = int64(1710237600) // 2024-03-12T10:00:00Z
	covEnd   = covStart + 600
)

const covStats = "Type,Name,Request Count,Failure Count\nPOST,ResumeActor,10,1\n,Aggregated,10,1\n"

// covHistory has user counts 10, 40, 40, 20 at +0, +60, +120, +180.
func covHistory(start int64) string {
	return fmt.Sprintf("Timestamp,User Count,Type,Name\n%d,10,,Aggregated\n%d,40,,Aggregated\n%d,40,,Aggregated\n%d,20,,Aggregated\n",
		start, start+60, start+120, start+180)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotDir reads a directory's files into a map (name -> content).
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func measurements(t *testing.T, row map[string]any) map[string]any {
	t.Helper()
	m, ok := row["measurements"].(map[string]any)
	if !ok {
		t.Fatalf("row without measurements: %v", row)
	}
	return m
}

func TestFlagDefaults(t *testing.T) {
	dir := t.TempDir()
	o, err := ParseFlags([]string{"--run-dir", dir}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		RunDir: dir, ActorsPerUser: 1, PrometheusURL: "http://prometheus.benchmarking.svc.cluster.local:9090",
		AteletLagS: 70, MaxConcurrency: 8, MaxResponseMB: 64, ClusterFacts: true,
		WorkerPool: "benchmark-ateom", WorkerNamespace: "benchmark-workloads", WorkerContainer: "ateom",
		WorkerPodRegex: "benchmark-ateom.*", AteletNamespace: "ate-system", AteletContainer: "atelet",
		Ladder: LadderOptions{Enabled: true, TrimStartS: 30, TrimEndS: 5, LogTZ: "UTC",
			ResumeName: "ResumeActorCold", PauseName: "SuspendActorAsync",
			AteapiNamespace: "ate-system", AteapiContainer: "ate-api-server", PostgresNamespace: "ate-system",
			PostgresContainer: "postgres", FakeAteletNamespace: "ate-system", FakeAteletContainer: "fake-atelet",
			MinAchieved: 0.95, MaxFailureRatio: 0.01},
		PhaseBreakdown: true, Report: true, PhaseLogTimeout: time.Minute, PhaseMaxLogMB: 256,
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("defaults\n got %+v\nwant %+v", o, want)
	}
	// -u is --users; --no-cluster-facts and --cluster-facts=false are the same.
	o, err = ParseFlags([]string{"--run-dir", dir, "-u", "30", "--no-cluster-facts"}, &bytes.Buffer{})
	if err != nil || o.Users != 30 || o.ClusterFacts {
		t.Errorf("-u 30 --no-cluster-facts: %+v, %v", o, err)
	}
}

// specFlags are the flags export.md names.
var specFlags = []string{"run-dir", "store", "run", "start", "end", "tag", "test-name", "users", "u", "actors-per-user",
	"prometheus-url", "atelet-lag-s", "cluster-facts", "kubeconfig", "context", "metadata", "out",
	"worker-pool", "worker-namespace", "worker-container", "worker-pod-regex", "atelet-namespace", "atelet-container",
	"timeout", "max-concurrency", "header", "bearer-token-file", "verbose", "replace", "before",
	"phase-breakdown", "phase-logs", "phase-log-timeout", "phase-max-log-mb", "report"}

// `density export --help` documents every flag (exit 0, nothing written).
func TestHelpDocumentsEveryFlag(t *testing.T) {
	e := newEnv(nil, nil)
	if code := Main(context.Background(), []string{"--help"}, e.Env); code != cli.ExitOK {
		t.Fatalf("--help exit %d", code)
	}
	help := e.errOut.String() + e.out.String()
	for _, f := range specFlags {
		// pflag's list: "  -u, --users float", "      --run-dir string".
		if !regexp.MustCompile(`(?m)^\s+(?:-\w, )?--?` + regexp.QuoteMeta(f) + `\b`).MatchString(help) {
			t.Errorf("--help does not document --%s", f)
		}
	}
	for _, s := range []string{"no-cluster-facts", "no-phase-breakdown", "PROMETHEUS_BEARER_TOKEN", "BENCHMARK_METADATA"} {
		if !strings.Contains(help, s) {
			t.Errorf("--help does not mention %s", s)
		}
	}
}

// "mage export [runDir] reads every other setting from environment
// variables named like the flags in upper snake case": every flag, set
// through its variable, gives the same Options as the flag itself.
func TestEveryFlagFromEnv(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	tok := filepath.Join(t.TempDir(), "token")
	writeFiles(t, filepath.Dir(tok), map[string]string{"token": "t0ken\n", "profile.yaml": "- key: a\n  query: x\n  reduce: max\n"})
	values := map[string]string{
		"--ladder": "false", "--ladder-profile": filepath.Join(filepath.Dir(tok), "profile.yaml"), "--ladder-trim-start-s": "20",
		"--ladder-trim-end-s": "2", "--log-tz": "Europe/Berlin", "--ladder-resume-name": "R", "--ladder-pause-name": "P",
		"--ladder-ateapi-namespace": "a", "--ladder-ateapi-container": "b", "--ladder-postgres-namespace": "c",
		"--ladder-postgres-container": "d", "--ladder-fake-atelet-namespace": "e", "--ladder-fake-atelet-container": "f",
		"--ladder-min-achieved": "0.9", "--ladder-max-failure-ratio": "0.02",
		"--run-dir": dir, "--out": out, "--start": "100", "--end": "200", "--tag": "g", "--test-name": "n", "--users": "30",
		"--actors-per-user": "2", "--prometheus-url": "http://127.0.0.1:9", "--header": "X-Scope-OrgID: t1",
		"--bearer-token-file": tok, "--atelet-lag-s": "30", "--timeout": "3s", "--max-concurrency": "3", "--max-response-mb": "16", "--cluster-facts": "false",
		"--kubeconfig": "/etc/kube/config", "--context": "lab", "--worker-pool": "p", "--worker-namespace": "ns",
		"--worker-container": "c", "--worker-pod-regex": "w-.*", "--atelet-namespace": "an", "--atelet-container": "ac",
		"--metadata": `{"a": 1}`, "--report": "false", "--replace": "true", "--verbose": "true", "--before": "true", "--no-wait": "true",
		"--gates": "/etc/density/gates.yaml", "--baseline": "/runs/base", "--baseline-run": "latest",
		"--baseline-store": "file:///store", "--junit": "/tmp/gates.xml",
		"--phase-breakdown": "false", "--phase-logs": out, "--phase-log-timeout": "5s", "--phase-max-log-mb": "8",
	}
	storeOnly := map[string]string{"--store": "file://" + dir, "--run": "latest"}
	vars, flags := map[string]string{}, []string{}
	storeVars, storeFlags := map[string]string{}, []string{}
	for _, kv := range envNames() {
		flagName, env := kv[0], kv[1]
		if env != strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(flagName, "--"), "-", "_")) {
			t.Errorf("%s maps to %s, not its upper snake case", flagName, env)
		}
		if v, ok := storeOnly[flagName]; ok {
			storeVars[env] = v
			storeFlags = append(storeFlags, flagName+"="+v)
			continue
		}
		v, ok := values[flagName]
		if !ok {
			t.Errorf("flag %s has no test value: add it to this test", flagName)
			continue
		}
		vars[env] = v
		flags = append(flags, flagName+"="+v)
	}
	for name, v := range map[string]string{"PROMETHEUS_URL": "http://127.0.0.1:9", "ATELET_LAG_S": "30", "CLUSTER_FACTS": "false"} {
		if vars[name] != v {
			t.Errorf("the spec's example %s is not a mapped variable", name)
		}
	}
	for _, c := range []struct {
		name  string
		vars  map[string]string
		flags []string
	}{{"run directory", vars, flags}, {"results store", storeVars, storeFlags}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := FromEnv("", func(k string) string { return c.vars[k] })
			if err != nil {
				t.Fatal(err)
			}
			want, err := ParseFlags(c.flags, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("env\n %+v\nflags\n %+v", got, want)
			}
		})
	}
}

// Selectors, headers, the bearer token, --timeout (both kinds of request)
// and --verbose, seen from the Prometheus side.
func TestFlagsReachPrometheus(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"stats.csv": covStats})
	tok := filepath.Join(t.TempDir(), "token")
	writeFiles(t, filepath.Dir(tok), map[string]string{"token": "file-t0ken\n"})
	e := newEnv(nil, map[string]string{"PROMETHEUS_BEARER_TOKEN": "env-token"})
	args := []string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart), "--end", itoa(covEnd), "--no-cluster-facts",
		"--worker-pool", "pool-1", "--worker-namespace", "ns-1", "--worker-container", "wc-1", "--worker-pod-regex", "wp-1.*",
		"--atelet-namespace", "an-1", "--atelet-container", "ac-1",
		"--header", "X-Scope-OrgID: tenant-1", "--header", "X-Other: 2", "--bearer-token-file", tok, "--timeout", "3s"}
	if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	reqs := srv.Requests()
	if len(reqs) < 20 {
		t.Fatalf("%d requests", len(reqs))
	}
	kinds := map[string]bool{}
	var queries []string
	for _, r := range reqs {
		kinds[r.Path] = true
		queries = append(queries, r.Form.Get("query"))
		if r.Header.Get("X-Scope-OrgID") != "tenant-1" || r.Header.Get("X-Other") != "2" {
			t.Errorf("request %d lacks the --header values: %v", r.N, r.Header)
		}
		// --bearer-token-file wins over PROMETHEUS_BEARER_TOKEN.
		if got := r.Header.Get("Authorization"); got != "Bearer file-t0ken" {
			t.Errorf("request %d Authorization %q", r.N, got)
		}
		if got := r.Form.Get("timeout"); got != "3s" {
			t.Errorf("%s request timeout %q, want --timeout 3s for instant and range reads alike", r.Path, got)
		}
	}
	if !kinds["/api/v1/query"] || !kinds["/api/v1/query_range"] {
		t.Errorf("paths %v: want both instant and range reads", kinds)
	}
	all := strings.Join(queries, "\n")
	for _, s := range []string{`ate_workerpool_name="pool-1"`, `namespace="ns-1", container="wc-1"`, `pod=~"wp-1.*"`,
		`namespace="an-1", container="ac-1"`, `container_oom_events_total{namespace="ns-1", pod=~"wp-1.*"}`} {
		if !strings.Contains(all, s) {
			t.Errorf("no query holds %s", s)
		}
	}
	for _, s := range []string{"benchmark-ateom", "benchmark-workloads", "ate-system"} {
		if strings.Contains(all, s) {
			t.Errorf("a default selector %q was sent despite the flags", s)
		}
	}
	// Without the file, PROMETHEUS_BEARER_TOKEN is the token.
	srv2 := promfake.New(t, promfake.Empty(0))
	e2 := newEnv(nil, map[string]string{"PROMETHEUS_BEARER_TOKEN": "env-token"})
	if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", srv2.URL, "--start", itoa(covStart),
		"--end", itoa(covEnd), "--no-cluster-facts", "--out", t.TempDir()}, e2.Env); code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, r := range srv2.Requests() {
		if r.Header.Get("Authorization") != "Bearer env-token" {
			t.Fatalf("request %d Authorization %q, want the PROMETHEUS_BEARER_TOKEN", r.N, r.Header.Get("Authorization"))
		}
	}
}

// --verbose "print[s] every PromQL issued": each distinct query the server
// received appears as a "promql: <query>" line.
func TestVerbosePrintsPromQL(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	e := newEnv(nil, nil)
	if code := Main(context.Background(), []string{"--run-dir", t.TempDir(), "--prometheus-url", srv.URL, "--start", itoa(covStart),
		"--end", itoa(covEnd), "--no-cluster-facts", "--verbose"}, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	distinct := map[string]bool{}
	for _, r := range srv.Requests() {
		distinct[r.Form.Get("query")] = true
	}
	missing := 0
	for q := range distinct {
		if !strings.Contains(e.out.String(), "promql: "+q+"\n") {
			missing++
		}
	}
	if len(distinct) < 15 || missing > 0 {
		t.Errorf("--verbose printed %d of the %d distinct queries the server received", len(distinct)-missing, len(distinct))
	}
}

// --max-concurrency bounds the Prometheus requests in flight (default 8).
func TestMaxConcurrency(t *testing.T) {
	for _, c := range []struct {
		flag []string
		max  int
	}{{[]string{"--max-concurrency", "2"}, 2}, {nil, 8}} {
		t.Run(fmt.Sprint(c.max), func(t *testing.T) {
			srv := promfake.New(t, promfake.Empty(60*time.Millisecond))
			dir := t.TempDir()
			e := newEnv(nil, nil)
			args := append([]string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart), "--end", itoa(covEnd), "--no-cluster-facts"}, c.flag...)
			if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			if got := srv.MaxInFlight(); got > c.max || got < 2 {
				t.Errorf("max in flight %d, want at most %d (and some concurrency)", got, c.max)
			}
			if c.max == 8 && srv.MaxInFlight() <= 2 {
				t.Errorf("default: only %d in flight; the reads are independent and should overlap", srv.MaxInFlight())
			}
		})
	}
}

// --out elsewhere: the artifacts go there, the run directory (status.json
// included: "This project never writes or changes it") is untouched, and
// no temporary file is left behind (atomic write).
func TestOutDirAndUntouchedRunDir(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "artifacts")
	writeFiles(t, dir, map[string]string{"stats.csv": covStats, "stats_history.csv": covHistory(covStart),
		"status.json": `{"locust_exit_code": 0, "stats_generated": true}`})
	before := snapshotDir(t, dir)
	e := newEnv(nil, nil)
	if code := Main(context.Background(), []string{"--run-dir", dir, "--out", out, "--prometheus-url", srv.URL,
		"--start", itoa(covStart), "--end", itoa(covEnd), "--no-cluster-facts"}, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	if after := snapshotDir(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("the run directory changed with --out elsewhere")
	}
	if got := listDir(t, out); strings.Join(got, ",") != "notices.json,psi_series.json,report.html,server_summary.json,stats.jsonl" {
		t.Errorf("--out holds %v, want notices.json, psi_series.json, report.html, server_summary.json and stats.jsonl only (no temporary files)", got)
	}
	rows := readRows(t, filepath.Join(out, "stats.jsonl"))
	if len(rows) != 2 || rows[0]["metric"] != "server_summary" || rows[1]["metric"] != "trial_summary" {
		t.Fatalf("rows %v", rows)
	}
	// Both rows carry the run start as their timestamp.
	for _, r := range rows {
		if r["timestamp"] != "2024-03-12T10:00:00Z" {
			t.Errorf("%s timestamp %v", r["metric"], r["timestamp"])
		}
	}
}

// The trial_summary row "is written only when the run produced stats:
// status.json says stats_generated: true, or, without status.json,
// stats.csv exists with at least one data row".
func TestTrialRowOnlyWithStats(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	tests := []struct {
		name  string
		files map[string]string
		trial bool
	}{
		{"stats_generated false wins over stats.csv rows", map[string]string{"stats.csv": covStats, "status.json": `{"locust_exit_code": 1, "stats_generated": false}`}, false},
		{"stats_generated true without stats.csv", map[string]string{"status.json": `{"locust_exit_code": 0, "stats_generated": true}`}, true},
		{"no status.json, stats.csv with rows", map[string]string{"stats.csv": covStats}, true},
		{"no status.json, header-only stats.csv", map[string]string{"stats.csv": "Type,Name,Request Count,Failure Count\n"}, false},
		{"no status.json, no stats.csv", map[string]string{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			e := newEnv(nil, nil)
			if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart),
				"--end", itoa(covEnd), "--no-cluster-facts"}, e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			rows := readRows(t, filepath.Join(dir, "stats.jsonl"))
			if got := len(rows) == 2; got != tc.trial {
				t.Errorf("%d rows: trial_summary written = %v, want %v", len(rows), got, tc.trial)
			}
		})
	}
}

// --metadata is merged over BENCHMARK_METADATA: environment keys first,
// flag values winning, null skipped, values as json.dumps would write them.
func TestMetadataMergedOverEnv(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"stats.csv": covStats})
	e := newEnv(nil, map[string]string{"BENCHMARK_METADATA": `{"a": "env", "b": 1, "n": 2}`})
	if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart), "--end", itoa(covEnd),
		"--no-cluster-facts", "--metadata", `{"a": "flag", "c": [1, 2.50], "n": null}`}, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "stats.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	if !strings.Contains(lines[1], `"run_end": "`+itoa(covEnd)+`", "metadata_a": "flag", "metadata_b": "1", "metadata_c": "[1, 2.5]", "multi_actor_worker"`) {
		t.Errorf("metadata keys, order or values differ:\n%s", lines[1])
	}
}

// Cluster facts on but Kubernetes unreachable: exit 0, every fact null
// with the reason (export.md behaviour 5).
func TestKubernetesUnreachable(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"stats.csv": covStats})
	e := newEnv(nil, nil) // Kube returns an error
	if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart),
		"--end", itoa(covEnd)}, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	rows := readRows(t, filepath.Join(dir, "stats.jsonl"))
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	server, trial := measurements(t, rows[0]), measurements(t, rows[1])
	for _, k := range []string{"oom_events_worker_restarts", "oom_events_worker_oomkilled_pods", "oom_events_evicted", "oom_events_worker_pods_lost"} {
		if server[k] != nil {
			t.Errorf("%s = %v, want null", k, server[k])
		}
	}
	for _, k := range []string{"machine_type", "node_count", "allocatable_cores", "allocatable_ram_gb", "worker_pod_count", "kubernetes_version",
		"worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class"} {
		if v, ok := trial[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if !strings.Contains(e.out.String(), "no Kubernetes access") {
		t.Errorf("the reason is not printed: %q", e.out.String())
	}
}

// --kubeconfig, --context and --timeout reach the Kubernetes client.
func TestKubeconfigFlags(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	dir := t.TempDir()
	e := newEnv(nil, nil)
	var got []cluster.Access
	e.Kube = func(a cluster.Access) (kubernetes.Interface, error) {
		got = append(got, a)
		return fake.NewClientset(), nil
	}
	if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart), "--end", itoa(covEnd),
		"--kubeconfig", "/etc/kube/lab.yaml", "--context", "lab", "--timeout", "4s"}, e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut.String())
	}
	if len(got) != 1 || got[0].KubeconfigPath != "/etc/kube/lab.yaml" || got[0].Context != "lab" || got[0].Timeout != 4*time.Second ||
		got[0].Mode == cluster.ModeOff {
		t.Errorf("Kubernetes access %+v", got)
	}
}

// "Wait until end + lag (print the wait ...)" as the command runs it: a
// run that ended 10 s ago with the default lag waits 60 s; --no-wait and
// an old run do not wait.
func TestLagWaitInTheCommand(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	now := time.Unix(covEnd+10, 0)
	for _, c := range []struct {
		name  string
		extra []string
		now   time.Time
		slept time.Duration
	}{
		{"ended 10 s ago", nil, now, 60 * time.Second},
		{"lag 30 flag", []string{"--atelet-lag-s", "30"}, now, 20 * time.Second},
		{"--no-wait", []string{"--no-wait"}, now, 0},
		{"long over", nil, time.Unix(covEnd+3600, 0), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(nil, nil)
			e.Now = func() time.Time { return c.now }
			args := append([]string{"--run-dir", t.TempDir(), "--prometheus-url", srv.URL, "--start", itoa(covStart), "--end", itoa(covEnd),
				"--no-cluster-facts"}, c.extra...)
			if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			if e.slept != c.slept {
				t.Errorf("slept %v, want %v", e.slept, c.slept)
			}
			if c.slept > 0 && !strings.Contains(e.out.String(), "waiting "+c.slept.String()) {
				t.Errorf("the wait is not printed: %q", e.out.String())
			}
		})
	}
}

// On a terminal the wait is a live countdown (one update a second).
func TestTerminalCountdown(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	e := newEnv(nil, nil)
	e.Now = func() time.Time { return now }
	e.Terminal = true
	if err := waitForLag(context.Background(), e.Env, now.Unix()+3); err != nil {
		t.Fatal(err)
	}
	if e.slept != 3*time.Second {
		t.Errorf("slept %v", e.slept)
	}
	out := e.out.String()
	for _, s := range []string{"waiting 3s", "\r   2s left ", "\r   1s left ", "\r   0s left \n"} {
		if !strings.Contains(out, s) {
			t.Errorf("countdown %q lacks %q", out, s)
		}
	}
}

// --users (-u) is "only a fallback": with no stats_history.csv user counts
// the peak is -u x --actors-per-user.
func TestUsersFallback(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"node.kubernetes.io/instance-type": "n2-standard-8"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2"}}}
	for _, c := range []struct {
		name    string
		history bool
		want    map[string]any
	}{
		// 30 users x 2 = 60 actors over 1 node, 8 cores, 32 GiB; no per-pod samples.
		{"no user counts observed", false, map[string]any{"actors_per_node": "60.0", "actors_per_vcpu": "7.5", "actors_per_gb_ram": "1.88", "actors_per_pod_p50": nil}},
		// Observed peak 40 x 2 = 80; -u is ignored. Per pod: 10,40,40,20 x 2 / 2 pods.
		{"observed users win", true, map[string]any{"actors_per_node": "80.0", "actors_per_vcpu": "10.0", "actors_per_gb_ram": "2.5", "actors_per_pod_p50": "40.0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"stats.csv": covStats}
			if c.history {
				files["stats_history.csv"] = covHistory(covStart)
			}
			writeFiles(t, dir, files)
			kube := fake.NewClientset(node, workerPod("u1", "benchmark-ateom-1", "n1", 0, ""), workerPod("u2", "benchmark-ateom-2", "n1", 0, ""))
			e := newEnv(kube, nil)
			if code := Main(context.Background(), []string{"--run-dir", dir, "--prometheus-url", srv.URL, "--start", itoa(covStart),
				"--end", itoa(covEnd), "--users", "30", "--actors-per-user", "2"}, e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, e.errOut.String())
			}
			trial := measurements(t, readRows(t, filepath.Join(dir, "stats.jsonl"))[1])
			for k, v := range c.want {
				if trial[k] != v {
					t.Errorf("%s = %v, want %v", k, trial[k], v)
				}
			}
		})
	}
}

// --store URL --run ID re-harvests an archived run: window, test name and
// tag from the store, the before snapshot from the store, --out defaulting
// to ./<test_name>-<run_ts>, and nothing written to the store.
func TestStoreReharvest(t *testing.T) {
	srv := promfake.New(t, promfake.Empty(0))
	root := t.TempDir()
	runDir := filepath.Join(root, "runs", "resume-storm", "run_date=2024-03-12", "run_ts="+itoa(covStart), "run_tag=abc123")
	writeFiles(t, runDir, map[string]string{"stats.csv": covStats, "stats_history.csv": covHistory(covStart),
		"status.json": `{"locust_exit_code": 0, "stats_generated": true}`})
	// The before snapshot taken at the run start, stored with the run.
	kube := fake.NewClientset(workerPod("u1", "benchmark-ateom-1", "n1", 0, ""), workerPod("u2", "benchmark-ateom-2", "n1", 0, ""))
	snap, err := cluster.TakeSnapshot(context.Background(), kube, cluster.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := json.Marshal(snap)
	writeFiles(t, runDir, map[string]string{cluster.SnapshotFile: string(sb)})
	// During the run u1 restarted three times.
	if _, err := kube.CoreV1().Pods("benchmark-workloads").Update(context.Background(),
		workerPod("u1", "benchmark-ateom-1", "n1", 3, "Error"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	storeBefore := snapshotDir(t, root)

	for _, ref := range []string{"resume-storm/" + itoa(covStart) + "/abc123", "latest"} {
		t.Run(ref, func(t *testing.T) {
			t.Chdir(t.TempDir())
			e := newEnv(kube, nil)
			if code := Main(context.Background(), []string{"--store", "file://" + root, "--run", ref, "--prometheus-url", srv.URL}, e.Env); code != cli.ExitOK {
				t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
			}
			if after := snapshotDir(t, root); !reflect.DeepEqual(after, storeBefore) {
				t.Errorf("the export wrote to the store")
			}
			// A stored run without logs.txt is not a ladder run, not a failed
			// read.
			if strings.Contains(e.out.String(), "logs.txt unreadable") {
				t.Errorf("an absent stored logs.txt is reported as unreadable:\n%s", e.out.String())
			}
			out := "resume-storm-" + itoa(covStart)
			b, err := os.ReadFile(filepath.Join(out, "server_summary.json"))
			if err != nil {
				t.Fatalf("default --out with --store: %v", err)
			}
			v, err := artifact.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			md, _ := v.(artifact.Object).Get("metadata")
			want := artifact.Object{{Key: "test_name", Value: "resume-storm"}, {Key: "tag", Value: "abc123"}, {Key: "data_timestamp", Value: "2024-03-12T10:00:00Z"},
				{Key: "prom_url", Value: srv.URL}, {Key: "start_ts", Value: covStart}, {Key: "end_ts", Value: covStart + 180},
				{Key: "steady_start_ts", Value: covStart + 60}, {Key: "steady_end_ts", Value: covStart + 120}, {Key: "atelet_lag_s", Value: int64(70)}}
			if !reflect.DeepEqual(md, want) {
				t.Errorf("metadata\n got %v\nwant %v", md, want)
			}
			rows := readRows(t, filepath.Join(out, "stats.jsonl"))
			if len(rows) != 2 {
				t.Fatalf("%d rows", len(rows))
			}
			if got := measurements(t, rows[0])["oom_events_worker_restarts"]; got != "3" {
				t.Errorf("worker_restarts = %v, want 3 (before snapshot read from the store)", got)
			}
		})
	}
}

// --max-response-mb sets the response-size limit: a 2 MiB answer passes the
// default 64 MiB and fails a limit of 1 MiB, whose notice names it.
func TestMaxResponseMB(t *testing.T) {
	url := promfake.OversizedServer(t, 2<<20)
	for _, c := range []struct {
		flag []string
		null bool
	}{{nil, false}, {[]string{"--max-response-mb", "1"}, true}} {
		e := newEnv(nil, nil)
		args := append([]string{"--run-dir", t.TempDir(), "--prometheus-url", url, "--start", itoa(covStart), "--end", itoa(covEnd),
			"--no-cluster-facts", "--out", t.TempDir()}, c.flag...)
		if code := Main(context.Background(), args, e.Env); code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", c.flag, code, e.errOut.String())
		}
		if got := strings.Contains(e.out.String()+e.errOut.String(), "MaxResponseBytes limit of 1048576 bytes"); got != c.null {
			t.Errorf("%v: limit notice %v, want %v", c.flag, got, c.null)
		}
	}
	e := newEnv(nil, nil)
	if code := Main(context.Background(), []string{"--run-dir", t.TempDir(), "--max-response-mb", "0"}, e.Env); code != cli.ExitUsage {
		t.Errorf("--max-response-mb 0: exit %d, want %d", code, cli.ExitUsage)
	}
}

// A file inside the run directory that is a symbolic link is refused
// before anything is written (exit 1: the export writes there): the link's
// target is neither appended to nor copied into the run directory.
func TestExportRefusesSymlinkedFiles(t *testing.T) {
	run := cache.Generated(t, "steady")
	closed := promfake.ClosedURL(t)
	secret := []byte("-----BEGIN KEY-----\nTOPSECRET-0600\n")
	for _, tc := range []struct {
		name  string
		link  string
		extra []string
	}{
		{"stats.jsonl, --replace", "stats.jsonl", []string{"--replace"}},
		{"stats.jsonl, append", "stats.jsonl", nil},
		{"server_summary.json", "server_summary.json", nil},
		{"psi_series.json", "psi_series.json", nil},
		{"report.html", "report.html", nil},
		{"notices.json", "notices.json", nil},
		{"stats_history.csv (read)", "stats_history.csv", nil},
		{"cluster_before.json, --before", "cluster_before.json", []string{"--before"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "secret.txt"), secret, 0o600); err != nil {
				t.Fatal(err)
			}
			b := filepath.Join(root, "b")
			if err := os.Rename(copyRun(t, run), b); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(b, tc.link)
			_ = os.Remove(link)
			if err := os.Symlink("../secret.txt", link); err != nil {
				t.Fatal(err)
			}
			before := snapshotDir(t, b)
			e := newEnv(nil, nil)
			args := append([]string{"--run-dir", b, "--prometheus-url", closed, "--no-cluster-facts", "--timeout", "1s", "--no-wait"}, tc.extra...)
			code := Main(context.Background(), args, e.Env)
			if code != cli.ExitWrite {
				t.Errorf("exit %d, want %d\n%s%s", code, cli.ExitWrite, e.out.String(), e.errOut.String())
			}
			if !strings.Contains(e.errOut.String(), link+" is a symbolic link") {
				t.Errorf("stderr does not name the link:\n%s", e.errOut.String())
			}
			if got, _ := os.ReadFile(filepath.Join(root, "secret.txt")); !bytes.Equal(got, secret) {
				t.Errorf("secret.txt changed: %q", got)
			}
			if after := snapshotDir(t, b); !reflect.DeepEqual(after, before) {
				t.Errorf("the run directory changed:\nbefore %v\nafter  %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s is no longer the link: %v", tc.link, err)
			}
			err := filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type()&fs.ModeSymlink != 0 || d.IsDir() {
					return err
				}
				if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte("TOPSECRET")) {
					t.Errorf("%s holds the link target's bytes", p)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}

	// The run directory itself may be a link.
	t.Run("linked run directory", func(t *testing.T) {
		root := t.TempDir()
		real := filepath.Join(root, "real")
		if err := os.Rename(copyRun(t, run), real); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real", filepath.Join(root, "run")); err != nil {
			t.Fatal(err)
		}
		e := newEnv(nil, nil)
		code := Main(context.Background(), []string{"--run-dir", filepath.Join(root, "run"), "--prometheus-url", closed,
			"--no-cluster-facts", "--timeout", "1s", "--no-wait"}, e.Env)
		if code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, e.errOut.String())
		}
		if rows := readRows(t, filepath.Join(real, "stats.jsonl")); len(rows) == 0 {
			t.Fatal("no rows written through the linked run directory")
		}
	})
}

// envNames lists every export flag with its environment variable.
func envNames() [][2]string {
	var o Options
	return cli.EnvNames(flagSet(&o))
}
