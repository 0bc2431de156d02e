package engine_test

import (
	"context"
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
	r := engine.Run(context.Background(), harvest.Params{}, engine.BlocksFunc(empty), engine.Kubernetes{Recorded: &rec})
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

// TestRunWithoutClient: no client, no call; Why is every reason.
func TestRunWithoutClient(t *testing.T) {
	then := false
	r := engine.Run(context.Background(), harvest.Params{}, engine.BlocksFunc(empty),
		engine.Kubernetes{Why: "switched off", Then: func(context.Context) { then = true }})
	if !then {
		t.Error("Then not called")
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
	r := engine.Run(context.Background(), harvest.Params{Start: 100, End: 200}, engine.BlocksFunc(empty),
		engine.Kubernetes{Client: c, Before: before})
	o := r.Harvest.OOM
	if o.WorkerPodsLost == nil || *o.WorkerPodsLost != 1 || o.WorkerRestarts == nil || *o.WorkerRestarts != 0 {
		t.Errorf("oom %+v, want 1 pod lost and 0 restarts", o)
	}
	if o.Evicted == nil || *o.Evicted != 0 {
		t.Errorf("evicted %v, want 0", o.Evicted)
	}
}
