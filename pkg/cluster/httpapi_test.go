package cluster_test

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/clusterfacts"
)

// small is a synthetic cluster through which the whole client path runs:
// 6,000 pods of which 1,200 live workers on 100 of 300 nodes.
var small = kubefake.Synthetic{Nodes: 300, WorkerNodes: 100, Pods: 6000, Workers: 1200, Namespace: ns, LabelKey: labelKey}

// smallFacts is derived from the layout by hand: workers j on node j%100
// (all 100 worker nodes), 100 × 3.92 = 392 cores, 100 × 13591700 KiB =
// 1296.21 GiB, --max-actors 50/100, 16Gi limits, both sandboxes.
var smallFacts = clusterfacts.Facts{
	MachineType: []string{"c3-standard-4", "n2-standard-4"}, NodeCount: ptr(100), AllocatableCores: ptr(392.0),
	AllocatableRAMGB: ptr(1296.21), WorkerPodCount: ptr(1200), KubernetesVersion: []string{"v1.37.2"},
	WorkerActorCapacity: []int64{50, 100}, WorkerMemoryLimitGB: []float64{16}, SandboxClass: []string{"gvisor", "microvm"},
}

// faulty is a smaller cluster for the fault cases (faults are about the
// request sequence, not volume): 120 workers on 10 of 30 nodes, listed 10
// per page. 10 × 3.92 = 39.2 cores, 10 × 13591700 KiB = 129.62 GiB.
var (
	faulty      = kubefake.Synthetic{Nodes: 30, WorkerNodes: 10, Pods: 600, Workers: 120, Namespace: ns, LabelKey: labelKey}
	faultyFacts = clusterfacts.Facts{
		MachineType: []string{"c3-standard-4", "n2-standard-4"}, NodeCount: ptr(10), AllocatableCores: ptr(39.2),
		AllocatableRAMGB: ptr(129.62), WorkerPodCount: ptr(120), KubernetesVersion: []string{"v1.37.2"},
		WorkerActorCapacity: []int64{50, 100}, WorkerMemoryLimitGB: []float64{16}, SandboxClass: []string{"gvisor", "microvm"},
	}
)

// The injected delay is far beyond the per-call timeout, so a call that
// ignored the timeout would take at least slow.
const (
	slow        = 60 * time.Second
	callTimeout = 2 * time.Second
)

const token = "test-token"

func serve(t *testing.T, sc kubefake.Synthetic, faults map[string]kubefake.Fault, events ...corev1.Event) (*kubefake.Server, kubernetes.Interface) {
	t.Helper()
	s := kubefake.New(kubefake.Config{
		Pods: sc.PodSource(), Nodes: sc.NodeSource(), Events: kubefake.Slice(events...),
		Token: token, Faults: faults, TLS: true,
	})
	t.Cleanup(s.Close)
	// Token mode with the server's CA: the datasource's path.
	c, err := cluster.NewClient(cluster.Access{Mode: cluster.ModeToken, URL: s.URL, Token: token, CACert: s.CACertPEM()})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestDiscoverThroughAPI(t *testing.T) {
	s, c := serve(t, small, nil)
	r := cluster.Discover(context.Background(), c, cluster.Options{PageSize: 100, Timeout: 60 * time.Second})
	if !reflect.DeepEqual(r.Facts, smallFacts) {
		t.Fatalf("facts\n got %s\nwant %s", show(r.Facts), show(smallFacts))
	}
	if len(r.Notices) != 0 {
		t.Errorf("notices %+v", r.Notices)
	}
	// 1,200 workers / 100 per page; 300 nodes / 100 per page.
	if got := [2]int{s.Requests(kubefake.Pods), s.Requests(kubefake.Nodes)}; got != [2]int{12, 3} {
		t.Errorf("requests pods, nodes = %v, want [12 3]", got)
	}
	// Every pod request carries the selectors and the limit, and each
	// continue token is the one the previous page returned (checked by
	// the server: a token for another position would skip or repeat pods,
	// which the exact count above would catch).
	for _, u := range s.Log() {
		q, _ := url.ParseQuery(u[strings.Index(u, "?")+1:])
		if q.Get("limit") != "100" {
			t.Errorf("request without limit 100: %s", u)
		}
		if strings.Contains(u, "/pods") && (q.Get("labelSelector") != labelKey || q.Get("fieldSelector") != "status.phase!=Succeeded,status.phase!=Failed") {
			t.Errorf("pod request selectors: %s", u)
		}
	}
	if len(r.Pods.Pods) != 1200 {
		t.Errorf("snapshot has %d pods", len(r.Pods.Pods))
	}
}

func TestFaultsThroughAPI(t *testing.T) {
	podFacts := clusterfacts.Facts{
		WorkerPodCount: faultyFacts.WorkerPodCount, WorkerActorCapacity: faultyFacts.WorkerActorCapacity,
		WorkerMemoryLimitGB: faultyFacts.WorkerMemoryLimitGB, SandboxClass: faultyFacts.SandboxClass,
	}
	tests := []struct {
		name        string
		faults      map[string]kubefake.Fault
		want        clusterfacts.Facts
		group       string // the one notice's group ("" = no notice)
		reason      string // substring of its reason
		podRequests int
	}{
		{name: "403 on nodes leaves pod facts intact", faults: map[string]kubefake.Fault{kubefake.Nodes: {Status: 403}},
			want: podFacts, group: cluster.GroupNodes, reason: `403 Forbidden: nodes is forbidden: User "system:serviceaccount:benchmarking:density" cannot list resource "nodes"`, podRequests: 12},
		{name: "slow nodes time out, only the node group", faults: map[string]kubefake.Fault{kubefake.Nodes: {Delay: slow}},
			want: podFacts, group: cluster.GroupNodes, reason: "listing nodes: timed out", podRequests: 12},
		{name: "403 on pods nulls everything", faults: map[string]kubefake.Fault{kubefake.Pods: {Status: 403}},
			group: cluster.GroupPods, reason: `cannot list resource "pods" in API group "" in the namespace "benchmark-workloads"`, podRequests: 1},
		{name: "slow pods time out, everything null", faults: map[string]kubefake.Fault{kubefake.Pods: {Delay: slow}},
			group: cluster.GroupPods, reason: "listing worker pods (namespace benchmark-workloads, label ate.dev/worker-pool): timed out", podRequests: 1},
		{name: "500 mid-pagination nulls the pod group", faults: map[string]kubefake.Fault{kubefake.Pods: {Status: 500, AfterPages: 3}},
			group: cluster.GroupPods, reason: "500", podRequests: 4},
		{name: "expired continue restarts the list once", faults: map[string]kubefake.Fault{kubefake.Pods: {ExpireContinue: 1}},
			want: faultyFacts, podRequests: 1 + 1 + 12},
		{name: "expired twice nulls the pod group", faults: map[string]kubefake.Fault{kubefake.Pods: {ExpireContinue: 2}},
			group: cluster.GroupPods, reason: "expired twice", podRequests: 1 + 1 + 1 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := serve(t, faulty, tt.faults)
			begin := time.Now()
			r := cluster.Discover(context.Background(), c, cluster.Options{PageSize: 10, Timeout: callTimeout})
			if d := time.Since(begin); d >= slow {
				t.Errorf("took %v: the timeout did not bound the call", d)
			}
			if !reflect.DeepEqual(r.Facts, tt.want) {
				t.Errorf("facts\n got %s\nwant %s", show(r.Facts), show(tt.want))
			}
			if tt.group == "" {
				if len(r.Notices) != 0 {
					t.Errorf("notices %+v", r.Notices)
				}
			} else if len(r.Notices) != 1 || r.Notices[0].Group != tt.group || !strings.Contains(r.Notices[0].Reason, tt.reason) {
				t.Errorf("want one %s notice mentioning %q, got %+v", tt.group, tt.reason, r.Notices)
			}
			if n := s.Requests(kubefake.Pods); n != tt.podRequests {
				t.Errorf("%d pod requests, want %d", n, tt.podRequests)
			}
			for _, n := range r.Notices {
				if strings.Contains(n.Reason, token) {
					t.Errorf("notice leaks the token: %s", n.Reason)
				}
			}
		})
	}
}

