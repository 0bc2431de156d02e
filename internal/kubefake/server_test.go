package kubefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func get(t *testing.T, s *Server, path string, q url.Values, token string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path+"?"+q.Encode(), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s: decoding: %v", path, err)
	}
	return resp.StatusCode
}

func testPods() Source[corev1.Pod] {
	var pods []corev1.Pod
	for i := range 10 {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns", Labels: map[string]string{}}}
		p.Status.Phase = corev1.PodRunning
		if i%2 == 0 {
			p.Labels["pool"] = "x" // p0 p2 p4 p6 p8
		}
		if i == 9 {
			p.Namespace = "other"
			p.Labels["pool"] = "y"
		}
		if i == 4 {
			p.Status.Phase = corev1.PodSucceeded
		}
		pods = append(pods, p)
	}
	return Slice(pods...)
}

func TestListSemantics(t *testing.T) {
	s := New(Config{Pods: testPods(), Token: "tok"})
	defer s.Close()
	tests := []struct {
		name, path string
		q          url.Values
		want       [][]string // names per page
	}{
		{"all namespaces, no limit", "/api/v1/pods", url.Values{}, [][]string{{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}}},
		{"namespace and label key exists", "/api/v1/namespaces/ns/pods", url.Values{"labelSelector": {"pool"}}, [][]string{{"p0", "p2", "p4", "p6", "p8"}}},
		{"pages filled to the limit; empty last page while items remain", "/api/v1/namespaces/ns/pods",
			url.Values{"labelSelector": {"pool"}, "limit": {"2"}}, [][]string{{"p0", "p2"}, {"p4", "p6"}, {"p8"}}},
		{"last page empty", "/api/v1/namespaces/ns/pods", url.Values{"labelSelector": {"pool=x"}, "limit": {"5"}}, [][]string{{"p0", "p2", "p4", "p6", "p8"}, {}}},
		{"field selector", "/api/v1/pods", url.Values{"labelSelector": {"pool"}, "fieldSelector": {"status.phase!=Succeeded,status.phase!=Failed"}},
			[][]string{{"p0", "p2", "p6", "p8", "p9"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			q := tt.q
			for {
				var l corev1.PodList
				if code := get(t, s, tt.path, q, "tok", &l); code != 200 {
					t.Fatalf("status %d", code)
				}
				if l.Kind != "PodList" || l.ResourceVersion != ResourceVersion {
					t.Fatalf("list meta %+v %+v", l.TypeMeta, l.ListMeta)
				}
				names := []string{}
				for _, p := range l.Items {
					names = append(names, p.Name)
				}
				got = append(got, names)
				if l.Continue == "" {
					break
				}
				q = cloneWith(tt.q, "continue", l.Continue)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("pages %v, want %v", got, tt.want)
			}
		})
	}
}

func cloneWith(q url.Values, k, v string) url.Values {
	c := url.Values{}
	for kk, vv := range q {
		c[kk] = vv
	}
	c.Set(k, v)
	return c
}

func TestErrors(t *testing.T) {
	s := New(Config{Pods: testPods(), Token: "tok", Faults: map[string]Fault{
		Nodes:  {Status: 403},
		Events: {ExpireContinue: 1},
	}})
	defer s.Close()
	tests := []struct {
		name, path, token string
		q                 url.Values
		code              int
		reason            metav1.StatusReason
	}{
		{"forbidden nodes", "/api/v1/nodes", "tok", nil, 403, metav1.StatusReasonForbidden},
		{"wrong token", "/api/v1/pods", "nope", nil, 401, metav1.StatusReasonUnauthorized},
		{"unknown path", "/api/v1/secrets", "tok", nil, 404, metav1.StatusReasonNotFound},
		{"unsupported field", "/api/v1/pods", "tok", url.Values{"fieldSelector": {"spec.containers=x"}}, 400, metav1.StatusReasonBadRequest},
		{"bad continue", "/api/v1/pods", "tok", url.Values{"continue": {"garbage!"}}, 400, metav1.StatusReasonBadRequest},
		{"expired continue", "/api/v1/events", "tok", url.Values{"continue": {encodeContinue(1)}}, 410, metav1.StatusReasonExpired},
		{"second continue not expired", "/api/v1/events", "tok", url.Values{"continue": {encodeContinue(0)}}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st metav1.Status
			code := get(t, s, tt.path, tt.q, tt.token, &st)
			if code != tt.code || st.Reason != tt.reason {
				t.Fatalf("got %d %q (%+v), want %d %q", code, st.Reason, st, tt.code, tt.reason)
			}
			if code != 200 && (st.Kind != "Status" || st.Code != int32(code) || st.Message == "") {
				t.Fatalf("status body %+v", st)
			}
		})
	}
	if n := s.Requests(Nodes); n != 1 {
		t.Errorf("node requests %d", n)
	}
}

func TestSyntheticCounts(t *testing.T) {
	s := Synthetic{Nodes: 50, WorkerNodes: 10, Pods: 1000, Workers: 200, Namespace: "w", LabelKey: "k"}
	src := s.PodSource()
	workers, byClass := 0, map[string]int{}
	for i := range src.Len {
		p := src.At(i)
		if _, ok := s.IsWorker(i); ok {
			workers++
			if p.Namespace != "w" || p.Labels["k"] == "" || p.Status.Phase != corev1.PodRunning || p.Spec.Containers[0].Name != "ateom" {
				t.Fatalf("worker %d malformed", i)
			}
			continue
		}
		_, labelled := p.Labels["k"]
		byClass[fmt.Sprintf("%s/%v/%s", p.Namespace, labelled, p.Status.Phase)]++
	}
	if workers != 200 {
		t.Fatalf("%d workers", workers)
	}
	want := map[string]int{"w/true/Succeeded": 200, "w/false/Running": 200, "tenant-apps/true/Running": 400}
	if fmt.Sprint(byClass) != fmt.Sprint(want) {
		t.Fatalf("non-workers %v, want %v", byClass, want)
	}
}
