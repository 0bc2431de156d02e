package cluster_test

// Discovery against a real kube-apiserver v1.37 (internal/kubetest): the
// project's RBAC manifest is applied as shipped and every read runs as its
// limited service account, so the facts, the denials and the pagination are
// the API server's own, not a fake's.
//
// The cluster is seeded by hand; the expected values below are worked out
// from the seed, independently of the code under test:
//
//	worker-a, worker-b  3920m / 13591700Ki  n2-standard-4   v1.37.2
//	worker-c            3920m / 13591700Ki  n2d-standard-4  v1.36.5
//	worker-d (no pods)  8     / 32Gi        c3-standard-8   v1.38.0  -> not a worker node
//	infra-1             16    / 64Gi        e2-highmem-16   v1.35.0  -> only non-live or non-worker pods
//
//	w-1 worker-a Running  --max-actors=50      ateom-gvisor   16Gi  (+ sidecar "metrics" --max-actors=7, microvm image: ignored)
//	w-2 worker-b Running  --max-actors 50      ateom-gvisor   17179869184
//	w-3 worker-c Pending  (none: 1000)         ateom-microvm  no limit
//	w-4 (none)   Pending  --max-actors=50      ateom-gvisor   16Gi
//	w-5 infra-1  Failed/Evicted, w-6 infra-1 Succeeded, n-1 infra-1 unlabelled,
//	other-ns/w-x infra-1 labelled: all excluded
//
// so node_count 3, cores 3*3.92 = 11.76, RAM 3*13591700 KiB = 38.886 GiB -> 38.89,
// machine types n2-standard-4,n2d-standard-4, versions v1.36.5,v1.37.2, 4 pods,
// capacity 50,1000, memory 16.0, sandbox gvisor,microvm.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/internal/kubetest"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/harvest"
)

const (
	apiWorkerNS = "benchmark-workloads" // the manifest's and DefaultOptions' namespace
	apiOtherNS  = "other-ns"
	apiPoolKey  = "ate.dev/worker-pool"
	apiRBACPath = "../../deploy/rbac.yaml"
)

// apiWindow is the run window of the OOM/eviction facts.
var (
	apiStart = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	apiEnd   = apiStart.Add(time.Hour)
)

func apiCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func apiMust(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func apiPtr[T any](v T) *T { return &v }

// apiSeed records what the test created, so expectations come from the seed.
type apiSeed struct {
	admin kubernetes.Interface
	uids  map[string]types.UID // pod name -> UID in the worker namespace
}

type apiNodeSpec struct {
	name, cpu, mem, instanceType, kubelet string
}

func (s *apiSeed) node(t *testing.T, n apiNodeSpec) {
	t.Helper()
	ctx := apiCtx(t)
	created, err := s.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   n.name,
		Labels: map[string]string{"node.kubernetes.io/instance-type": n.instanceType, "kubernetes.io/hostname": n.name},
	}}, metav1.CreateOptions{})
	apiMust(t, "creating node "+n.name, err)
	// Status only through the status subresource, as a kubelet would.
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(n.cpu),
		corev1.ResourceMemory: resource.MustParse(n.mem),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	created.Status = corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: n.kubelet, KubeProxyVersion: n.kubelet, OperatingSystem: "linux", Architecture: "amd64"},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
	}
	_, err = s.admin.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	apiMust(t, "setting the status of node "+n.name, err)
}

type apiPodSpec struct {
	ns, name, node string
	worker         bool
	args           []string
	image          string
	memLimit       string            // "" = no limits
	sidecar        bool              // adds a "metrics" container that must be ignored
	phase          corev1.PodPhase   // "" = leave Pending as created
	restarts       int32             // ateom restartCount
	lastReason     string            // ateom lastState.terminated.reason
	statusReason   string            // status.reason (e.g. Evicted)
	extraLabels    map[string]string // merged into the labels
}

func apiPodObject(p apiPodSpec) *corev1.Pod {
	labels := map[string]string{"app": "ateom"}
	if p.worker {
		labels[apiPoolKey] = "pool-a"
	}
	for k, v := range p.extraLabels {
		labels[k] = v
	}
	ateom := corev1.Container{Name: "ateom", Image: p.image, Args: p.args}
	if p.memLimit != "" {
		ateom.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(p.memLimit)}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{ateom}},
	}
	if p.sidecar {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: "metrics", Image: "registry.local/ateom-microvm-exporter:1", Args: []string{"--max-actors=7"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		})
	}
	return pod
}

