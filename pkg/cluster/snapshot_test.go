package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/substrate/density/pkg/cluster"
)

var (
	t0    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	start = t0
	end   = t0.Add(time.Hour)
)

func snap(pods map[string]cluster.PodState) *cluster.Snapshot {
	return &cluster.Snapshot{Version: 1, Namespace: ns, LabelKey: labelKey, Pods: pods}
}

func cs(name string, restarts int32, last string) cluster.ContainerState {
	return cluster.ContainerState{Name: name, Restarts: restarts, LastTermination: last}
}

func ps(c ...cluster.ContainerState) cluster.PodState {
	return cluster.PodState{Name: "p", Containers: c}
}

func TestOOMFacts(t *testing.T) {
	evictions := &cluster.Evictions{Items: []cluster.Eviction{
		{PodUID: "a", Time: start},                   // at start: in
		{PodUID: "a", Time: start.Add(time.Minute)},  // same pod again: one pod
		{PodUID: "b", Time: end},                     // at end: in
		{PodUID: "c", Time: start.Add(-time.Second)}, // before: out
		{PodUID: "d", Time: end.Add(time.Second)},    // after: out
		{PodUID: "e"}, // no time at all: out
		{PodUID: "f", Time: start.Add(30 * time.Minute)}, // in
	}}
	tests := []struct {
		name          string
		before, after *cluster.Snapshot
		ev            *cluster.Evictions
		want          [4]*int // restarts, oomkilled, evicted, lost
		noticeFields  []string
	}{
		{
			name: "restarts, OOM kills and losses matched by UID",
			before: snap(map[string]cluster.PodState{
				"u1": ps(cs("ateom", 1, ""), cs("proxy", 0, "")),
				"u2": ps(cs("ateom", 2, "OOMKilled")), // OOM before the run, no growth
				"u3": ps(cs("ateom", 0, "")),
				"u4": ps(cs("ateom", 0, "")), // gone after
				"u5": ps(cs("ateom", 5, "")), // gone after
				"u6": ps(cs("ateom", 0, "OOMKilled"), cs("proxy", 0, "")),
			}),
			after: snap(map[string]cluster.PodState{
				"u1": ps(cs("ateom", 3, "OOMKilled"), cs("proxy", 1, "Error")), // +3, OOM pod
				"u2": ps(cs("ateom", 2, "OOMKilled")),                          // +0, not counted
				"u3": ps(cs("ateom", 1, "Error")),                              // +1, not OOM
				"u6": ps(cs("ateom", 0, "OOMKilled"), cs("proxy", 4, "Error")), // +4: proxy restarted, ateom's OOM is old
				"u7": ps(cs("ateom", 9, "OOMKilled")),                          // new pod: not in both reads
			}),
			ev:   evictions,
			want: [4]*int{ptr(8), ptr(1), ptr(3), ptr(2)},
		},
		{
			name:   "a container first seen after the run counts from zero",
			before: snap(map[string]cluster.PodState{"u1": ps()}),
			after:  snap(map[string]cluster.PodState{"u1": ps(cs("ateom", 2, "OOMKilled"))}),
			ev:     &cluster.Evictions{},
			want:   [4]*int{ptr(2), ptr(1), ptr(0), ptr(0)},
		},
		{
			name:   "restart count that shrank counts zero",
			before: snap(map[string]cluster.PodState{"u1": ps(cs("ateom", 5, "")), "u2": ps(cs("ateom", 0, ""))}),
			after:  snap(map[string]cluster.PodState{"u1": ps(cs("ateom", 1, "")), "u2": ps(cs("ateom", 2, ""))}),
			ev:     &cluster.Evictions{},
			want:   [4]*int{ptr(2), ptr(0), ptr(0), ptr(0)},
		},
		{
			name:         "missing before snapshot nulls all four",
			after:        snap(map[string]cluster.PodState{"u1": ps()}),
			ev:           evictions,
			want:         [4]*int{},
			noticeFields: []string{"worker_restarts,worker_oomkilled_pods,evicted,worker_pods_lost"},
		},
		{
			name:         "failed after read nulls the pod counts, keeps evicted",
			before:       snap(map[string]cluster.PodState{"u1": ps()}),
			ev:           evictions,
			want:         [4]*int{nil, nil, ptr(3), nil},
			noticeFields: []string{"worker_restarts,worker_oomkilled_pods,worker_pods_lost"},
		},
		{
			name:         "failed event read nulls evicted only",
			before:       snap(map[string]cluster.PodState{"u1": ps()}),
			after:        snap(map[string]cluster.PodState{}),
			want:         [4]*int{ptr(0), ptr(0), nil, ptr(1)},
			noticeFields: []string{"evicted"},
		},
		{
			name:         "snapshots of different namespaces are not compared",
			before:       &cluster.Snapshot{Version: 1, Namespace: "other", LabelKey: labelKey, Pods: map[string]cluster.PodState{}},
			after:        snap(map[string]cluster.PodState{}),
			ev:           &cluster.Evictions{},
			want:         [4]*int{nil, nil, ptr(0), nil},
			noticeFields: []string{"worker_restarts,worker_oomkilled_pods,worker_pods_lost"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cluster.OOMFacts(tt.before, tt.after, tt.ev, start, end)
			got := [4]*int{r.WorkerRestarts, r.WorkerOOMKilledPods, r.Evicted, r.WorkerPodsLost}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s want %s", ints(got), ints(tt.want))
			}
			var fields []string
			for _, n := range r.Notices {
				if n.Group != cluster.GroupOOM || n.Reason == "" {
					t.Errorf("bad notice %+v", n)
				}
				fields = append(fields, strings.Join(n.Fields, ","))
			}
			if !reflect.DeepEqual(fields, tt.noticeFields) {
				t.Errorf("notice fields %q, want %q", fields, tt.noticeFields)
			}
		})
	}
}

