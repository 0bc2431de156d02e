package cluster

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/percentile"
)

// DefaultMaxActors is the worker's own default when --max-actors is absent.
const DefaultMaxActors = 1000

const gib = 1 << 30

var sandboxRE = regexp.MustCompile(`ateom-(gvisor|microvm)`)

// workerPods is the reduced result of the worker pod list.
type workerPods struct {
	snapshot *Snapshot
	nodes    map[string]struct{} // spec.nodeName of live worker pods
	capacity set[int64]
	memoryGB set[float64]
	sandbox  set[string]
	// containerErr is the first malformed container fact; it nulls only
	// the three container facts.
	containerErr error
	containers   int // worker containers seen
}

// emptyNotices explains container facts that are null because no value
// was seen (an empty set is null, and null deserves a reason).
func (w *workerPods) emptyNotices(o Options) []Notice {
	if w.containers == 0 {
		return []Notice{o.notice(GroupContainers, containerFields,
			fmt.Sprintf("no live worker pod has a container named %s", o.WorkerContainer))}
	}
	var n []Notice
	if len(w.memoryGB.m) == 0 {
		n = append(n, o.notice(GroupContainers, []string{"worker_memory_limit_gb"},
			fmt.Sprintf("no %s container sets resources.limits.memory", o.WorkerContainer)))
	}
	if len(w.sandbox.m) == 0 {
		n = append(n, o.notice(GroupContainers, []string{"sandbox_class"},
			fmt.Sprintf("no %s container image matches %s", o.WorkerContainer, sandboxRE)))
	}
	return n
}

// livePhase is the spec's phase filter.
func livePhase(p corev1.PodPhase) bool {
	return p == corev1.PodRunning || p == corev1.PodPending
}

// listWorkerPods lists the live worker pods page by page, keeping per pod
// only a PodState and folding the container facts into sets on the fly.
func listWorkerPods(ctx context.Context, c kubernetes.Interface, o Options) (*workerPods, error) {
	var w *workerPods
	reset := func() {
		w = &workerPods{
			snapshot: &Snapshot{
				Version:   snapshotVersion,
				Namespace: o.WorkerNamespace,
				LabelKey:  o.WorkerLabelKey,
				Pods:      map[string]PodState{},
			},
			nodes: map[string]struct{}{},
		}
	}
	reset()
	base := metav1.ListOptions{
		LabelSelector: o.WorkerLabelKey,
		// Server-side pre-filter (finished pods can be most of a busy
		// namespace); the exact phase filter below is authoritative.
		FieldSelector: "status.phase!=Succeeded,status.phase!=Failed",
	}
	page := func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		l, err := c.CoreV1().Pods(o.WorkerNamespace).List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			w.add(&l.Items[i], o.WorkerContainer)
		}
		return l.Continue, nil
	}
	if err := paginate(ctx, o, base, page, reset); err != nil {
		return nil, describe(fmt.Sprintf("listing worker pods (namespace %s, label %s)", o.WorkerNamespace, o.WorkerLabelKey), err)
	}
	w.snapshot.TakenAt = time.Now().UTC()
	return w, nil
}

func (w *workerPods) add(p *corev1.Pod, container string) {
	if !livePhase(p.Status.Phase) {
		return
	}
	if _, dup := w.snapshot.Pods[string(p.UID)]; dup {
		return
	}
	w.snapshot.Pods[string(p.UID)] = podState(p)
	if p.Spec.NodeName != "" {
		w.nodes[p.Spec.NodeName] = struct{}{}
	}
	for i := range p.Spec.Containers {
		ct := &p.Spec.Containers[i]
		if ct.Name != container {
			continue
		}
		w.containers++
		n, err := maxActors(ct.Args)
		if err != nil && w.containerErr == nil {
			w.containerErr = fmt.Errorf("pod %s container %s: %w", p.Name, ct.Name, err)
		}
		if err == nil {
			w.capacity.add(n)
		}
		if q, ok := ct.Resources.Limits[corev1.ResourceMemory]; ok {
			w.memoryGB.add(roundGiB(q.Value()))
		}
		if m := sandboxRE.FindStringSubmatch(ct.Image); m != nil {
			w.sandbox.add(m[1])
		}
	}
}

// maxActors reads the first --max-actors=N or --max-actors N in args
// (args only, not command, like the worker's flag parser sees them after
// the entrypoint). Absent → DefaultMaxActors. N must be a non-negative
// base-10 integer.
func maxActors(args []string) (int64, error) {
	const flag = "--max-actors"
	for i, a := range args {
		var v string
		switch {
		case a == flag:
			if i+1 >= len(args) {
				return 0, fmt.Errorf("%s has no value", flag)
			}
			v = args[i+1]
		case strings.HasPrefix(a, flag+"="):
			v = strings.TrimPrefix(a, flag+"=")
		default:
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("malformed %s value %q", flag, v)
		}
		return n, nil
	}
	return DefaultMaxActors, nil
}

// set is a small distinct-value set.
type set[T cmp.Ordered] struct{ m map[T]struct{} }

func (s *set[T]) add(v T) {
	if s.m == nil {
		s.m = map[T]struct{}{}
	}
	s.m[v] = struct{}{}
}

// sorted returns the values in ascending order, nil when empty (null).
func (s *set[T]) sorted() []T {
	if len(s.m) == 0 {
		return nil
	}
	out := make([]T, 0, len(s.m))
	for v := range s.m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// roundGiB converts bytes to GiB rounded to 2 decimals.
func roundGiB(bytes int64) float64 {
	return percentile.Round(float64(bytes)/gib, 2)
}
