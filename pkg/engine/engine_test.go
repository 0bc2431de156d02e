package engine_test

import (
	"context"
	"slices"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/harvest"
)

func empty(context.Context, harvest.Params) *harvest.Result { return harvest.EmptyResult() }

func oomReasons(r *harvest.Result) map[string]string {
	out := map[string]string{}
	for _, n := range r.Notices {
		if n.Block == harvest.BlockOOM {
			out[n.Field] = n.Reason
		}
	}
	return out
}

// TestRunRecorded: a stored run's recorded counts are set, nothing is read.
func TestRunRecorded(t *testing.T) {
	three := int64(3)
	rec := harvest.KubernetesOOM{WorkerRestarts: &three, Reason: "not recorded"}
	r := engine.Run(context.Background(), engine.Input{Blocks: engine.BlocksFunc(empty), Kube: engine.Kubernetes{Recorded: &rec}},
		engine.PartBlocks|engine.PartKubernetes)
	if r.Harvest.OOM.WorkerRestarts == nil || *r.Harvest.OOM.WorkerRestarts != 3 {
		t.Errorf("worker_restarts %v, want 3", r.Harvest.OOM.WorkerRestarts)
	}
	if got := oomReasons(r.Harvest)["evicted"]; got != "null: not recorded" {
		t.Errorf("evicted reason %q", got)
	}
	if r.Cluster.Notices != nil || r.Cluster.OOM.Notices != nil {
		t.Errorf("cluster read for a recorded run: %+v", r.Cluster)
	}
}

// TestRunWithoutClient: no client, no call; Why is every reason, the
// phase part's pod logs included.
func TestRunWithoutClient(t *testing.T) {
	r := engine.Run(context.Background(), engine.Input{Blocks: engine.BlocksFunc(empty),
		Kube: engine.Kubernetes{Why: "switched off"}, Phases: &engine.PhaseSource{}}, engine.AllParts)
	if r.Phases == nil || r.Phases.Read || !slices.Equal(r.Phases.Notices, []string{"no phase rows: switched off"}) {
		t.Errorf("phases %+v, want unread with the reason", r.Phases)
	}
	for _, k := range []string{"worker_restarts", "worker_oomkilled_pods", "evicted", "worker_pods_lost"} {
		if got := oomReasons(r.Harvest)[k]; got != "null: switched off" {
			t.Errorf("%s reason %q", k, got)
		}
	}
	for _, n := range r.Cluster.Notices {
		if n.Reason != "switched off" {
			t.Errorf("fact notice %+v", n)
		}
	}
}

// TestRunLive: the counts against the before snapshot reach the harvest.
func TestRunLive(t *testing.T) {
	c := fake.NewClientset()
	before := &cluster.Snapshot{Version: 1, Namespace: "benchmark-workloads", LabelKey: "ate.dev/worker-pool",
		Pods: map[string]cluster.PodState{"uid-1": {Name: "gone", Phase: "Running"}}}
	r := engine.Run(context.Background(), engine.Input{Params: harvest.Params{Start: 100, End: 200},
		Blocks: engine.BlocksFunc(empty), Kube: engine.Kubernetes{Client: c, Before: before}}, engine.PartBlocks|engine.PartKubernetes)
	o := r.Harvest.OOM
	if o.WorkerPodsLost == nil || *o.WorkerPodsLost != 1 || o.WorkerRestarts == nil || *o.WorkerRestarts != 0 {
		t.Errorf("oom %+v, want 1 pod lost and 0 restarts", o)
	}
	if o.Evicted == nil || *o.Evicted != 0 {
		t.Errorf("evicted %v, want 0", o.Evicted)
	}
}

// TestRunParts: only the parts asked for are read; a part not asked for
// stays nil even when its source is given.
func TestRunParts(t *testing.T) {
	blocks := 0
	count := engine.BlocksFunc(func(context.Context, harvest.Params) *harvest.Result {
		blocks++
		return harvest.EmptyResult()
	})
	in := engine.Input{Blocks: count, Kube: engine.Kubernetes{Why: "off"}, Phases: &engine.PhaseSource{}}
	r := engine.Run(context.Background(), in, engine.PartPhases)
	if blocks != 0 || r.Harvest != nil || r.Cluster.Notices != nil || r.Ladder != nil {
		t.Errorf("phases only: blocks read %d times, result %+v", blocks, r)
	}
	if r.Phases == nil {
		t.Error("phases not read")
	}
	r = engine.Run(context.Background(), in, engine.PartBlocks)
	if blocks != 1 || r.Harvest == nil || r.Phases != nil || r.Cluster.Notices != nil {
		t.Errorf("blocks only: blocks read %d times, result %+v", blocks, r)
	}
	// Without the Kubernetes part the oom_events Kubernetes fields stay
	// as the blocks left them.
	if got := oomReasons(r.Harvest)["evicted"]; got == "null: off" {
		t.Errorf("Kubernetes reason set without the part: %q", got)
	}
}
