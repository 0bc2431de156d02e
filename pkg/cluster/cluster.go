// Package cluster reads the Kubernetes facts of cluster-facts.md with
// client-go: the worker pods, the nodes they run on, the container facts
// of the worker container, and the before/after snapshot behind the OOM,
// restart and eviction counts.
//
// Every value is nullable. Facts fall into groups (GroupPods,
// GroupContainers, GroupNodes, GroupOOM) that fail independently: a failed
// read nulls its group, records one Notice with the reason, and leaves the
// other groups intact. Nothing is ever defaulted to stand in for a failed
// read.
//
// Memory: pods and nodes are listed page by page (Options.PageSize) and each
// page is reduced at once to the few fields used (PodState, aggregated
// container and node facts), so memory grows with the fields kept, not with
// whole objects.
//
// The facts describe the cluster at the moment they are read. The export
// reads them once, after the run: a cluster that autoscaled mid-run is
// measured at its final size.
package cluster

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/harvest"
)

// Options name the worker pods and bound the calls. Zero fields take the
// defaults of DefaultOptions.
type Options struct {
	// WorkerNamespace is where worker pods (and their events) live.
	WorkerNamespace string
	// WorkerLabelKey selects worker pods: the label key exists.
	WorkerLabelKey string
	// WorkerContainer is the container whose args, limits and image give
	// the container facts.
	WorkerContainer string
	// PageSize is the list limit per request.
	PageSize int64
	// Timeout bounds each request (each page of a list), default 5 s.
	Timeout time.Duration
}

// DefaultOptions are the spec's defaults; the worker namespace and
// container are harvest's default selectors.
func DefaultOptions() Options {
	sel := harvest.DefaultSelectors()
	return Options{
		WorkerNamespace: sel.WorkerNamespace,
		WorkerLabelKey:  "ate.dev/worker-pool",
		WorkerContainer: sel.WorkerContainer,
		PageSize:        500,
		Timeout:         DefaultTimeout,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.WorkerNamespace == "" {
		o.WorkerNamespace = d.WorkerNamespace
	}
	if o.WorkerLabelKey == "" {
		o.WorkerLabelKey = d.WorkerLabelKey
	}
	if o.WorkerContainer == "" {
		o.WorkerContainer = d.WorkerContainer
	}
	if o.PageSize <= 0 {
		o.PageSize = d.PageSize
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	return o
}

// Groups of facts that fail together.
const (
	// GroupAccess: discovery switched off or no client (every fact).
	GroupAccess = "cluster"
	// GroupPods: the worker pod list; its failure nulls every fact, since
	// all are scoped to the worker pods.
	GroupPods = "pods"
	// GroupContainers: worker_actor_capacity, worker_memory_limit_gb,
	// sandbox_class.
	GroupContainers = "containers"
	// GroupNodes: node_count, allocatable_cores, allocatable_ram_gb,
	// machine_type, kubernetes_version.
	GroupNodes = "nodes"
	// GroupOOM: worker_restarts, worker_oomkilled_pods, evicted,
	// worker_pods_lost.
	GroupOOM = "oom"
)

// Fact names as they appear in trial_summary / server_summary.
var (
	containerFields = []string{"worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class"}
	nodeFields      = []string{"node_count", "allocatable_cores", "allocatable_ram_gb", "machine_type", "kubernetes_version"}
	oomFields       = harvest.OOMKeys()[2:] // the Kubernetes half of the oom_events block
)

// Notice says why some facts are null. Reasons never contain credentials.
type Notice struct {
	Group  string   `json:"group"`
	Fields []string `json:"fields"`
	Reason string   `json:"reason"`
}

// Result is one discovery: the facts, the live worker pods as read (usable
// as the "after" snapshot; nil when the pod list failed) and the notices.
type Result struct {
	Facts   clusterfacts.Facts
	Pods    *Snapshot
	Notices []Notice
}

// Discover reads the worker pods and their nodes. A nil client (discovery
// off) makes no call and returns every fact null with one notice.
func Discover(ctx context.Context, c kubernetes.Interface, o Options) Result {
	o = o.withDefaults()
	var r Result
	if c == nil {
		r.Notices = append(r.Notices, o.notice(GroupAccess, allFacts(), ErrOff.Error()))
		return r
	}
	pods, err := listWorkerPods(ctx, c, o)
	if err != nil {
		r.Notices = append(r.Notices, o.notice(GroupPods, allFacts(), err.Error()))
		return r
	}
	r.Pods = pods.snapshot
	r.Facts.WorkerPodCount = ptr(len(pods.snapshot.Pods))
	if pods.containerErr != nil {
		r.Notices = append(r.Notices, o.notice(GroupContainers, containerFields, pods.containerErr.Error()))
	} else {
		r.Facts.WorkerActorCapacity = pods.capacity.sorted()
		r.Facts.WorkerMemoryLimitGB = pods.memoryGB.sorted()
		r.Facts.SandboxClass = pods.sandbox.sorted()
		r.Notices = append(r.Notices, pods.emptyNotices(o)...)
	}
	nf, notices := nodeFacts(ctx, c, o, pods.nodes)
	r.Notices = append(r.Notices, notices...)
	r.Facts.NodeCount = nf.count
	r.Facts.AllocatableCores = nf.cores
	r.Facts.AllocatableRAMGB = nf.ramGB
	r.Facts.MachineType = nf.machineTypes
	r.Facts.KubernetesVersion = nf.versions
	return r
}

// allFacts lists every discovery fact in trial_summary order.
func allFacts() []string { return clusterfacts.Keys() }

// notice builds a Notice.
func (o Options) notice(group string, fields []string, reason string) Notice {
	return Notice{Group: group, Fields: append([]string(nil), fields...), Reason: reason}
}

func ptr[T any](v T) *T { return &v }