// apiSetStatus writes the pod's status through the status subresource.
func apiSetStatus(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, phase corev1.PodPhase, restarts int32, lastReason, reason string) (*corev1.Pod, error) {
	pod = pod.DeepCopy()
	pod.Status.Phase = phase
	pod.Status.Reason = reason
	started := metav1.NewTime(apiStart.Add(-time.Hour))
	var statuses []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sha256:0", ContainerID: "containerd://" + c.Name}
		switch phase {
		case corev1.PodRunning:
			st.Ready, st.Started = true, apiPtr(true)
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: started}
		case corev1.PodSucceeded, corev1.PodFailed:
			code := int32(0)
			if phase == corev1.PodFailed {
				code = 137
			}
			st.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Completed", StartedAt: started, FinishedAt: started}
		default:
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		if c.Name == "ateom" {
			st.RestartCount = restarts
			if lastReason != "" {
				st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: lastReason, StartedAt: started, FinishedAt: started,
				}
			}
		}
		statuses = append(statuses, st)
	}
	pod.Status.ContainerStatuses = statuses
	return cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

func (s *apiSeed) pod(t *testing.T, p apiPodSpec) *corev1.Pod {
	t.Helper()
	pod, err := s.createPod(apiCtx(t), p)
	apiMust(t, "creating pod "+p.name, err)
	return pod
}

func (s *apiSeed) createPod(ctx context.Context, p apiPodSpec) (*corev1.Pod, error) {
	pod, err := s.admin.CoreV1().Pods(p.ns).Create(ctx, apiPodObject(p), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s/%s: %w", p.ns, p.name, err)
	}
	if pod.Status.Phase != corev1.PodPending {
		return nil, fmt.Errorf("pod %s created in phase %q, want Pending", p.name, pod.Status.Phase)
	}
	if p.phase != "" && p.phase != corev1.PodPending || p.restarts != 0 || p.lastReason != "" {
		phase := p.phase
		if phase == "" {
			phase = corev1.PodPending
		}
		pod, err = apiSetStatus(ctx, s.admin, pod, phase, p.restarts, p.lastReason, p.statusReason)
		if err != nil {
			return nil, fmt.Errorf("setting the status of pod %s: %w", p.name, err)
		}
	}
	return pod, nil
}

type apiEventSpec struct {
	ns, pod  string
	uid      types.UID
	reason   string
	last     time.Time // lastTimestamp
	first    time.Time // firstTimestamp
	micro    time.Time // eventTime
	sequence int
}

func (s *apiSeed) event(t *testing.T, e apiEventSpec) {
	t.Helper()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", e.pod, e.sequence), Namespace: e.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: e.ns, Name: e.pod, UID: e.uid},
		Reason:         e.reason,
		Message:        "The node was low on resource: memory.",
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet"},
		Count:          1,
	}
	if !e.last.IsZero() {
		ev.LastTimestamp = metav1.NewTime(e.last)
	}
	if !e.first.IsZero() {
		ev.FirstTimestamp = metav1.NewTime(e.first)
	}
	if !e.micro.IsZero() {
		// An events.k8s.io-style event: the server then wants the reporting fields.
		ev.EventTime = metav1.NewMicroTime(e.micro)
		ev.ReportingController, ev.ReportingInstance, ev.Action = "kubelet", "worker-c", "Evict"
		ev.Count = 0
	}
	got, err := s.admin.CoreV1().Events(e.ns).Create(apiCtx(t), ev, metav1.CreateOptions{})
	apiMust(t, "creating event "+ev.Name, err)
	// What is stored is what discovery reads: make sure the server kept the times as given.
	if !got.LastTimestamp.Time.Equal(ev.LastTimestamp.Time) || !got.FirstTimestamp.Time.Equal(ev.FirstTimestamp.Time) || !got.EventTime.Time.Equal(ev.EventTime.Time) {
		t.Fatalf("event %s stored with times last=%v first=%v eventTime=%v, want %v %v %v", ev.Name,
			got.LastTimestamp, got.FirstTimestamp, got.EventTime, ev.LastTimestamp, ev.FirstTimestamp, ev.EventTime)
	}
}

// apiAccess is token access for a bearer token, as the datasource configures it.
func apiAccess(c *kubetest.Cluster, token string) cluster.Access {
	return cluster.Access{Mode: cluster.ModeToken, URL: c.URL(), Token: token, CACert: c.CAData(), Timeout: 30 * time.Second}
}

func apiClient(t *testing.T, a cluster.Access) kubernetes.Interface {
	t.Helper()
	cs, err := cluster.NewClient(a)
	apiMust(t, "building the client", err)
	return cs
}

