package cluster_test

import (
	"context"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/harvest"
)

const rbacPath = "../../deploy/rbac.yaml"

// permission is one (verb, resource, namespace) triple; namespace "" is
// cluster-wide.
type permission struct{ verb, resource, namespace string }

// manifestPermissions reads deploy/rbac.yaml and returns what the export
// service account is granted, checking the manifest's shape on the way.
func manifestPermissions(t *testing.T) map[permission]bool {
	t.Helper()
	data, err := os.ReadFile(rbacPath)
	if err != nil {
		t.Fatal(err)
	}
	var (
		kinds    []string
		roles    = map[string][]rbacv1.PolicyRule{} // "ns/name" ("" ns for cluster roles)
		bindings []struct {
			ns      string
			ref     rbacv1.RoleRef
			subject []rbacv1.Subject
		}
		sa string
	)
	for _, doc := range strings.Split(string(data), "\n---") {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind == "" {
			continue // the comment header
		}
		kinds = append(kinds, meta.Kind)
		switch meta.Kind {
		case "ServiceAccount":
			sa = meta.Metadata.Namespace + "/" + meta.Metadata.Name
		case "ClusterRole", "Role":
			var r rbacv1.Role
			if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
				t.Fatal(err)
			}
			roles[r.Namespace+"/"+r.Name] = r.Rules
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding
			if err := yaml.Unmarshal([]byte(doc), &b); err != nil {
				t.Fatal(err)
			}
			bindings = append(bindings, struct {
				ns      string
				ref     rbacv1.RoleRef
				subject []rbacv1.Subject
			}{b.Namespace, b.RoleRef, b.Subjects})
		}
	}
	if want := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Role", "RoleBinding"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("manifest kinds %v, want %v", kinds, want)
	}
	granted := map[permission]bool{}
	for _, b := range bindings {
		bound := false
		for _, s := range b.subject {
			bound = bound || (s.Kind == "ServiceAccount" && s.Namespace+"/"+s.Name == sa)
		}
		if !bound {
			t.Fatalf("binding to %s does not bind %s", b.ref.Name, sa)
		}
		roleNS := b.ns
		if b.ref.Kind == "ClusterRole" {
			roleNS = ""
		}
		rules, ok := roles[roleNS+"/"+b.ref.Name]
		if !ok {
			t.Fatalf("binding refers to missing %s %s", b.ref.Kind, b.ref.Name)
		}
		for _, r := range rules {
			if !reflect.DeepEqual(r.APIGroups, []string{""}) || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
				t.Fatalf("rule %+v: only the core group, no resource names or URLs", r)
			}
			for _, v := range r.Verbs {
				for _, res := range r.Resources {
					granted[permission{v, res, b.ns}] = true
				}
			}
		}
	}
	return granted
}

// TestRBACManifestIsExactlyWhatDiscoveryUses runs every call path of the
// package against the fake clientset and compares the requests made with
// the manifest: each request is granted, and each grant is used.
func TestRBACManifestIsExactlyWhatDiscoveryUses(t *testing.T) {
	granted := manifestPermissions(t)
	atelet := pod("atelet-1", onNode("n1"))
	atelet.Namespace, atelet.Labels = harvest.DefaultSelectors().AteletNamespace, map[string]string{"app": "atelet"}
	c := fake.NewClientset(pod("w1", onNode("n1")), node("n1", "2", "8Gi"), atelet)
	ctx := context.Background()
	o := cluster.DefaultOptions()
	before, err := cluster.TakeSnapshot(ctx, c, o)
	if err != nil {
		t.Fatal(err)
	}
	cluster.ReadAfterRun(ctx, c, o, before, start, end)
	if err := cluster.CheckAccess(ctx, c, o); err != nil {
		t.Fatal(err)
	}
	logs := cluster.ReadPodLogs(ctx, c, cluster.LogOptions{}, func(r io.Reader, _ cluster.LogSource) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if logs.PodsRead != 2 || logs.PodsFailed != 0 {
		t.Fatalf("pod logs %+v", logs)
	}
	used := map[permission]bool{}
	for _, a := range c.Actions() {
		res := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			res += "/" + sub
		}
		p := permission{a.GetVerb(), res, a.GetNamespace()}
		if a.GetResource().Group != "" {
			t.Errorf("request to API group %q", a.GetResource().Group)
		}
		_, isList := a.(k8stesting.ListAction)
		isLog := p.verb == "get" && res == "pods/log"
		if (!isList && !isLog) || !granted[p] {
			t.Errorf("request %+v is not granted by %s", p, rbacPath)
		}
		used[p] = true
	}
	if !reflect.DeepEqual(used, granted) {
		var extra []string
		for p := range granted {
			if !used[p] {
				extra = append(extra, p.verb+" "+p.resource+" in "+p.namespace)
			}
		}
		slices.Sort(extra)
		t.Errorf("granted but never used: %v", extra)
	}
	want := map[permission]bool{{"list", "nodes", ""}: true, {"list", "pods", o.WorkerNamespace}: true, {"list", "events", o.WorkerNamespace}: true,
		{"get", "pods/log", o.WorkerNamespace}:                       true,
		{"list", "pods", harvest.DefaultSelectors().AteletNamespace}: true, {"get", "pods/log", harvest.DefaultSelectors().AteletNamespace}: true}
	if !reflect.DeepEqual(granted, want) {
		t.Errorf("granted %v, want %v", granted, want)
	}
}
