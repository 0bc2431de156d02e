package harvest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/substrate/density/pkg/promql"
)

// OOM is the oom_events block. Node and Pod come from cAdvisor; the other
// four from the Kubernetes API (cluster-facts.md), set by the caller with
// SetKubernetes after the harvest.
type OOM struct {
	Node, Pod           *int64
	WorkerRestarts      *int64
	WorkerOOMKilledPods *int64
	Evicted             *int64
	WorkerPodsLost      *int64
}

// oomKeys are the block's keys in output order.
var oomKeys = [6]string{"node", "pod", "worker_restarts", "worker_oomkilled_pods", "evicted", "worker_pods_lost"}

// OOMKeys are the block's keys in output order (a fresh slice each call).
func OOMKeys() []string { return slices.Clone(oomKeys[:]) }

// Values returns the fields in OOMKeys order.
func (o OOM) Values() [6]*int64 {
	return [6]*int64{o.Node, o.Pod, o.WorkerRestarts, o.WorkerOOMKilledPods, o.Evicted, o.WorkerPodsLost}
}

// kubernetesPendingReason marks the Kubernetes fields until SetKubernetes.
const kubernetesPendingReason = "null: Kubernetes facts were not read for this harvest"

func (o OOM) clusterPending() []Notice {
	var n []Notice
	for _, k := range oomKeys[2:] {
		n = append(n, Notice{Block: BlockOOM, Field: k, Reason: kubernetesPendingReason})
	}
	return n
}

// KubernetesOOM holds the four Kubernetes-derived fields; a nil field is
// unknown and Reason says why (e.g. "discovery is off").
type KubernetesOOM struct {
	WorkerRestarts, WorkerOOMKilledPods, Evicted, WorkerPodsLost *int64
	Reason                                                       string
}

// SetKubernetes sets the Kubernetes-derived oom_events fields and replaces
// the placeholder notices Harvest left for them with one per field still nil.
func (r *Result) SetKubernetes(k KubernetesOOM) {
	r.OOM.WorkerRestarts, r.OOM.WorkerOOMKilledPods, r.OOM.Evicted, r.OOM.WorkerPodsLost =
		k.WorkerRestarts, k.WorkerOOMKilledPods, k.Evicted, k.WorkerPodsLost
	kept := r.Notices[:0:0]
	for _, n := range r.Notices {
		if n.Block == BlockOOM && n.Reason == kubernetesPendingReason {
			continue
		}
		kept = append(kept, n)
	}
	reason := k.Reason
	if reason == "" {
		reason = "unknown"
	}
	vals := r.OOM.Values()
	for i, k := range oomKeys {
		if i >= 2 && vals[i] == nil {
			kept = append(kept, Notice{Block: BlockOOM, Field: k, Reason: "null: " + reason})
		}
	}
	r.Notices = kept
}

// OOMNodeSelector and OOMPodSelector are the cAdvisor OOM counters.
const OOMNodeSelector = `container_oom_events_total{id="/"}`

// OOMPodSelector selects the worker pods' OOM counters (pod- and container-level).
func OOMPodSelector(sel Selectors) string {
	return "container_oom_events_total{namespace=" + quote(sel.WorkerNamespace) + ", pod=~" + quote(sel.WorkerPodRegex) + "}"
}

// LiveInstancesQuery lists, per step, the instances (nodes) hosting a live
// worker pod: the LIVE expression of working_set counted by instance. Read
// as a range over the run, the union of its series' instances is the set of
// nodes whose global OOM kills count toward oom_events.node; this reuses the
// very definition of "live worker" the node working set and node PSI use.
func LiveInstancesQuery(sel Selectors) string {
	return "count by (instance) (" + liveExpr(sel) + ")"
}

// HarvestOOM reads the cAdvisor part of oom_events over [Start, End]; the
// Kubernetes fields stay nil with a notice until SetKubernetes.
func HarvestOOM(ctx context.Context, c *promql.Client, p Params) (OOM, []Notice) {
	var (
		node, pod growthRead
		live      rangeRead
		wg        sync.WaitGroup
	)
	growth := func(sel string) growthRead {
		g, err := c.WindowGrowth(ctx, sel, p.Start, p.End)
		if err != nil {
			err = fmt.Errorf("window growth of %s over (%d, %d]: %w", sel, p.Start, p.End, err)
		}
		return growthRead{sel: sel, g: g, err: err}
	}
	wg.Go(func() { node = growth(OOMNodeSelector) })
	wg.Go(func() { pod = growth(OOMPodSelector(p.Sel)) })
	wg.Go(func() { live = readRange(ctx, c, LiveInstancesQuery(p.Sel), p.Start, p.End) })
	wg.Wait()

	var out OOM
	var notices []Notice
	switch {
	case node.err != nil:
		notices = append(notices, failed(BlockOOM, "node", node.err))
	case len(node.g.Series) == 0:
		notices = append(notices, absent(BlockOOM, "node", OOMNodeSelector))
	case live.err != nil:
		notices = append(notices, failed(BlockOOM, "node", live.err))
	case len(live.series) == 0:
		notices = append(notices, Notice{Block: BlockOOM, Field: "node",
			Reason: "null: no node hosted a live worker pod during the run (" + LiveInstancesQuery(p.Sel) + " is empty)"})
	default:
		hosts := map[string]struct{}{}
		for _, s := range live.series {
			if len(s.Samples) > 0 {
				hosts[s.Labels["instance"]] = struct{}{}
			}
		}
		sum := 0.0
		for _, s := range node.g.Series {
			if _, ok := hosts[s.Labels["instance"]]; ok {
				sum += s.Growth
			}
		}
		out.Node = roundInt(&sum)
	}
	switch {
	case pod.err != nil:
		notices = append(notices, failed(BlockOOM, "pod", pod.err))
	case len(pod.g.Series) == 0:
		notices = append(notices, absent(BlockOOM, "pod", OOMPodSelector(p.Sel)))
	default:
		sum := 0.0
		for _, s := range pod.g.Series {
			sum += s.Growth
		}
		out.Pod = roundInt(&sum)
	}
	for _, n := range []struct {
		field string
		g     growthRead
	}{{"node", node}, {"pod", pod}} {
		if n.g.err == nil && n.g.g.Restarted > 0 {
			notices = append(notices, Notice{Block: BlockOOM, Field: n.field,
				Reason: fmt.Sprintf("%d series restarted during the run; counted per series across the restart", n.g.g.Restarted)})
		}
	}
	notices = append(notices, out.clusterPending()...)
	return out, notices
}
