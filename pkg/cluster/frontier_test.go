package cluster_test

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/frontier"
)

// TestFactsIntoTrialSummary runs discovery output through the row: the
// printed strings of the examples, with discovery's facts handed
// to the row as they are (both use clusterfacts.Facts).
func TestFactsIntoTrialSummary(t *testing.T) {
	c := fake.NewClientset([]runtime.Object{
		pod("a", onNode("n1"), args("--max-actors=50"), memLimit("16Gi"), image("r/ateom-gvisor:1")),
		pod("b", onNode("n2"), args("--max-actors", "1"), memLimit("17179869184"), image("r/ateom-microvm:1"), sidecar("proxy", "--max-actors=9")),
		pod("c", onNode("n3"), memLimit("16Gi")),
		node("n1", "3920m", "13591700Ki"), node("n2", "3920m", "13591700Ki"), node("n3", "3920m", "13591700Ki"),
		node("infra", "64", "256Gi"),
	}...)
	r := cluster.Discover(context.Background(), c, cluster.Options{})
	m, _ := frontier.TrialSummary(frontier.Inputs{Facts: r.Facts, ObservedUsers: []float64{30}, RunStart: 1, RunEnd: 2})
	keys := []string{"machine_type", "node_count", "allocatable_cores", "allocatable_ram_gb", "worker_pod_count",
		"kubernetes_version", "worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class",
		"actors_per_node", "actors_per_vcpu", "actors_per_gb_ram", "actors_per_pod_p50", "multi_actor_worker"}
	// 30 actors: /3 nodes = 10.0, /11.76 = 2.55, /38.89 = 0.77, /3 pods = 10.0.
	want := []string{"n2-standard-4", "3", "11.76", "38.89", "3", "v1.37.2", "1,50,1000", "16.0", "gvisor,microvm",
		"10.0", "2.55", "0.77", "10.0", "true"}
	var got []string
	for _, k := range keys {
		v, ok := m.Get(k)
		switch {
		case !ok:
			got = append(got, "<absent>")
		case v == nil:
			got = append(got, "null")
		default:
			got = append(got, *v)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