// apiManifestServiceAccount applies deploy/rbac.yaml and returns the one
// ServiceAccount it declares.
func apiManifestServiceAccount(t *testing.T, c *kubetest.Cluster) (ns, name string) {
	t.Helper()
	manifest, err := os.ReadFile(apiRBACPath)
	apiMust(t, "reading the RBAC manifest", err)
	var sas []string
	for _, o := range c.Apply(t, manifest) {
		if o.GetKind() == "ServiceAccount" {
			ns, name = o.GetNamespace(), o.GetName()
			sas = append(sas, ns+"/"+name)
		}
	}
	if len(sas) != 1 {
		t.Fatalf("%s declares service accounts %v, want exactly one (the identity discovery runs as)", apiRBACPath, sas)
	}
	return ns, name
}

func apiFactsJSON(f clusterfacts.Facts) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestRealAPIServer(t *testing.T) {
	c := kubetest.Start(t)
	admin := c.Admin(t)
	seed := &apiSeed{admin: admin, uids: map[string]types.UID{}}

	saNS, saName := apiManifestServiceAccount(t, c)
	limited := apiAccess(c, c.ServiceAccountToken(t, saNS, saName))
	c.EnsureNamespace(t, apiWorkerNS)
	c.EnsureNamespace(t, apiOtherNS)

	for _, n := range []apiNodeSpec{
		{"worker-a", "3920m", "13591700Ki", "n2-standard-4", "v1.37.2"},
		{"worker-b", "3920m", "13591700Ki", "n2-standard-4", "v1.37.2"},
		{"worker-c", "3920m", "13591700Ki", "n2d-standard-4", "v1.36.5"},
		{"worker-d", "8", "32Gi", "c3-standard-8", "v1.38.0"},
		{"infra-1", "16", "64Gi", "e2-highmem-16", "v1.35.0"},
	} {
		seed.node(t, n)
	}
	const gvisor, microvm = "registry.local/ateom-gvisor:1.4", "registry.local/ateom-microvm:1.4"
	for _, p := range []apiPodSpec{
		{name: "w-1", node: "worker-a", worker: true, phase: corev1.PodRunning, args: []string{"--max-actors=50"}, image: gvisor, memLimit: "16Gi", sidecar: true},
		{name: "w-2", node: "worker-b", worker: true, phase: corev1.PodRunning, args: []string{"serve", "--max-actors", "50"}, image: gvisor, memLimit: "17179869184", restarts: 1, lastReason: "Error"},
		{name: "w-3", node: "worker-c", worker: true, image: microvm},
		{name: "w-4", worker: true, args: []string{"--max-actors=50"}, image: gvisor, memLimit: "16Gi"},
		{name: "w-5", node: "infra-1", worker: true, phase: corev1.PodFailed, statusReason: "Evicted", args: []string{"--max-actors=3"}, image: microvm, memLimit: "32Gi"},
		{name: "w-6", node: "infra-1", worker: true, phase: corev1.PodSucceeded, args: []string{"--max-actors=4"}, image: microvm},
		{name: "n-1", node: "infra-1", phase: corev1.PodRunning, args: []string{"--max-actors=999"}, image: microvm, memLimit: "64Gi"},
		{ns: apiOtherNS, name: "w-x", node: "infra-1", worker: true, phase: corev1.PodRunning, args: []string{"--max-actors=777"}, image: microvm},
	} {
		if p.ns == "" {
			p.ns = apiWorkerNS
		}
		pod := seed.pod(t, p)
		if p.ns == apiWorkerNS {
			seed.uids[p.name] = pod.UID
		}
	}

	seedFacts := clusterfacts.Facts{
		MachineType:         []string{"n2-standard-4", "n2d-standard-4"},
		NodeCount:           apiPtr(3),
		AllocatableCores:    apiPtr(11.76),
		AllocatableRAMGB:    apiPtr(38.89),
		WorkerPodCount:      apiPtr(4),
		KubernetesVersion:   []string{"v1.36.5", "v1.37.2"},
		WorkerActorCapacity: []int64{50, 1000},
		WorkerMemoryLimitGB: []float64{16.0},
		SandboxClass:        []string{"gvisor", "microvm"},
	}
	seedUIDs := []types.UID{seed.uids["w-1"], seed.uids["w-2"], seed.uids["w-3"], seed.uids["w-4"]}

	t.Run("manifest grants what discovery needs", func(t *testing.T) {
		// Its own service account, and Grafana's in-cluster one, which the
		// manifest binds without declaring it.
		for _, sa := range [][2]string{{saNS, saName}, {"monitoring", "grafana"}} {
			cs := apiClient(t, apiAccess(c, c.ServiceAccountToken(t, sa[0], sa[1])))
			if err := cluster.CheckAccess(apiCtx(t), cs, cluster.DefaultOptions()); err != nil {
				t.Errorf("CheckAccess as %s/%s: %v", sa[0], sa[1], err)
			}
		}
	})

	t.Run("facts as the limited service account", func(t *testing.T) {
		for _, pageSize := range []int64{1, 2, 500} {
			t.Run(fmt.Sprintf("page size %d", pageSize), func(t *testing.T) {
				o := cluster.DefaultOptions()
				o.PageSize = pageSize
				r := cluster.Discover(apiCtx(t), apiClient(t, limited), o)
				if got, want := apiFactsJSON(r.Facts), apiFactsJSON(seedFacts); got != want {
					t.Errorf("facts\n got %s\nwant %s", got, want)
				}
				if len(r.Notices) != 0 {
					t.Errorf("notices %+v, want none (every fact was readable)", r.Notices)
				}
				if r.Pods == nil {
					t.Fatal("no pod snapshot")
				}
				if got := slices.Sorted(func(yield func(types.UID) bool) {
					for uid := range r.Pods.Pods {
						if !yield(types.UID(uid)) {
							return
						}
					}
				}); !reflect.DeepEqual(got, slices.Sorted(slices.Values(seedUIDs))) {
					t.Errorf("snapshot pods %v, want the UIDs of w-1..w-4 %v", got, seedUIDs)
				}
			})
		}
	})

	t.Run("facts through a kubeconfig context", func(t *testing.T) {
		cfg := c.TokenConfig(limited.Token)
		path := c.Kubeconfig(t, cfg, "density-reader")
		cs := apiClient(t, cluster.Access{Mode: cluster.ModeKubeconfig, KubeconfigPath: path, Context: "density-reader"})
		r := cluster.Discover(apiCtx(t), cs, cluster.DefaultOptions())
		if got, want := apiFactsJSON(r.Facts), apiFactsJSON(seedFacts); got != want {
			t.Errorf("facts\n got %s\nwant %s", got, want)
		}
	})

	t.Run("forbidden verbs are forbidden", func(t *testing.T) {
		cs := apiClient(t, limited)
		ctx := apiCtx(t)
		del := func(ctx context.Context) error {
			return cs.CoreV1().Pods(apiWorkerNS).Delete(ctx, "w-4", metav1.DeleteOptions{GracePeriodSeconds: apiPtr(int64(0))})
		}
		for _, tc := range []struct {
			what string
			call func(context.Context) error
		}{
			{"get secrets", func(ctx context.Context) error {
				_, err := cs.CoreV1().Secrets(apiWorkerNS).Get(ctx, "any", metav1.GetOptions{})
				return err
			}},
			{"list secrets", func(ctx context.Context) error {
				_, err := cs.CoreV1().Secrets(apiWorkerNS).List(ctx, metav1.ListOptions{})
				return err
			}},
			{"list secrets cluster-wide", func(ctx context.Context) error {
				_, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
				return err
			}},
			{"delete pods", del},
			{"create pods", func(ctx context.Context) error {
				_, err := cs.CoreV1().Pods(apiWorkerNS).Create(ctx, apiPodObject(apiPodSpec{ns: apiWorkerNS, name: "intruder", image: gvisor}), metav1.CreateOptions{})
				return err
			}},
			{"create pods/eviction", func(ctx context.Context) error {
				return cs.CoreV1().Pods(apiWorkerNS).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "w-4", Namespace: apiWorkerNS}})
			}},
			{"list pods in another namespace", func(ctx context.Context) error {
				_, err := cs.CoreV1().Pods(apiOtherNS).List(ctx, metav1.ListOptions{})
				return err
			}},
			{"list pods in all namespaces", func(ctx context.Context) error {
				_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
				return err
			}},
			{"list events in another namespace", func(ctx context.Context) error {
				_, err := cs.CoreV1().Events(apiOtherNS).List(ctx, metav1.ListOptions{})
				return err
			}},
			{"patch nodes", func(ctx context.Context) error {
				_, err := cs.CoreV1().Nodes().Patch(ctx, "worker-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
				return err
			}},
			{"delete nodes", func(ctx context.Context) error {
				return cs.CoreV1().Nodes().Delete(ctx, "worker-d", metav1.DeleteOptions{})
			}},
			{"get configmaps", func(ctx context.Context) error {
				_, err := cs.CoreV1().ConfigMaps(apiWorkerNS).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
				return err
			}},
			{"create rolebindings (escalation)", func(ctx context.Context) error {
				_, err := cs.RbacV1().RoleBindings(apiWorkerNS).Create(ctx, &rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
					RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
					Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: saName, Namespace: saNS}},
				}, metav1.CreateOptions{})
				return err
			}},
			{"create serviceaccount tokens", func(ctx context.Context) error {
				_, err := cs.CoreV1().ServiceAccounts(saNS).CreateToken(ctx, saName, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
				return err
			}},
		} {
			t.Run(tc.what, func(t *testing.T) {
				if err := tc.call(ctx); !apierrors.IsForbidden(err) {
					t.Fatalf("err = %v, want 403 Forbidden", err)
				}
			})
		}
		// The denied delete really left the pod in place.
		if _, err := admin.CoreV1().Pods(apiWorkerNS).Get(ctx, "w-4", metav1.GetOptions{}); err != nil {
			t.Fatalf("w-4 after the denied delete: %v", err)
		}
	})

	t.Run("subject access reviews: pod logs in both namespaces, nothing broader", func(t *testing.T) {
		ctx := apiCtx(t)
		review := func(user, ns, verb, res, sub string) bool {
			r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User:               user,
					Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNS, "system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: res, Subresource: sub},
				},
			}, metav1.CreateOptions{})
			apiMust(t, "creating a SubjectAccessReview", err)
			return r.Status.Allowed
		}
		sa := "system:serviceaccount:" + saNS + ":" + saName
		ateletNS := harvest.DefaultSelectors().AteletNamespace
		for _, tc := range []struct {
			ns, verb, res, sub string
			allowed            bool
		}{
			{apiWorkerNS, "list", "pods", "", true},
			{apiWorkerNS, "get", "pods", "log", true},
			{ateletNS, "list", "pods", "", true},
			{ateletNS, "get", "pods", "log", true},
			{apiWorkerNS, "list", "events", "", true},
			{"", "list", "nodes", "", true},
			{apiWorkerNS, "get", "pods", "", false},
			{ateletNS, "get", "pods", "", false},
			{apiWorkerNS, "watch", "pods", "", false},
			{apiWorkerNS, "create", "pods", "exec", false},
			{ateletNS, "create", "pods", "exec", false},
			{apiWorkerNS, "get", "pods", "exec", false},
			{apiWorkerNS, "get", "secrets", "", false},
			{ateletNS, "get", "secrets", "", false},
			{ateletNS, "list", "secrets", "", false},
			{ateletNS, "list", "events", "", false},
			{apiOtherNS, "get", "pods", "log", false},
			{apiOtherNS, "list", "pods", "", false},
			{"", "get", "pods", "log", false},
			{"", "list", "pods", "", false},
		} {
			if got := review(sa, tc.ns, tc.verb, tc.res, tc.sub); got != tc.allowed {
				t.Errorf("%s %s/%s in %q: allowed %v, want %v", tc.verb, tc.res, tc.sub, tc.ns, got, tc.allowed)
			}
		}
		// What health asks as the service account itself: pods/log in both
		// namespaces, not elsewhere.
		denied, err := cluster.CheckLogAccess(ctx, apiClient(t, limited), 0, apiWorkerNS, ateletNS, apiOtherNS)
		apiMust(t, "CheckLogAccess", err)
		if !slices.Equal(denied, []string{apiOtherNS}) {
			t.Errorf("CheckLogAccess denied %v, want only %s", denied, apiOtherNS)
		}
		// Without the bindings (another service account of the same
		// namespace), denied.
		other := "system:serviceaccount:" + saNS + ":unbound"
		for _, ns := range []string{apiWorkerNS, ateletNS} {
			if review(other, ns, "get", "pods", "log") || review(other, ns, "list", "pods", "") {
				t.Errorf("an unbound service account may read pod logs in %s", ns)
			}
		}
	})

	t.Run("no node permission nulls only the node facts", func(t *testing.T) {
		// A namespace-only identity (the manifest's Role without its ClusterRole).
		c.Apply(t, []byte(`
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pods-only, namespace: `+apiWorkerNS+`}
rules:
- {apiGroups: [""], resources: ["pods", "events"], verbs: ["list"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: pods-only, namespace: `+apiWorkerNS+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pods-only}
subjects:
- {kind: ServiceAccount, name: pods-only, namespace: `+apiWorkerNS+`}
`))
		cs := apiClient(t, apiAccess(c, c.ServiceAccountToken(t, apiWorkerNS, "pods-only")))
		r := cluster.Discover(apiCtx(t), cs, cluster.DefaultOptions())
		want := seedFacts
		want.MachineType, want.NodeCount, want.AllocatableCores, want.AllocatableRAMGB, want.KubernetesVersion = nil, nil, nil, nil, nil
		if got, want := apiFactsJSON(r.Facts), apiFactsJSON(want); got != want {
			t.Errorf("facts\n got %s\nwant %s", got, want)
		}
		if len(r.Notices) != 1 || r.Notices[0].Group != cluster.GroupNodes || !strings.Contains(r.Notices[0].Reason, "403") ||
			!strings.Contains(r.Notices[0].Reason, `cannot list resource "nodes"`) {
			t.Errorf("notices %+v, want one nodes notice quoting the server's 403", r.Notices)
		}
	})

	t.Run("unbound service account gets nulls and the reason", func(t *testing.T) {
		cs := apiClient(t, apiAccess(c, c.ServiceAccountToken(t, apiWorkerNS, "nobody")))
		r := cluster.Discover(apiCtx(t), cs, cluster.DefaultOptions())
		if got, want := apiFactsJSON(r.Facts), apiFactsJSON(clusterfacts.Facts{}); got != want {
			t.Errorf("facts %s, want all null %s", got, want)
		}
		if r.Pods != nil {
			t.Errorf("a pod snapshot from a denied list: %+v", r.Pods)
		}
		if len(r.Notices) != 1 || r.Notices[0].Group != cluster.GroupPods || !strings.Contains(r.Notices[0].Reason, "403 Forbidden") ||
			!strings.Contains(r.Notices[0].Reason, "system:serviceaccount:"+apiWorkerNS+":nobody") {
			t.Errorf("notices %+v, want one pods notice quoting the server's 403", r.Notices)
		}
		if err := cluster.CheckAccess(apiCtx(t), cs, cluster.DefaultOptions()); err == nil ||
			strings.Count(err.Error(), "403") != 3 {
			t.Errorf("CheckAccess = %v, want three 403s (nodes, pods, events)", err)
		}
	})

	t.Run("before and after: restarts, OOM kills, evictions, lost pods", func(t *testing.T) {
		cs := apiClient(t, limited)
		ctx := apiCtx(t)
		o := cluster.DefaultOptions()
		o.PageSize = 2
		before, err := cluster.TakeSnapshot(ctx, cs, o)
		apiMust(t, "taking the before snapshot", err)
		// Through JSON, as `density export --before` stores it.
		raw, err := json.Marshal(before)
		apiMust(t, "encoding the snapshot", err)
		before, err = cluster.DecodeSnapshot(bytes.NewReader(raw))
		apiMust(t, "decoding the snapshot", err)
		if len(before.Pods) != 4 {
			t.Fatalf("before snapshot has %d pods, want 4", len(before.Pods))
		}

		// The run: w-1 OOM-killed twice, w-2 crashes once more (not OOM),
		// w-3 force-deleted (no kubelet to finish a graceful delete), w-7 new.
		pods := admin.CoreV1().Pods(apiWorkerNS)
		w1, err := pods.Get(ctx, "w-1", metav1.GetOptions{})
		apiMust(t, "get w-1", err)
		_, err = apiSetStatus(ctx, admin, w1, corev1.PodRunning, 2, "OOMKilled", "")
		apiMust(t, "w-1 status", err)
		w2, err := pods.Get(ctx, "w-2", metav1.GetOptions{})
		apiMust(t, "get w-2", err)
		_, err = apiSetStatus(ctx, admin, w2, corev1.PodRunning, 2, "Error", "")
		apiMust(t, "w-2 status", err)
		apiMust(t, "force-deleting w-3", pods.Delete(ctx, "w-3", metav1.DeleteOptions{GracePeriodSeconds: apiPtr(int64(0))}))
		if _, err := pods.Get(ctx, "w-3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("w-3 after a force delete: %v, want NotFound", err)
		}
		seed.pod(t, apiPodSpec{ns: apiWorkerNS, name: "w-7", worker: true, args: []string{"--max-actors=50"}, image: gvisor})

		// Evicted in [start, end], both ends included: w-2 (lastTimestamp =
		// start), w-3 (eventTime only, 1 s before end; the pod is gone but
		// still counts), w-4 (twice, one pod), w-1 (firstTimestamp only = end).
		// Out: w-5 1 s before start, w-6 1 s after end, a Killing event of w-6
		// inside, and an Evicted pod of another namespace inside.
		u := seed.uids
		for _, e := range []apiEventSpec{
			{pod: "w-2", uid: u["w-2"], reason: "Evicted", last: apiStart, first: apiStart.Add(-time.Hour)},
			{pod: "w-3", uid: u["w-3"], reason: "Evicted", micro: apiEnd.Add(-time.Second)},
			{pod: "w-4", uid: u["w-4"], reason: "Evicted", last: apiStart.Add(30 * time.Minute), sequence: 1},
			{pod: "w-4", uid: u["w-4"], reason: "Evicted", last: apiStart.Add(45 * time.Minute), sequence: 2},
			{pod: "w-1", uid: u["w-1"], reason: "Evicted", first: apiEnd},
			{pod: "w-5", uid: u["w-5"], reason: "Evicted", last: apiStart.Add(-time.Second)},
			{pod: "w-6", uid: u["w-6"], reason: "Evicted", last: apiEnd.Add(time.Second)},
			{pod: "w-6", uid: u["w-6"], reason: "Killing", last: apiStart.Add(10 * time.Minute), sequence: 1},
			{ns: apiOtherNS, pod: "w-x", uid: "uid-w-x", reason: "Evicted", last: apiStart.Add(time.Minute)},
		} {
			if e.ns == "" {
				e.ns = apiWorkerNS
			}
			seed.event(t, e)
		}

		after := cluster.ReadAfterRun(ctx, cs, o, before, apiStart, apiEnd)
		want := struct{ Restarts, OOMKilled, Evicted, Lost *int }{apiPtr(3), apiPtr(1), apiPtr(4), apiPtr(1)}
		got := struct{ Restarts, OOMKilled, Evicted, Lost *int }{after.OOM.WorkerRestarts, after.OOM.WorkerOOMKilledPods, after.OOM.Evicted, after.OOM.WorkerPodsLost}
		if g, w := fmt.Sprint(apiDeref(got.Restarts), apiDeref(got.OOMKilled), apiDeref(got.Evicted), apiDeref(got.Lost)),
			fmt.Sprint(apiDeref(want.Restarts), apiDeref(want.OOMKilled), apiDeref(want.Evicted), apiDeref(want.Lost)); g != w {
			t.Errorf("restarts, oomkilled, evicted, lost = %s, want %s (notices %+v)", g, w, after.OOM.Notices)
		}
		if len(after.OOM.Notices) != 0 {
			t.Errorf("OOM notices %+v, want none", after.OOM.Notices)
		}
		// w-3's node left with it; w-7 has none.
		wantFacts := seedFacts
		wantFacts.WorkerPodCount = apiPtr(4)
		wantFacts.NodeCount, wantFacts.AllocatableCores, wantFacts.AllocatableRAMGB = apiPtr(2), apiPtr(7.84), apiPtr(25.92)
		wantFacts.MachineType, wantFacts.KubernetesVersion = []string{"n2-standard-4"}, []string{"v1.37.2"}
		wantFacts.WorkerActorCapacity, wantFacts.SandboxClass = []int64{50}, []string{"gvisor"}
		if g, w := apiFactsJSON(after.Facts), apiFactsJSON(wantFacts); g != w {
			t.Errorf("facts after the run\n got %s\nwant %s", g, w)
		}
	})

	t.Run("pagination over thousands of pods", func(t *testing.T) {
		apiPagination(t, c, seed, limited)
	})
}

// apiPagination adds 3000 worker pods (200 of them Succeeded) and 400
// unlabelled pods to the worker namespace, then lists with a page size of
// 23: the snapshot must hold exactly the live worker pods, each once.
func apiPagination(t *testing.T, c *kubetest.Cluster, seed *apiSeed, limited cluster.Access) {
	const (
		bulk     = 3000
		noise    = 400
		pageSize = 23
	)
	ctx := apiCtx(t)
	nodes := []string{"worker-a", "worker-b", "worker-c"}
	specs := make([]apiPodSpec, 0, bulk+noise)
	for i := range bulk {
		p := apiPodSpec{ns: apiWorkerNS, name: fmt.Sprintf("b-%04d", i), node: nodes[i%3], worker: true, memLimit: "16Gi",
			image: "registry.local/ateom-gvisor:2"}
		switch i % 4 {
		case 0:
			p.args = []string{"--max-actors=10"}
		case 1:
			p.args = []string{"--max-actors", "20"}
		case 3:
			p.args = []string{"--max-actors=30"}
		} // case 2: none -> 1000
		if i%2 == 1 {
			p.image = "registry.local/ateom-microvm:2"
		}
		if i%5 == 0 {
			p.memLimit = "8Gi"
		}
		if i%15 == 0 {
			p.phase = corev1.PodSucceeded
		}
		specs = append(specs, p)
	}
	for i := range noise {
		specs = append(specs, apiPodSpec{ns: apiWorkerNS, name: fmt.Sprintf("n-b-%03d", i), node: "infra-1",
			args: []string{"--max-actors=999"}, image: "registry.local/ateom-microvm:2", memLimit: "64Gi"})
	}

	// The live worker pods left by the earlier subtests (w-1, w-2, w-4, w-7),
	// read as the admin with no pagination, plus the new ones.
	want := map[string]bool{}
	existing, err := seed.admin.CoreV1().Pods(apiWorkerNS).List(ctx, metav1.ListOptions{LabelSelector: apiPoolKey})
	apiMust(t, "listing the existing worker pods", err)
	for _, p := range existing.Items {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			want[string(p.UID)] = true
		}
	}
	if len(want) != 4 {
		t.Fatalf("%d live worker pods before the bulk, want 4", len(want))
	}

	start := time.Now()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		next atomic.Int64
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(specs) {
					return
				}
				pod, err := seed.createPod(ctx, specs[i])
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if specs[i].worker && specs[i].phase == "" {
					want[string(pod.UID)] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d pods failed, first: %v", len(errs), errs[0])
	}
	t.Logf("created %d pods in %s", len(specs), time.Since(start).Round(time.Millisecond))
	if len(want) != 4+2800 {
		t.Fatalf("%d live worker pods expected by the seed, want 2804", len(want))
	}

	// Count the pod list requests the discovery makes.
	cfg, err := cluster.RESTConfig(limited)
	apiMust(t, "client configuration", err)
	var lists apiListCounter
	cfg.Wrap(lists.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	apiMust(t, "clientset", err)

	o := cluster.DefaultOptions()
	o.PageSize = pageSize
	start = time.Now()
	r := cluster.Discover(ctx, cs, o)
	t.Logf("discovered %d worker pods in %s with %d pod list requests", len(want), time.Since(start).Round(time.Millisecond), lists.count())

	if r.Pods == nil {
		t.Fatalf("no pod snapshot; notices %+v", r.Notices)
	}
	var missing, extra []string
	for uid := range want {
		if _, ok := r.Pods.Pods[uid]; !ok {
			missing = append(missing, uid)
		}
	}
	for uid := range r.Pods.Pods {
		if !want[uid] {
			extra = append(extra, uid)
		}
	}
	if len(missing)+len(extra) > 0 {
		t.Errorf("snapshot: %d pods missing (e.g. %v), %d unexpected (e.g. %v)", len(missing), apiFirst(missing), len(extra), apiFirst(extra))
	}
	wantFacts := clusterfacts.Facts{
		MachineType:         []string{"n2-standard-4", "n2d-standard-4"},
		NodeCount:           apiPtr(3),
		AllocatableCores:    apiPtr(11.76),
		AllocatableRAMGB:    apiPtr(38.89),
		WorkerPodCount:      apiPtr(2804),
		KubernetesVersion:   []string{"v1.36.5", "v1.37.2"},
		WorkerActorCapacity: []int64{10, 20, 30, 50, 1000},
		WorkerMemoryLimitGB: []float64{8.0, 16.0},
		SandboxClass:        []string{"gvisor", "microvm"},
	}
	if g, w := apiFactsJSON(r.Facts), apiFactsJSON(wantFacts); g != w {
		t.Errorf("facts\n got %s\nwant %s", g, w)
	}
	if len(r.Notices) != 0 {
		t.Errorf("notices %+v, want none", r.Notices)
	}

	// Every request asked for pageSize items, only the first without a
	// continue token; full pages mean ceil(2804/23) = 122 requests (one more
	// if the server cannot tell the last full page is the last).
	lists.mu.Lock()
	defer lists.mu.Unlock()
	if n := len(lists.queries); n < 122 || n > 123 {
		t.Errorf("%d pod list requests, want 122 (or 123)", n)
	}
	for i, q := range lists.queries {
		if q.limit != fmt.Sprint(pageSize) || (i == 0) != (q.cont == "") {
			t.Errorf("request %d: limit=%q continue=%q", i, q.limit, q.cont)
			break
		}
	}
}

// apiListCounter records the worker-namespace pod list requests.
type apiListCounter struct {
	mu      sync.Mutex
	queries []struct{ limit, cont string }
}

func (l *apiListCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return apiRoundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/namespaces/"+apiWorkerNS+"/pods") {
			q := req.URL.Query()
			l.mu.Lock()
			l.queries = append(l.queries, struct{ limit, cont string }{q.Get("limit"), q.Get("continue")})
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *apiListCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queries)
}

type apiRoundTripper func(*http.Request) (*http.Response, error)

func (f apiRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func apiFirst(xs []string) []string {
	if len(xs) > 3 {
		return xs[:3]
	}
	return xs
}

func apiDeref(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
