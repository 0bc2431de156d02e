package kubetest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/substrate/density/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// whoami asks the server who the credentials authenticate as.
func whoami(t *testing.T, cs kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	return r.Status.UserInfo
}

// The harness and scripts/kube-apiserver.sh must agree on the cache path, or
// CI would build a binary the tests never find.
func TestBinaryPathAgreesWithBuildScript(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(kubetest.EnvAPIServer, "")
	t.Setenv(kubetest.EnvCache, cache)

	_, err := kubetest.BinaryPath()
	if err == nil || !strings.Contains(err.Error(), kubetest.BuildCommand) {
		t.Fatalf("BinaryPath with an empty cache: err = %v, want one naming %q", err, kubetest.BuildCommand)
	}

	out, err := exec.Command("sha256sum", "../../tools/kube/go.sum").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "kube-apiserver-"+string(out[:16]), "kube-apiserver")
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := kubetest.BinaryPath()
	if err != nil || got != want {
		t.Fatalf("BinaryPath = %q, %v; want %q", got, err, want)
	}

	cmd := exec.Command("bash", "../../scripts/kube-apiserver.sh")
	cmd.Env = append(os.Environ(), kubetest.EnvCache+"="+cache)
	script, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/kube-apiserver.sh: %v", err)
	}
	if strings.TrimSpace(string(script)) != want {
		t.Fatalf("scripts/kube-apiserver.sh printed %q, want the cached %q (and must not rebuild)", script, want)
	}
}

func TestBinaryPathFromEnvironment(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv(kubetest.EnvAPIServer, missing)
	_, err := kubetest.BinaryPath()
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), kubetest.BuildCommand) {
		t.Fatalf("BinaryPath with a missing $KUBE_APISERVER: err = %v", err)
	}
}

func TestAdminIsClusterAdmin(t *testing.T) {
	c := kubetest.Start(t)
	cs := c.Admin(t)
	u := whoami(t, cs)
	if u.Username != kubetest.AdminUser || !contains(u.Groups, "system:masters") {
		t.Fatalf("admin is %q in %v, want %q in system:masters", u.Username, u.Groups, kubetest.AdminUser)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "37" || !strings.HasPrefix(v.GitVersion, "v1.37.") {
		t.Fatalf("server version %+v, want v1.37.x", v)
	}
	ns := c.Namespace(t, "admin")
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin creating a secret: %v", err)
	}
}

// A fresh service account can do nothing; a Role applied from a manifest
// lets it list pods in that namespace only, and the token works through a
// written kubeconfig as well.
func TestServiceAccountIsLimitedByRBAC(t *testing.T) {
	c := kubetest.Start(t)
	ns := c.Namespace(t, "rbac")
	other := c.Namespace(t, "other")
	cfg := c.ServiceAccountConfig(t, ns, "reader")
	sa := clientset(t, cfg)

	if u := whoami(t, sa); u.Username != "system:serviceaccount:"+ns+":reader" {
		t.Fatalf("token authenticates as %q", u.Username)
	}
	if _, err := sa.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods before any binding: err = %v, want Forbidden", err)
	}

	manifest := `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: ` + ns + `
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list"]
---
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: pod-reader
  namespace: ` + ns + `
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {kind: ServiceAccount, name: reader, namespace: ` + ns + `}
`
	for range 2 { // server-side apply is idempotent
		objs := c.Apply(t, []byte(manifest))
		if len(objs) != 2 || objs[0].GetKind() != "Role" || objs[1].GetKind() != "RoleBinding" || objs[1].GetNamespace() != ns {
			t.Fatalf("applied %d objects: %v", len(objs), objs)
		}
	}

	// RBAC decisions follow the binding at once, but allow for the
	// authorizer's informer to catch up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := sa.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("list pods after the binding: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := sa.CoreV1().Pods(other).List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods in another namespace: err = %v, want Forbidden", err)
	}
	if _, err := sa.CoreV1().Pods(ns).Get(ctx(t), "x", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("get a pod (only list granted): err = %v, want Forbidden", err)
	}

	path := c.Kubeconfig(t, cfg, "limited")
	kcfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: "limited"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clientset(t, kcfg).CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatalf("list pods through the kubeconfig: %v", err)
	}
}

func TestApplyRejectsBadManifests(t *testing.T) {
	c := kubetest.Start(t)
	for name, manifest := range map[string]string{
		"no kind":      "apiVersion: v1\nmetadata: {name: x}\n",
		"unknown kind": "apiVersion: v1\nkind: Gadget\nmetadata: {name: x}\n",
	} {
		t.Run(name, func(t *testing.T) {
			ft := &fatalRecorder{TB: t}
			func() {
				defer func() { _ = recover() }()
				c.Apply(ft, []byte(manifest))
			}()
			if !ft.failed {
				t.Fatalf("Apply accepted %q", manifest)
			}
		})
	}
}

// fatalRecorder turns Fatalf into a recorded failure plus a panic, to test
// that a helper fails its caller.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatalf(string, ...any) { f.failed = true; panic("fatal") }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
