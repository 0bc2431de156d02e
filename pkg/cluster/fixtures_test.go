package cluster_test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	ns       = "benchmark-workloads"
	labelKey = "ate.dev/worker-pool"
)

// pod builds a pod; mutate with the option funcs.
func pod(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name),
			Labels: map[string]string{labelKey: "pool-a"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ateom", Image: "registry.example/ateom-gvisor:v1"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func onNode(n string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func phase(ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}

func inNamespace(n string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Namespace = n } }

func noWorkerLabel(p *corev1.Pod) { p.Labels = map[string]string{"app": "other"} }

func args(a ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Args = a }
}

func command(c ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Command = c }
}

func image(i string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.Containers[0].Image = i } }

func memLimit(q string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
	}
}

func sidecar(name string, a ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: name, Image: "registry.example/ateom-microvm-sidecar:v1", Args: a,
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		})
	}
}

func noAteom(p *corev1.Pod) { p.Spec.Containers[0].Name = "app" }

// status sets container statuses: name, restarts, last termination reason.
func status(name string, restarts int32, lastReason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		cs := corev1.ContainerStatus{Name: name, RestartCount: restarts}
		if lastReason != "" {
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: lastReason, ExitCode: 137}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
	}
}

func node(name, cpu, mem string, opts ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"node.kubernetes.io/instance-type": "n2-standard-4",
		}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{},
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.37.2"},
		},
	}
	if cpu != "" {
		n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		n.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func instanceType(t string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		if t == "" {
			delete(n.Labels, "node.kubernetes.io/instance-type")
			return
		}
		n.Labels["node.kubernetes.io/instance-type"] = t
	}
}

func kubelet(v string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = v }
}

func ptr[T any](v T) *T { return &v }
