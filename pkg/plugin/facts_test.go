package plugin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

func ptrTo[T any](v T) *T { return &v }

// storedFacts are the cluster facts recorded with the stored ladder run.
var storedFacts = clusterfacts.Facts{
	MachineType: []string{"c3-standard-8", "n2-standard-8"}, NodeCount: ptrTo(3), AllocatableCores: ptrTo(23.5),
	AllocatableRAMGB: ptrTo(88.25), WorkerPodCount: ptrTo(6), KubernetesVersion: []string{"v1.31.4"},
	WorkerActorCapacity: []int64{40}, WorkerMemoryLimitGB: []float64{16}, SandboxClass: []string{"gvisor", "microvm"},
}

// storedK8sOOM are the Kubernetes oom_events counts recorded with it.
var storedK8sOOM = harvest.KubernetesOOM{WorkerRestarts: ptrTo[int64](3), WorkerOOMKilledPods: ptrTo[int64](1), Evicted: ptrTo[int64](2), WorkerPodsLost: ptrTo[int64](1)}

// storeExport writes what `density export` leaves in the store for the
// run: server_summary.json (with the Kubernetes counts) and stats.jsonl
// with the server_summary and trial_summary rows. It returns the trial
// measurements written.
func (e *env) storeExport(t *testing.T) frontier.Measurements {
	t.Helper()
	tr := e.truth
	res := e.expected(t)
	res.SetKubernetes(storedK8sOOM)
	md := artifact.ServerMetadata{TestName: tr.TestName, Tag: tr.Tag, PromURL: "http://prometheus:9090", Start: tr.Start, End: tr.End,
		SteadyStart: tr.SteadyStart, SteadyEnd: tr.SteadyEnd, LagS: tr.LagS}
	b, err := artifact.ServerSummaryJSON(md, res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.runDir(), runs.FileServerSummary), b, 0o644); err != nil {
		t.Fatal(err)
	}
	hist, err := os.Open(filepath.Join(e.runDir(), runs.FileStatsHistory))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := runs.ReadHistory(hist)
	observed := h.Observed
	hist.Close()
	st, err := os.Open(filepath.Join(e.runDir(), runs.FileStats))
	if err != nil {
		t.Fatal(err)
	}
	stats, statsErr := runs.ReadStatsCSV(st)
	st.Close()
	m, _ := frontier.TrialSummary(frontier.Inputs{Facts: storedFacts, ObservedUsers: observed, Stats: stats, StatsErr: statsErr,
		RunStart: tr.Start, RunEnd: tr.End})
	var lines []string
	for _, row := range []artifact.Row{artifact.ServerSummaryRow(md, res), frontier.Row(m, tr.Start, tr.Tag, tr.TestName)} {
		l, err := row.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(l))
	}
	// A foreign row first: other tools share the file.
	content := `{"metric": "locust", "foreign": true}` + "\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(e.runDir(), runs.FileStatsJSONL), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkTrialCells compares one row of a frame with trial measurements:
// text keys as strings, the others as numbers.
func checkTrialCells(t *testing.T, f *data.Frame, row int, m frontier.Measurements, keys []string) {
	t.Helper()
	for _, k := range keys {
		want, ok := m.Get(k)
		if !ok {
			t.Fatalf("measurement %s missing from the stored row", k)
		}
		fld := field(t, f, k)
		if isTextKey(k) {
			got, ok := fld.ConcreteAt(row)
			switch {
			case want == nil && ok, want != nil && (!ok || got.(string) != *want):
				t.Errorf("%s = %v, stored %v", k, got, fmtStr(want))
			}
			continue
		}
		var w *float64
		if want != nil {
			v, err := strconv.ParseFloat(*want, 64)
			if err != nil {
				t.Fatalf("stored %s %q", k, *want)
			}
			w = &v
		}
		if got := num(t, fld, row); !eqPtr(got, w) {
			t.Errorf("%s = %s, stored %s", k, fmtPtr(got), fmtStr(want))
		}
	}
}

func fmtStr(p *string) string {
	if p == nil {
		return "null"
	}
	return strconv.Quote(*p)
}

