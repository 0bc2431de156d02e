package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/percentile"
)

// InstanceTypeLabel is the well-known node label read for machine_type.
const InstanceTypeLabel = "node.kubernetes.io/instance-type"

type nodeResult struct {
	count        *int
	cores, ramGB *float64
	machineTypes []string
	versions     []string
}

// nodeFacts lists nodes and sums over the worker nodes only. Without
// worker nodes the answer (0, 0.0, 0.0, null, null) is known without a
// call, so none is made. A worker pod's node that is missing from the list
// (deleted meanwhile) is not counted: the sums and the count always describe
// the same nodes.
func nodeFacts(ctx context.Context, c kubernetes.Interface, o Options, workerNodes map[string]struct{}) (nodeResult, []Notice) {
	if len(workerNodes) == 0 {
		return nodeResult{count: ptr(0), cores: ptr(0.0), ramGB: ptr(0.0)},
			[]Notice{o.notice(GroupNodes, []string{"machine_type", "kubernetes_version"}, "no live worker pod is on a node")}
	}
	var (
		count                  int
		milliCPU, memBytes     int64
		noCPU, noMem           int
		machineTypes, versions set[string]
	)
	reset := func() {
		count, milliCPU, memBytes, noCPU, noMem = 0, 0, 0, 0, 0
		machineTypes, versions = set[string]{}, set[string]{}
	}
	page := func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		l, err := c.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			n := &l.Items[i]
			if _, ok := workerNodes[n.Name]; !ok {
				continue
			}
			count++
			if q, ok := n.Status.Allocatable[corev1.ResourceCPU]; ok {
				milliCPU += q.MilliValue()
			} else {
				noCPU++
			}
			if q, ok := n.Status.Allocatable[corev1.ResourceMemory]; ok {
				memBytes += q.Value()
			} else {
				noMem++
			}
			if t := n.Labels[InstanceTypeLabel]; t != "" {
				machineTypes.add(t)
			}
			if v := n.Status.NodeInfo.KubeletVersion; v != "" {
				versions.add(v)
			}
		}
		return l.Continue, nil
	}
	if err := paginate(ctx, o, metav1.ListOptions{}, page, reset); err != nil {
		return nodeResult{}, []Notice{o.notice(GroupNodes, nodeFields, describe("listing nodes", err).Error())}
	}
	r := nodeResult{
		count:        ptr(count),
		machineTypes: machineTypes.sorted(),
		versions:     versions.sorted(),
	}
	var notices []Notice
	if r.machineTypes == nil {
		notices = append(notices, o.notice(GroupNodes, []string{"machine_type"},
			fmt.Sprintf("no worker node has the label %s", InstanceTypeLabel)))
	}
	if r.versions == nil {
		notices = append(notices, o.notice(GroupNodes, []string{"kubernetes_version"},
			"no worker node reports status.nodeInfo.kubeletVersion"))
	}
	// A node without an allocatable figure is unreadable, not zero.
	if noCPU == 0 {
		r.cores = ptr(percentile.Round(float64(milliCPU)/1000, 2))
	} else {
		notices = append(notices, o.notice(GroupNodes, []string{"allocatable_cores"},
			fmt.Sprintf("%d worker node(s) report no allocatable cpu", noCPU)))
	}
	if noMem == 0 {
		r.ramGB = ptr(roundGiB(memBytes))
	} else {
		notices = append(notices, o.notice(GroupNodes, []string{"allocatable_ram_gb"},
			fmt.Sprintf("%d worker node(s) report no allocatable memory", noMem)))
	}
	return r, notices
}
