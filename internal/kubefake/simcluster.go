package kubefake

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/substrate/density/internal/simrun"
)

// Facts of a simulated cluster's nodes. The simulator models pods and
// cgroups, not machines, so the nodes take the synthetic cluster's shape:
// worker nodes of one instance type, the system node of another.
const (
	SimulatedWorkerType = "n2-standard-4"
	SimulatedSystemType = "e2-standard-8"
	SimulatedWorkerMem  = "16Gi" // limits.memory of every worker pod
)

// SimulatedCluster is the Kubernetes side of a simulated run as the
// export reads it after the run: the simulator's nodes, and its pods still
// alive at the end of the run (worker pods labelled with the pool, their
// ateom container's --max-actors, memory limit and sandbox image).
func SimulatedCluster(tr *simrun.Truth) Config {
	var nodes []corev1.Node
	for k, n := range tr.Nodes {
		node := *Synthetic{WorkerNodes: len(tr.Nodes)}.node(k)
		node.Name, node.UID = n.Instance, types.UID("sim-node-"+n.Instance)
		node.Labels["kubernetes.io/hostname"] = n.Instance
		node.Labels["node.kubernetes.io/instance-type"] = SimulatedWorkerType
		if !n.Worker {
			node.Labels["node.kubernetes.io/instance-type"] = SimulatedSystemType
		}
		nodes = append(nodes, node)
	}
	var pods []corev1.Pod
	for i, p := range tr.Pods {
		if p.Died != 0 && p.Died <= tr.End || p.Born > tr.End {
			continue
		}
		pod := *basePod(i)
		pod.Name, pod.Namespace, pod.UID = p.Name, p.Namespace, types.UID(p.UID)
		pod.Spec.NodeName = p.Node
		c := &pod.Spec.Containers[0]
		c.Name = p.Container
		pod.Status.ContainerStatuses[0].Name = p.Container
		if p.Worker {
			sandbox := "gvisor"
			if p.MicroVM {
				sandbox = "microvm"
			}
			pod.Labels["ate.dev/worker-pool"] = simrun.PoolName
			c.Image = fmt.Sprintf("europe-docker.pkg.dev/substrate/ate/ateom-%s:v1.4.2", sandbox)
			c.Args = []string{"--listen=:8080", fmt.Sprintf("--max-actors=%d", p.Capacity), "--log-level=info"}
			c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(SimulatedWorkerMem)
		}
		pods = append(pods, pod)
	}
	return Config{Pods: Slice(pods...), Nodes: Slice(nodes...)}
}
