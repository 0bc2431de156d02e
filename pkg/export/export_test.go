package export

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	"github.com/substrate/density/pkg/cluster"
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
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitUsage, e.errOut.String())
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
	for _, kv := range EnvNames() {
		if kv[1] != EnvName(strings.TrimPrefix(kv[0], "--")) {
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
	if code := Main(context.Background(), args, e.Env); code != ExitOK {
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
	if code := Main(context.Background(), args, e2.Env); code != ExitOK {
		t.Fatalf("second export exit %d: %s", code, e2.errOut.String())
	}
	if rows := readRows(t, jsonl); len(rows) != 5 {
		t.Fatalf("second export: %d rows, want 5", len(rows))
	}
	// --replace rewrites this run's project rows in place.
	e3 := newEnv(nil, nil)
	if code := Main(context.Background(), append(args, "--replace"), e3.Env); code != ExitOK {
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
	if code != ExitOK {
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
	if code != ExitOK {
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
	if code != ExitOK {
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
	if code != ExitWrite {
		t.Fatalf("exit %d, want %d", code, ExitWrite)
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
	if code := Main(context.Background(), []string{"--run-dir", dir, "--before"}, e.Env); code != ExitOK {
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
	if code != ExitOK {
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
