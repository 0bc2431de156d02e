package kubefake

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Synthetic is a generated cluster: Nodes nodes of which the first
// WorkerNodes host the Workers live worker pods (worker j on node
// j % WorkerNodes), and Pods pods in all, spread evenly in storage order.
// The other pods are, in turn: a completed (Succeeded) worker-labelled pod
// in the worker namespace, an unlabelled pod in the worker namespace, and
// two worker-labelled pods in another namespace — each must be excluded by
// a selector or the phase filter. Objects are realistic in size (probes,
// env, mounts, conditions, statuses), so decoding costs what it would.
type Synthetic struct {
	Nodes, WorkerNodes int
	Pods, Workers      int
	Namespace          string // worker namespace
	LabelKey           string // worker label key
}

// Node facts of the generated nodes.
const (
	SyntheticNodeCPU    = "3920m"
	SyntheticNodeMemory = "13591700Ki"
	SyntheticKubelet    = "v1.37.2"
)

// IsWorker reports whether pod i is a live worker, and its worker index.
func (s Synthetic) IsWorker(i int) (int, bool) {
	// Exactly Workers indices satisfy this, evenly spread.
	lo, hi := i*s.Workers/s.Pods, (i+1)*s.Workers/s.Pods
	return lo, hi > lo
}

// WorkerMaxActors is the --max-actors of worker j (two pools: 50 and 100).
func WorkerMaxActors(j int) int { return []int{50, 100}[j%2] }

// WorkerSandbox is the sandbox class of worker j's image.
func WorkerSandbox(j int) string { return []string{"gvisor", "microvm"}[j%2] }

// NodeInstanceType is the instance-type label of node k (worker nodes
// alternate two types; the rest are an infrastructure pool).
func (s Synthetic) NodeInstanceType(k int) string {
	if k < s.WorkerNodes {
		return []string{"n2-standard-4", "c3-standard-4"}[k%2]
	}
	return "e2-standard-8"
}

// PodSource generates the pods.
func (s Synthetic) PodSource() Source[corev1.Pod] {
	return Source[corev1.Pod]{Len: s.Pods, At: s.pod}
}

// NodeSource generates the nodes.
func (s Synthetic) NodeSource() Source[corev1.Node] {
	return Source[corev1.Node]{Len: s.Nodes, At: s.node}
}

func nodeName(k int) string { return fmt.Sprintf("node-%05d", k) }

func (s Synthetic) pod(i int) *corev1.Pod {
	j, worker := s.IsWorker(i)
	p := basePod(i)
	if worker {
		p.Namespace = s.Namespace
		p.Labels[s.LabelKey] = "pool-" + WorkerSandbox(j)
		p.Spec.NodeName = nodeName(j % s.WorkerNodes)
		c := &p.Spec.Containers[0]
		c.Name = "ateom"
		c.Image = fmt.Sprintf("registry.example/substrate/ateom-%s:v1.4.2", WorkerSandbox(j))
		c.Args = []string{"--listen=:8080", fmt.Sprintf("--max-actors=%d", WorkerMaxActors(j)), "--log-level=info"}
		c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("16Gi")
		p.Status.ContainerStatuses[0].Name = "ateom"
		return p
	}
	k := i - i*s.Workers/s.Pods // index among non-workers
	p.Spec.NodeName = nodeName(i % s.Nodes)
	switch k % 4 {
	case 0:
		p.Namespace = s.Namespace
		p.Labels[s.LabelKey] = "pool-gvisor"
		p.Status.Phase = corev1.PodSucceeded
	case 1:
		p.Namespace = s.Namespace
	default:
		p.Namespace = "tenant-apps"
		p.Labels[s.LabelKey] = "pool-gvisor"
	}
	return p
}

func basePod(i int) *corev1.Pod {
	name := fmt.Sprintf("pod-%06d", i)
	probe := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		InitialDelaySeconds: 5, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
	started := metav1.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	container := func(n, img string) corev1.Container {
		return corev1.Container{
			Name: n, Image: img,
			Env: []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				{Name: "GOMAXPROCS", Value: "4"}, {Name: "LOG_FORMAT", Value: "json"},
				{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability.svc:4317"},
			},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
				{Name: "scratch", MountPath: "/scratch"},
			},
			LivenessProbe: probe, ReadinessProbe: probe,
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}
	}
	status := func(n, img string, restarts int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name: n, Image: img, ImageID: "registry.example/" + n + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			ContainerID: fmt.Sprintf("containerd://%064d", i), Ready: true, Started: new(true), RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		}
	}
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: started}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)),
			ResourceVersion: fmt.Sprint(1000 + i), CreationTimestamp: started,
			Labels: map[string]string{
				"app.kubernetes.io/name": "ateom", "app.kubernetes.io/part-of": "substrate",
				"pod-template-hash": "7d9f8c6b5", "controller-revision-hash": "ateom-5c7b9d",
			},
			Annotations: map[string]string{
				"prometheus.io/scrape": "true", "prometheus.io/port": "8080",
				"kubectl.kubernetes.io/default-container": "ateom",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "ateom-7d9f8c6b5", UID: "11111111-2222-4333-8444-555555555555"}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				container("app", "registry.example/app:v1"),
				container("log-shipper", "registry.example/fluent-bit:3.1"),
			},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(int64(3607))}},
				}}}},
			},
			RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler", ServiceAccountName: "default",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
			},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{cond(corev1.PodInitialized), cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
			HostIP:     fmt.Sprintf("10.0.%d.%d", i/250%250, i%250), PodIP: fmt.Sprintf("10.8.%d.%d", i/250%250, i%250),
			StartTime: &started, QOSClass: corev1.PodQOSBurstable,
			ContainerStatuses: []corev1.ContainerStatus{
				status("app", "registry.example/app:v1", int32(i%3)),
				status("log-shipper", "registry.example/fluent-bit:3.1", 0),
			},
		},
	}
}

func (s Synthetic) node(k int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: nodeName(k), UID: types.UID(fmt.Sprintf("node-uid-%d", k)),
			Labels: map[string]string{
				"kubernetes.io/hostname": nodeName(k), "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"node.kubernetes.io/instance-type": s.NodeInstanceType(k), "topology.kubernetes.io/zone": "zone-a",
			},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(SyntheticNodeCPU), corev1.ResourceMemory: resource.MustParse(SyntheticNodeMemory),
				corev1.ResourcePods: resource.MustParse("110"),
			},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: SyntheticKubelet, OSImage: "Container-Optimized OS", ContainerRuntimeVersion: "containerd://2.1.0"},
		},
	}
}
