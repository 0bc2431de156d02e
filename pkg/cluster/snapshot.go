package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// SnapshotFile is the run-directory file holding the "before" snapshot.
const SnapshotFile = "cluster_before.json"

const snapshotVersion = 1

// Snapshot is the live worker pods at one moment, by UID: what the OOM,
// restart and loss counts compare before and after a run. It is what
// `density export --before` writes to cluster_before.json.
type Snapshot struct {
	Version   int                 `json:"version"`
	TakenAt   time.Time           `json:"taken_at"`
	Namespace string              `json:"namespace"`
	LabelKey  string              `json:"label_key"`
	Pods      map[string]PodState `json:"pods"` // by metadata.uid
}

// PodState is all that is kept of a worker pod.
type PodState struct {
	Name       string           `json:"name"`
	Node       string           `json:"node,omitempty"`
	Phase      string           `json:"phase"`
	Containers []ContainerState `json:"containers,omitempty"`
}

// ContainerState is one container status (regular and init containers,
// since native sidecars restart too).
type ContainerState struct {
	Name     string `json:"name"`
	Restarts int32  `json:"restarts"`
	// LastTermination is lastState.terminated.reason ("" when none).
	LastTermination string `json:"last_termination,omitempty"`
}

func podState(p *corev1.Pod) PodState {
	s := PodState{Name: p.Name, Node: p.Spec.NodeName, Phase: string(p.Status.Phase)}
	n := len(p.Status.InitContainerStatuses) + len(p.Status.ContainerStatuses)
	if n > 0 {
		s.Containers = make([]ContainerState, 0, n)
	}
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			cs := &list[i]
			c := ContainerState{Name: cs.Name, Restarts: cs.RestartCount}
			if t := cs.LastTerminationState.Terminated; t != nil {
				c.LastTermination = t.Reason
			}
			s.Containers = append(s.Containers, c)
		}
	}
	return s
}

func (s PodState) restarts() int64 {
	var n int64
	for _, c := range s.Containers {
		n += int64(c.Restarts)
	}
	return n
}

// TakeSnapshot lists the live worker pods (for `density export --before`).
func TakeSnapshot(ctx context.Context, c kubernetes.Interface, o Options) (*Snapshot, error) {
	o = o.withDefaults()
	if c == nil {
		return nil, ErrOff
	}
	w, err := listWorkerPods(ctx, c, o)
	if err != nil {
		return nil, err
	}
	return w.snapshot, nil
}

// DecodeSnapshot reads a snapshot written as JSON.
func DecodeSnapshot(r io.Reader) (*Snapshot, error) {
	var s Snapshot
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding cluster snapshot: %w", err)
	}
	if s.Version != snapshotVersion {
		return nil, fmt.Errorf("decoding cluster snapshot: version %d, want %d", s.Version, snapshotVersion)
	}
	if s.Pods == nil {
		return nil, errors.New("decoding cluster snapshot: no pods map")
	}
	return &s, nil
}

// OOM are the four Kubernetes counts of server_summary's oom_events.
// A nil field is null; Notices say why.
type OOM struct {
	WorkerRestarts      *int
	WorkerOOMKilledPods *int
	Evicted             *int
	WorkerPodsLost      *int
	Notices             []Notice
}

// oomFacts compares the before and after snapshots and counts evictions in
// [start, end]. A nil before (no cluster_before.json) nulls all four; a nil
// after (pod list failed) nulls the three pod counts; nil evictions (event
// list failed) null evicted. Pods are matched by UID.
//
//   - worker_restarts: sum over pods present both times of the growth of
//     their summed container restart counts (a pod's count never shrinks;
//     a negative difference, e.g. a kubelet that lost its state, counts 0).
//   - worker_oomkilled_pods: pods present both times with a container whose
//     restart count grew and whose last termination reason after the run is
//     OOMKilled. Per container, so an old OOM kill of one container does
//     not claim another container's unrelated restart.
//   - worker_pods_lost: pods live before and not live after (deleted,
//     evicted and Failed, completed), for any reason.
//   - evicted: distinct pod UIDs with an Evicted event in the window.
//
// evErr is why the evictions are missing (nil: read).
func oomFacts(before, after *Snapshot, ev *Evictions, evErr error, start, end time.Time) OOM {
	var r OOM
	podCounts := []string{"worker_restarts", "worker_oomkilled_pods", "worker_pods_lost"}
	switch {
	case before == nil:
		r.Notices = append(r.Notices, Notice{Group: GroupOOM, Fields: oomFields,
			Reason: "no \"before\" snapshot (" + SnapshotFile + "): run `density export --before` before the run"})
		return r
	case after == nil:
		r.Notices = append(r.Notices, Notice{Group: GroupOOM, Fields: podCounts,
			Reason: "the worker pods could not be listed after the run"})
	case before.Namespace != after.Namespace || before.LabelKey != after.LabelKey:
		r.Notices = append(r.Notices, Notice{Group: GroupOOM, Fields: podCounts,
			Reason: fmt.Sprintf("the before snapshot selects %s/%s but the after read %s/%s",
				before.Namespace, before.LabelKey, after.Namespace, after.LabelKey)})
	default:
		var restarts int64
		oomKilled, lost := 0, 0
		for uid, b := range before.Pods {
			a, ok := after.Pods[uid]
			if !ok {
				lost++
				continue
			}
			if d := a.restarts() - b.restarts(); d > 0 {
				restarts += d
			}
			if oomGrew(b, a) {
				oomKilled++
			}
		}
		r.WorkerRestarts = ptr(int(restarts))
		r.WorkerOOMKilledPods = ptr(oomKilled)
		r.WorkerPodsLost = ptr(lost)
	}
	if ev == nil {
		reason := "the worker namespace's events could not be listed"
		if evErr != nil {
			reason = evErr.Error()
		}
		r.Notices = append(r.Notices, Notice{Group: GroupOOM, Fields: []string{"evicted"}, Reason: reason})
	} else {
		r.Evicted = ptr(ev.Count(start, end))
	}
	return r
}

func oomGrew(before, after PodState) bool {
	for _, a := range after.Containers {
		if a.LastTermination != "OOMKilled" {
			continue
		}
		var was int32
		for _, b := range before.Containers {
			if b.Name == a.Name {
				was = b.Restarts
				break
			}
		}
		if a.Restarts > was {
			return true
		}
	}
	return false
}

// AfterRun is what the export reads after a run.
type AfterRun struct {
	Result
	OOM OOM
}

// ReadAfterRun discovers the facts and computes the OOM counts against
// before (nil when there is no before snapshot). A nil client makes no call.
func ReadAfterRun(ctx context.Context, c kubernetes.Interface, o Options, before *Snapshot, start, end time.Time) AfterRun {
	o = o.withDefaults()
	r := AfterRun{Result: Discover(ctx, c, o)}
	if c == nil {
		r.OOM.Notices = []Notice{{Group: GroupOOM, Fields: oomFields, Reason: ErrOff.Error()}}
		return r
	}
	var (
		ev    *Evictions
		evErr error
	)
	if before != nil { // without it all four are null anyway
		ev, evErr = ListEvictions(ctx, c, o)
	}
	r.OOM = oomFacts(before, r.Pods, ev, evErr, start, end)
	for _, n := range r.OOM.Notices {
		o.notice(n.Group, n.Fields, n.Reason) // log once
	}
	return r
}