// A stored run's cluster facts, frontiers and Kubernetes OOM counts come
// from its stored artifacts, never from today's cluster (here Kubernetes
// access is even configured and would fail).
func TestStoredRunFactsComeFromItsArtifacts(t *testing.T) {
	e := newEnv(t, "ladder")
	m := e.storeExport(t)
	kube := kubefake.New(kubefake.Config{Token: "other", TLS: true, Faults: map[string]kubefake.Fault{kubefake.Nodes: {Status: 500}}})
	defer kube.Close()
	e.kubeToken(kube.URL, kube.CACertPEM(), "t0ken")
	c := e.client(t)

	cf := e.one(t, c, map[string]any{"queryType": "clusterFacts", "run": e.runID}).Frames[0]
	checkTrialCells(t, cf, 0, m, clusterfacts.Keys())
	if got := field(t, cf, "machine_type").At(0).(*string); got == nil || *got != "c3-standard-8,n2-standard-8" {
		t.Errorf("machine_type %v", got)
	}

	fr := e.one(t, c, map[string]any{"queryType": "frontier", "run": e.runID}).Frames[0]
	if fr.Rows() != 1 || field(t, fr, "id").At(0).(string) != e.runID {
		t.Fatalf("frontier rows %d", fr.Rows())
	}
	var ratioKeys []string
	for _, x := range m {
		if strings.HasSuffix(x.Key, "_failure_ratio") {
			ratioKeys = append(ratioKeys, x.Key)
		}
	}
	if len(ratioKeys) < 2 {
		t.Fatalf("stored row has failure ratios %v", ratioKeys)
	}
	checkTrialCells(t, fr, 0, m, append(append([]string{}, frontierKeys...), ratioKeys...))
	// Ground truth: peak users over the stored node count.
	if got := num(t, field(t, fr, "actors_per_node"), 0); got == nil || *got != percentile.Round(e.truth.PeakUsers/3, 2) {
		t.Errorf("actors_per_node %s, want %v/3", fmtPtr(got), e.truth.PeakUsers)
	}
	if !hasNotice(fr, "all alive at once") {
		t.Errorf("frontier frame lacks the caveat: %+v", fr.Meta)
	}

	oom := e.one(t, c, map[string]any{"queryType": "oomEvents", "run": e.runID}).Frames[0]
	for k, want := range map[string]int64{"worker_restarts": 3, "worker_oomkilled_pods": 1, "evicted": 2, "worker_pods_lost": 1} {
		if got := num(t, field(t, oom, k), 0); got == nil || *got != float64(want) {
			t.Errorf("%s = %s, stored %d", k, fmtPtr(got), want)
		}
	}

	// summary: the 80 server keys then the trial keys.
	sum := e.one(t, c, map[string]any{"queryType": "summary", "run": e.runID}).Frames[0]
	checkTrialCells(t, sum, 0, m, []string{"node_count", "machine_type", "run_start", "run_end", "actors_per_vcpu", "aggregate_failure_ratio"})
	if got := num(t, field(t, sum, "oom_events_evicted"), 0); got == nil || *got != 2 {
		t.Errorf("summary oom_events_evicted %s", fmtPtr(got))
	}
	if kube.Requests("") != 0 {
		t.Errorf("a stored run's facts touched the Kubernetes API %d times", kube.Requests(""))
	}
}

// A stored run without a trial_summary row has null facts and frontiers,
// each with the reason; it is never described by today's cluster.
func TestStoredRunWithoutTrialRow(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	cf := e.one(t, c, map[string]any{"queryType": "clusterFacts", "run": e.runID}).Frames[0]
	for _, k := range clusterfacts.Keys() {
		if v, ok := field(t, cf, k).ConcreteAt(0); ok {
			t.Errorf("%s = %v, want null", k, v)
		}
	}
	if !hasNotice(cf, "no trial_summary row") {
		t.Errorf("no notice: %+v", cf.Meta)
	}
}

// A run outside the store that ended within liveFactsMaxAgeSeconds is
// described by the live cluster (a fake API server holding a synthetic
// cluster); once older, its facts are null with the reason.
func TestLiveClusterFactsForRecentRuns(t *testing.T) {
	syn := kubefake.Synthetic{Nodes: 5, WorkerNodes: 2, Pods: 12, Workers: 4, Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool"}
	kube := kubefake.New(kubefake.Config{Pods: syn.PodSource(), Nodes: syn.NodeSource(), Token: "t0ken", TLS: true})
	defer kube.Close()
	e := newEnv(t, "steady")
	delete(e.jsonData, "resultsStore")
	e.kubeToken(kube.URL, kube.CACertPEM(), "t0ken")
	e.now = time.Unix(e.truth.End+600, 0)
	c := e.client(t)
	cf := e.one(t, c, map[string]any{"queryType": "clusterFacts", "run": "latest"}).Frames[0]
	coresWant := percentile.Round(2*3.92, 2)
	ramWant := percentile.Round(2*13591700.0/1048576, 2)
	want := map[string]any{
		"machine_type": "c3-standard-4,n2-standard-4", "node_count": 2.0, "allocatable_cores": coresWant,
		"allocatable_ram_gb": ramWant, "worker_pod_count": 4.0, "kubernetes_version": kubefake.SyntheticKubelet,
		"worker_actor_capacity": "50,100", "worker_memory_limit_gb": "16.0", "sandbox_class": "gvisor,microvm",
	}
	for k, w := range want {
		fld := field(t, cf, k)
		switch w := w.(type) {
		case string:
			if got := fld.At(0).(*string); got == nil || *got != w {
				t.Errorf("%s = %v, want %q", k, got, w)
			}
		case float64:
			if got := num(t, fld, 0); got == nil || *got != w {
				t.Errorf("%s = %s, want %v", k, fmtPtr(got), w)
			}
		}
	}
	fr := e.one(t, c, map[string]any{"queryType": "frontier", "run": "latest"}).Frames[0]
	// Peak users (the user-count series) over the live cluster's size.
	for k, w := range map[string]float64{
		"actors_per_node": percentile.Round(e.truth.PeakUsers/2, 2), "actors_per_vcpu": percentile.Round(e.truth.PeakUsers/coresWant, 2),
		"actors_per_gb_ram": percentile.Round(e.truth.PeakUsers/ramWant, 2),
	} {
		if got := num(t, field(t, fr, k), 0); got == nil || *got != w {
			t.Errorf("%s = %s, want %v", k, fmtPtr(got), w)
		}
	}
	if kube.Requests("") == 0 {
		t.Fatal("the live cluster was not read")
	}

	old := newEnv(t, "steady")
	delete(old.jsonData, "resultsStore")
	old.kubeToken(kube.URL, kube.CACertPEM(), "t0ken")
	old.now = time.Unix(old.truth.End+7200, 0)
	before := kube.Requests("")
	cf = old.one(t, old.client(t), map[string]any{"queryType": "clusterFacts", "run": "latest"}).Frames[0]
	if v := num(t, field(t, cf, "node_count"), 0); v != nil {
		t.Errorf("node_count of a 2-hour-old run = %v, want null", *v)
	}
	if !hasNotice(cf, "liveFactsMaxAgeSeconds") {
		t.Errorf("no notice: %+v", cf.Meta)
	}
	if kube.Requests("") != before {
		t.Errorf("an old run's facts read the cluster")
	}
}