func ints(v [4]*int) string {
	out := make([]string, len(v))
	for i, p := range v {
		out[i] = "nil"
		if p != nil {
			out[i] = fmt.Sprint(*p)
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

func event(name string, uid types.UID, reason string, last, evt, first time.Time) *corev1.Event {
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: string(uid), UID: uid},
		Reason:         reason,
	}
	if !last.IsZero() {
		e.LastTimestamp = metav1.NewTime(last)
	}
	if !evt.IsZero() {
		e.EventTime = metav1.NewMicroTime(evt)
	}
	if !first.IsZero() {
		e.FirstTimestamp = metav1.NewTime(first)
	}
	return e
}

// TestReadAfterRun runs the whole before/after path through the fake
// clientset: snapshot, JSON round trip, mutations during the "run", events.
func TestReadAfterRun(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(
		pod("stay", onNode("n1"), status("ateom", 0, "")),
		pod("oom", onNode("n1"), status("ateom", 1, "Error")),
		pod("evicted", onNode("n1"), status("ateom", 0, "")),
		pod("deleted", onNode("n1"), status("ateom", 7, "")),
		node("n1", "4", "16Gi"),
	)
	before, err := cluster.TakeSnapshot(ctx, c, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Pods) != 4 || before.Pods["uid-deleted"].Containers[0].Restarts != 7 {
		t.Fatalf("before snapshot %+v", before)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(before); err != nil {
		t.Fatal(err)
	}
	before, err = cluster.DecodeSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}

	// The run: "oom" restarts twice and is OOMKilled; "stay" restarts once
	// for another reason; "evicted" fails; "deleted" is gone; "new" appears.
	pods := c.CoreV1().Pods(ns)
	update := func(p *corev1.Pod) {
		if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(pod("oom", onNode("n1"), status("ateom", 3, "OOMKilled")))
	update(pod("stay", onNode("n1"), status("ateom", 1, "Error")))
	update(pod("evicted", onNode("n1"), phase(corev1.PodFailed), status("ateom", 0, "")))
	if err := pods.Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, pod("new", onNode("n1"), status("ateom", 4, "OOMKilled")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	events := []runtime.Object{
		event("e1", "uid-evicted", "Evicted", start.Add(10*time.Minute), time.Time{}, start.Add(-time.Hour)), // lastTimestamp wins: in
		event("e2", "uid-x", "Evicted", time.Time{}, end, time.Time{}),                                       // eventTime: in
		event("e3", "uid-y", "Evicted", time.Time{}, time.Time{}, start.Add(time.Second)),                    // firstTimestamp: in
		event("e4", "uid-z", "Evicted", start.Add(-time.Second), end.Add(-time.Minute), time.Time{}),         // lastTimestamp before start: out
		event("e5", "uid-w", "Killing", start.Add(time.Minute), time.Time{}, time.Time{}),                    // other reason: out
	}
	for _, e := range events {
		if _, err := c.CoreV1().Events(ns).Create(ctx, e.(*corev1.Event), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	r := cluster.ReadAfterRun(ctx, c, cluster.Options{}, before, start, end)
	got := [4]*int{r.OOM.WorkerRestarts, r.OOM.WorkerOOMKilledPods, r.OOM.Evicted, r.OOM.WorkerPodsLost}
	// restarts: oom +2, stay +1 = 3; OOM pods: oom; evicted: uid-evicted,
	// uid-x, uid-y; lost: evicted (Failed) and deleted.
	want := [4]*int{ptr(3), ptr(1), ptr(3), ptr(2)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("oom facts %s, want %s (notices %+v)", ints(got), ints(want), r.OOM.Notices)
	}
	if *r.Facts.WorkerPodCount != 3 {
		t.Errorf("after: %d worker pods, want 3", *r.Facts.WorkerPodCount)
	}

	// Events denied: evicted null with the server's reason, the rest intact.
	c.PrependReactor("list", "events", forbidden("list", "events"))
	r = cluster.ReadAfterRun(ctx, c, cluster.Options{}, before, start, end)
	if r.OOM.Evicted != nil || r.OOM.WorkerRestarts == nil || len(r.OOM.Notices) != 1 ||
		!strings.Contains(r.OOM.Notices[0].Reason, "Forbidden") {
		t.Errorf("events denied: evicted=%v restarts=%v notices=%+v", r.OOM.Evicted, r.OOM.WorkerRestarts, r.OOM.Notices)
	}

	// No before snapshot: no event call, all four null.
	r = cluster.ReadAfterRun(ctx, c, cluster.Options{}, nil, start, end)
	if r.OOM.WorkerRestarts != nil || r.OOM.Evicted != nil || len(r.OOM.Notices) != 1 ||
		!strings.Contains(r.OOM.Notices[0].Reason, cluster.SnapshotFile) {
		t.Errorf("no before: %+v", r.OOM)
	}
}

func TestDecodeSnapshotRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not json":      `{`,
		"wrong version": `{"version": 2, "pods": {}}`,
		"no pods":       `{"version": 1}`,
	} {
		if _, err := cluster.DecodeSnapshot(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