func TestEventsThroughAPI(t *testing.T) {
	ev := func(name, uid, reason string, at time.Time) corev1.Event {
		e := *event(name, "", reason, at, time.Time{}, time.Time{})
		e.InvolvedObject.UID = types.UID(uid)
		return e
	}
	events := []corev1.Event{
		ev("a1", "pa", "Evicted", start.Add(time.Minute)), ev("a2", "pa", "Evicted", start.Add(2*time.Minute)),
		ev("b", "pb", "Evicted", end), ev("c", "pc", "Killing", start.Add(time.Minute)),
		ev("d", "pd", "Evicted", end.Add(time.Second)),
	}
	other := ev("x", "px", "Evicted", start.Add(time.Minute))
	other.Namespace = "other"
	events = append(events, other)

	for _, tt := range []struct {
		name   string
		faults map[string]kubefake.Fault
		want   *int
	}{
		{"evictions in the window, distinct pods, worker namespace only", nil, ptr(2)},
		{"slow events null only evicted", map[string]kubefake.Fault{kubefake.Events: {Delay: slow}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tiny := kubefake.Synthetic{Nodes: 2, WorkerNodes: 1, Pods: 10, Workers: 4, Namespace: ns, LabelKey: labelKey}
			s, c := serve(t, tiny, tt.faults, events...)
			o := cluster.Options{PageSize: 2, Timeout: callTimeout}
			before, err := cluster.TakeSnapshot(context.Background(), c, o)
			if err != nil {
				t.Fatal(err)
			}
			r := cluster.ReadAfterRun(context.Background(), c, o, before, start, end)
			if !reflect.DeepEqual(r.OOM.Evicted, tt.want) || r.OOM.WorkerRestarts == nil || *r.OOM.WorkerRestarts != 0 ||
				r.OOM.WorkerPodsLost == nil || *r.OOM.WorkerPodsLost != 0 {
				t.Errorf("oom %+v", r.OOM)
			}
			if tt.want != nil {
				for _, u := range s.Log() {
					if strings.Contains(u, "/events") && !strings.Contains(u, "fieldSelector=reason%3DEvicted") {
						t.Errorf("event request without the reason selector: %s", u)
					}
				}
				if n := s.Requests(kubefake.Events); n != 3 { // 4 matches, 2 per page, empty last page
					t.Errorf("%d event requests, want 3", n)
				}
			}
		})
	}
}
