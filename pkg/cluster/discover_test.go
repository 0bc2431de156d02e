package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/clusterfacts"
)

func forbidden(verb, resource string) k8stesting.ReactionFunc {
	return func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "",
			fmt.Errorf("User \"system:serviceaccount:x:y\" cannot %s resource %q", verb, resource))
	}
}

// notice is the comparable part of a Notice.
type notice struct{ group, fields string }

func notices(ns []cluster.Notice) []notice {
	var out []notice
	for _, n := range ns {
		out = append(out, notice{n.Group, strings.Join(n.Fields, ",")})
	}
	return out
}

func TestDiscover(t *testing.T) {
	threeNodes := []runtime.Object{
		node("n1", "3920m", "13591700Ki"), node("n2", "3920m", "13591700Ki"), node("n3", "3920m", "13591700Ki"),
	}
	allNodeNotices := notice{cluster.GroupNodes, "machine_type,kubernetes_version"}
	tests := []struct {
		name    string
		objs    []runtime.Object
		react   func(*fake.Clientset)
		want    clusterfacts.Facts
		notices []notice
	}{
		{
			// The example: three nodes of 3920m / 13591700Ki.
			// 3 × 3.92 = 11.76 cores; 3 × 13591700 × 1024 B / 2^30 = 38.8859… GiB.
			name: "node sums over three worker nodes",
			objs: append([]runtime.Object{
				pod("w1", onNode("n1")), pod("w2", onNode("n2")), pod("w3", onNode("n3")), pod("w4", onNode("n3")),
			}, threeNodes...),
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(3), AllocatableCores: ptr(11.76),
				AllocatableRAMGB: ptr(38.89), WorkerPodCount: ptr(4), KubernetesVersion: []string{"v1.37.2"},
				WorkerActorCapacity: []int64{1000}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_memory_limit_gb"}},
		},
		{
			// infra holds only non-worker pods: excluded from every node fact.
			name: "nodes without worker pods excluded",
			objs: []runtime.Object{
				pod("w1", onNode("n1")), pod("app", onNode("infra"), noWorkerLabel),
				node("n1", "4", "16Gi", instanceType("c3-standard-4"), kubelet("v1.37.1")),
				node("infra", "64", "256Gi", instanceType("n2-highmem-64"), kubelet("v1.36.0")),
				node("idle", "8", "32Gi"),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"c3-standard-4"}, NodeCount: ptr(1), AllocatableCores: ptr(4.0),
				AllocatableRAMGB: ptr(16.0), WorkerPodCount: ptr(1), KubernetesVersion: []string{"v1.37.1"},
				WorkerActorCapacity: []int64{1000}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_memory_limit_gb"}},
		},
		{
			name: "pending pod without node counts as a pod, adds no node",
			objs: []runtime.Object{
				pod("w1", onNode("n1")), pod("w2", phase(corev1.PodPending)), pod("w3", phase(corev1.PodPending), onNode("n2")),
				node("n1", "2", "8Gi"), node("n2", "2", "8Gi"), node("n3", "2", "8Gi"),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(2), AllocatableCores: ptr(4.0),
				AllocatableRAMGB: ptr(16.0), WorkerPodCount: ptr(3), KubernetesVersion: []string{"v1.37.2"},
				WorkerActorCapacity: []int64{1000}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_memory_limit_gb"}},
		},
		{
			name: "only live worker pods of the namespace count",
			objs: []runtime.Object{
				pod("w1", onNode("n1")),
				pod("done", onNode("n2"), phase(corev1.PodSucceeded)),
				pod("failed", onNode("n2"), phase(corev1.PodFailed)),
				pod("unknown", onNode("n2"), phase(corev1.PodUnknown)),
				pod("elsewhere", onNode("n2"), inNamespace("other")),
				pod("unlabelled", onNode("n2"), noWorkerLabel),
				node("n1", "2", "8Gi"), node("n2", "2", "8Gi"),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(1), AllocatableCores: ptr(2.0),
				AllocatableRAMGB: ptr(8.0), WorkerPodCount: ptr(1), KubernetesVersion: []string{"v1.37.2"},
				WorkerActorCapacity: []int64{1000}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_memory_limit_gb"}},
		},
		{
			// Sidecar args, the command line and later occurrences are ignored.
			name: "both --max-actors forms, sidecar and command ignored",
			objs: []runtime.Object{
				pod("eq", onNode("n1"), args("--port=8080", "--max-actors=50", "--max-actors=7"), sidecar("proxy", "--max-actors=3")),
				pod("space", onNode("n1"), args("-v", "--max-actors", "1"), command("/ateom", "--max-actors=9")),
				pod("default", onNode("n1"), command("/ateom", "--max-actors=2")),
				node("n1", "2", "8Gi"),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(1), AllocatableCores: ptr(2.0),
				AllocatableRAMGB: ptr(8.0), WorkerPodCount: ptr(3), KubernetesVersion: []string{"v1.37.2"},
				WorkerActorCapacity: []int64{1, 50, 1000}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_memory_limit_gb"}},
		},
		{
			// 16Gi and 17179869184 bytes are the same 16.0; 1536Mi is 1.5; the
			// sidecar's 1Gi is not the worker container's.
			name: "memory limits in GiB, deduplicated, sidecar ignored",
			objs: []runtime.Object{
				pod("a", onNode("n1"), memLimit("16Gi"), sidecar("proxy")),
				pod("b", onNode("n1"), memLimit("17179869184")),
				pod("c", onNode("n1"), memLimit("1536Mi")),
				pod("d", onNode("n1")),
				node("n1", "2", "8Gi"),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(1), AllocatableCores: ptr(2.0),
				AllocatableRAMGB: ptr(8.0), WorkerPodCount: ptr(4), KubernetesVersion: []string{"v1.37.2"},
				WorkerActorCapacity: []int64{1000}, WorkerMemoryLimitGB: []float64{1.5, 16}, SandboxClass: []string{"gvisor"},
			},
		},
		{
			name: "mixed pools: sandbox classes and machine types sorted",
			objs: []runtime.Object{
				pod("m", onNode("n2"), image("registry.example/substrate/ateom-microvm@sha256:abc"), memLimit("8Gi")),
				pod("g", onNode("n1"), image("registry.example/ateom-gvisor:v2"), memLimit("8Gi")),
				pod("plain", onNode("n1"), image("registry.example/ateom:v2"), memLimit("8Gi")),
				node("n1", "4", "16Gi", instanceType("n2-standard-4")),
				node("n2", "8", "32Gi", instanceType("c3-highmem-8"), kubelet("v1.36.4")),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"c3-highmem-8", "n2-standard-4"}, NodeCount: ptr(2), AllocatableCores: ptr(12.0),
				AllocatableRAMGB: ptr(48.0), WorkerPodCount: ptr(3), KubernetesVersion: []string{"v1.36.4", "v1.37.2"},
				WorkerActorCapacity: []int64{1000}, WorkerMemoryLimitGB: []float64{8}, SandboxClass: []string{"gvisor", "microvm"},
			},
		},
		{
			// A malformed flag nulls only the three container facts.
			name: "--max-actors=lots nulls the container facts only",
			objs: []runtime.Object{
				pod("ok", onNode("n1"), args("--max-actors=50"), memLimit("16Gi")),
				pod("bad", onNode("n1"), args("--max-actors=lots"), memLimit("16Gi")),
				node("n1", "2", "8Gi"),
			},
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(1), AllocatableCores: ptr(2.0),
				AllocatableRAMGB: ptr(8.0), WorkerPodCount: ptr(2), KubernetesVersion: []string{"v1.37.2"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_actor_capacity,worker_memory_limit_gb,sandbox_class"}},
		},
		{
			// Zero pods is a reading: 0, 0, 0.0, 0.0; the sets are null.
			name: "zero worker pods is a reading",
			objs: []runtime.Object{pod("app", onNode("n1"), noWorkerLabel), node("n1", "2", "8Gi")},
			want: clusterfacts.Facts{NodeCount: ptr(0), AllocatableCores: ptr(0.0), AllocatableRAMGB: ptr(0.0), WorkerPodCount: ptr(0)},
			notices: []notice{
				{cluster.GroupContainers, "worker_actor_capacity,worker_memory_limit_gb,sandbox_class"},
				allNodeNotices,
			},
		},
		{
			// A denied list is not zero: everything scoped to the pods is null.
			name:  "denied pod list nulls every fact",
			objs:  []runtime.Object{pod("w1", onNode("n1")), node("n1", "2", "8Gi")},
			react: func(c *fake.Clientset) { c.PrependReactor("list", "pods", forbidden("list", "pods")) },
			want:  clusterfacts.Facts{},
			notices: []notice{{cluster.GroupPods,
				"machine_type,node_count,allocatable_cores,allocatable_ram_gb,worker_pod_count,kubernetes_version,worker_actor_capacity,worker_memory_limit_gb,sandbox_class"}},
		},
		{
			name:  "denied node list leaves pod facts intact",
			objs:  []runtime.Object{pod("w1", onNode("n1"), memLimit("16Gi")), node("n1", "2", "8Gi")},
			react: func(c *fake.Clientset) { c.PrependReactor("list", "nodes", forbidden("list", "nodes")) },
			want: clusterfacts.Facts{
				WorkerPodCount: ptr(1), WorkerActorCapacity: []int64{1000}, WorkerMemoryLimitGB: []float64{16}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{{cluster.GroupNodes, "node_count,allocatable_cores,allocatable_ram_gb,machine_type,kubernetes_version"}},
		},
		{
			name: "a worker node without allocatable cpu nulls only allocatable_cores",
			objs: []runtime.Object{
				pod("w1", onNode("n1")), pod("w2", onNode("n2")),
				node("n1", "", "8Gi", instanceType("")), node("n2", "2", "8Gi", instanceType("")),
			},
			want: clusterfacts.Facts{
				NodeCount: ptr(2), AllocatableRAMGB: ptr(16.0), WorkerPodCount: ptr(2), KubernetesVersion: []string{"v1.37.2"},
				WorkerActorCapacity: []int64{1000}, SandboxClass: []string{"gvisor"},
			},
			notices: []notice{
				{cluster.GroupContainers, "worker_memory_limit_gb"},
				{cluster.GroupNodes, "machine_type"},
				{cluster.GroupNodes, "allocatable_cores"},
			},
		},
		{
			name: "worker pods without a worker container",
			objs: []runtime.Object{pod("w1", onNode("n1"), noAteom, args("--max-actors=5"), memLimit("4Gi")), node("n1", "2", "8Gi")},
			want: clusterfacts.Facts{
				MachineType: []string{"n2-standard-4"}, NodeCount: ptr(1), AllocatableCores: ptr(2.0),
				AllocatableRAMGB: ptr(8.0), WorkerPodCount: ptr(1), KubernetesVersion: []string{"v1.37.2"},
			},
			notices: []notice{{cluster.GroupContainers, "worker_actor_capacity,worker_memory_limit_gb,sandbox_class"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset(tt.objs...)
			if tt.react != nil {
				tt.react(c)
			}
			r := cluster.Discover(context.Background(), c, cluster.Options{})
			if !reflect.DeepEqual(r.Facts, tt.want) {
				t.Errorf("facts\n got %s\nwant %s", show(r.Facts), show(tt.want))
			}
			if got := notices(r.Notices); !reflect.DeepEqual(got, tt.notices) {
				t.Errorf("notices\n got %v\nwant %v (%+v)", got, tt.notices, r.Notices)
			}
			for _, n := range r.Notices {
				if n.Reason == "" {
					t.Errorf("notice %+v has no reason", n)
				}
			}
			if (r.Pods == nil) != (r.Facts.WorkerPodCount == nil) {
				t.Errorf("snapshot present = %v, pod count present = %v", r.Pods != nil, r.Facts.WorkerPodCount != nil)
			}
			if r.Pods != nil && len(r.Pods.Pods) != *r.Facts.WorkerPodCount {
				t.Errorf("snapshot holds %d pods, count %d", len(r.Pods.Pods), *r.Facts.WorkerPodCount)
			}
		})
	}
}

func TestDiscoverOffMakesNoCall(t *testing.T) {
	r := cluster.Discover(context.Background(), nil, cluster.Options{})
	if !reflect.DeepEqual(r.Facts, clusterfacts.Facts{}) || r.Pods != nil {
		t.Fatalf("off: got %s", show(r.Facts))
	}
	if len(r.Notices) != 1 || r.Notices[0].Group != cluster.GroupAccess || len(r.Notices[0].Fields) != 9 {
		t.Fatalf("off: want one access notice over 9 facts, got %+v", r.Notices)
	}
	if _, err := cluster.NewClient(cluster.Access{Mode: cluster.ModeOff}); !errors.Is(err, cluster.ErrOff) {
		t.Fatalf("NewClient(off) = %v, want ErrOff", err)
	}
}

func TestDiscoverDeniedReasonIsServerMessage(t *testing.T) {
	c := fake.NewClientset(pod("w1"))
	c.PrependReactor("list", "pods", forbidden("list", "pods"))
	r := cluster.Discover(context.Background(), c, cluster.Options{})
	if len(r.Notices) != 1 {
		t.Fatalf("notices %+v", r.Notices)
	}
	for _, want := range []string{"listing worker pods", "403", "Forbidden", "cannot list resource"} {
		if !strings.Contains(r.Notices[0].Reason, want) {
			t.Errorf("reason %q lacks %q", r.Notices[0].Reason, want)
		}
	}
}

func TestCheckAccess(t *testing.T) {
	c := fake.NewClientset()
	if err := cluster.CheckAccess(context.Background(), c, cluster.Options{}); err != nil {
		t.Fatalf("all allowed: %v", err)
	}
	c.PrependReactor("list", "events", forbidden("list", "events"))
	err := cluster.CheckAccess(context.Background(), c, cluster.Options{})
	if err == nil || !strings.Contains(err.Error(), "list events in benchmark-workloads") || strings.Contains(err.Error(), "list nodes") {
		t.Fatalf("events denied: %v", err)
	}
	if err := cluster.CheckAccess(context.Background(), nil, cluster.Options{}); !errors.Is(err, cluster.ErrOff) {
		t.Fatalf("nil client: %v", err)
	}
}

func show(f clusterfacts.Facts) string {
	s := func(p any) string {
		switch v := p.(type) {
		case *int:
			if v == nil {
				return "nil"
			}
			return fmt.Sprint(*v)
		case *float64:
			if v == nil {
				return "nil"
			}
			return fmt.Sprint(*v)
		}
		return fmt.Sprint(p)
	}
	return fmt.Sprintf("{machine=%v nodes=%s cores=%s ram=%s pods=%s version=%v capacity=%v mem=%v sandbox=%v}",
		f.MachineType, s(f.NodeCount), s(f.AllocatableCores), s(f.AllocatableRAMGB), s(f.WorkerPodCount),
		f.KubernetesVersion, f.WorkerActorCapacity, f.WorkerMemoryLimitGB, f.SandboxClass)
}
