// Package clusterfacts holds the cluster facts of cluster-facts.md as plain
// values: what pkg/cluster reads from Kubernetes and pkg/frontier prints in
// a trial_summary row. It imports nothing, so the pure packages share this
// one type without depending on client-go.
package clusterfacts

// Facts are the cluster facts of a trial_summary row, typed. A nil pointer
// or nil slice is null (unmeasured); slices are never empty, they are the
// sorted distinct values that the row prints comma-joined. Floats are
// already rounded to 2 decimals.
type Facts struct {
	MachineType         []string  // distinct node.kubernetes.io/instance-type, sorted
	NodeCount           *int      // worker nodes found in the node list
	AllocatableCores    *float64  // sum of allocatable cpu over worker nodes, round 2
	AllocatableRAMGB    *float64  // sum of allocatable memory in GiB, round 2
	WorkerPodCount      *int      // live (Running/Pending) worker pods
	KubernetesVersion   []string  // distinct kubeletVersion, sorted
	WorkerActorCapacity []int64   // distinct --max-actors, numerically sorted
	WorkerMemoryLimitGB []float64 // distinct limits.memory in GiB (round 2), sorted
	SandboxClass        []string  // distinct gvisor/microvm, sorted
}

// Keys are the facts' trial_summary keys in row order, one per Facts field
// (a fresh slice each call).
func Keys() []string {
	return []string{"machine_type", "node_count", "allocatable_cores", "allocatable_ram_gb",
		"worker_pod_count", "kubernetes_version", "worker_actor_capacity",
		"worker_memory_limit_gb", "sandbox_class"}
}
