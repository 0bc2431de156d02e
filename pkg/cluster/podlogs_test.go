package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/substrate/density/pkg/cluster"
)

// LogPod is one pod of a LogServer: its logs by container ("name" and
// "name/previous"), restart counts, and faults.
type LogPod struct {
	Namespace, Name, Node string
	Labels                map[string]string
	Restarts              map[string]int32
	Logs                  map[string]string
	Status                int  // non-zero: the log GET answers this code
	Slow                  bool // the log streams a line, then hangs until the client gives up
}

// LogServer speaks enough of the Kubernetes API for ReadPodLogs: pod lists
// (labelSelector "k" or "k=v") and pods/{name}/log with container,
// previous, sinceTime and limitBytes. It records every request.
type LogServer struct {
	mu       sync.Mutex
	pods     []LogPod
	reqs     []string
	listFail map[string]bool
	srv      *httptest.Server
}

func NewLogServer(t *testing.T, pods []LogPod, listFail ...string) (*LogServer, kubernetes.Interface) {
	t.Helper()
	s := &LogServer{pods: pods, listFail: map[string]bool{}}
	for _, ns := range listFail {
		s.listFail[ns] = true
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: s.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// Requests are "path?query" with the query keys sorted (limit and
// continue of lists dropped).
func (s *LogServer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *LogServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Del("limit")
	q.Del("continue")
	s.mu.Lock()
	s.reqs = append(s.reqs, r.URL.Path+"?"+q.Encode())
	s.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// api v1 namespaces {ns} pods [{name} log]
	if len(parts) < 5 || parts[0] != "api" || parts[2] != "namespaces" || parts[4] != "pods" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ns := parts[3]
	if len(parts) == 5 {
		if s.listFail[ns] {
			writeStatus(w, http.StatusForbidden, "pods is forbidden")
			return
		}
		sel := q.Get("labelSelector")
		k, v, hasV := strings.Cut(sel, "=")
		list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
		for _, p := range s.pods {
			lv, ok := p.Labels[k]
			if p.Namespace != ns || !ok || (hasV && lv != v) {
				continue
			}
			pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, Labels: p.Labels}, Spec: corev1.PodSpec{NodeName: p.Node}}
			for c, n := range p.Restarts {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c, RestartCount: n})
			}
			list.Items = append(list.Items, pod)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
		return
	}
	if len(parts) != 7 || parts[6] != "log" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	for _, p := range s.pods {
		if p.Namespace != ns || p.Name != parts[5] {
			continue
		}
		if p.Status != 0 {
			writeStatus(w, p.Status, "boom")
			return
		}
		key := q.Get("container")
		if q.Get("previous") == "true" {
			key += "/previous"
		}
		log, ok := p.Logs[key]
		if !ok {
			writeStatus(w, http.StatusBadRequest, "previous terminated container not found")
			return
		}
		if n := q.Get("limitBytes"); n != "" {
			var lim int
			fmt.Sscan(n, &lim)
			if lim < len(log) {
				log = log[:lim]
			}
		}
		if p.Slow {
			_, _ = io.WriteString(w, log[:strings.IndexByte(log, '\n')+1])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, log)
		return
	}
	writeStatus(w, http.StatusNotFound, "pod not found")
}

func writeStatus(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: "Failure", Code: int32(code), Message: msg})
}

func TestReadPodLogs(t *testing.T) {
	atelet := map[string]string{"app": "atelet"}
	worker := map[string]string{"ate.dev/worker-pool": "benchmark-ateom"}
	big := strings.Repeat("x", 3000) + "\n"
	pods := []LogPod{
		{Namespace: "benchmark-workloads", Name: "w-b", Node: "n1", Labels: worker, Logs: map[string]string{"ateom": "wb\n"}},
		{Namespace: "ate-system", Name: "atelet-b", Node: "n2", Labels: atelet, Logs: map[string]string{"atelet": "ab\n"}},
		{Namespace: "ate-system", Name: "atelet-a", Node: "n1", Labels: atelet, Restarts: map[string]int32{"atelet": 2, "sidecar": 0},
			Logs: map[string]string{"atelet": "aa\n", "atelet/previous": "aa-prev\n"}},
		{Namespace: "ate-system", Name: "other", Node: "n1", Labels: map[string]string{"app": "x"}, Logs: map[string]string{"atelet": "no\n"}},
		{Namespace: "benchmark-workloads", Name: "w-a", Node: "n1", Labels: worker, Restarts: map[string]int32{"ateom": 1}, Logs: map[string]string{"ateom": "wa\n"}},
		{Namespace: "benchmark-workloads", Name: "w-c-500", Node: "n1", Labels: worker, Status: 500},
		{Namespace: "benchmark-workloads", Name: "w-d-slow", Node: "n1", Labels: worker, Slow: true, Logs: map[string]string{"ateom": "first\nsecond\n"}},
		{Namespace: "benchmark-workloads", Name: "w-e-big", Node: "n1", Labels: worker, Logs: map[string]string{"ateom": big + big}},
		{Namespace: "benchmark-workloads", Name: "w-f-pending", Labels: worker},
	}
	srv, c := NewLogServer(t, pods)
	since := time.Date(2026, 9, 23, 9, 59, 0, 0, time.UTC)
	var got []string
	res := cluster.ReadPodLogs(context.Background(), c, cluster.LogOptions{
		Since: since, ReadTimeout: 500 * time.Millisecond, MaxBytes: 4000,
	}, func(r io.Reader, src cluster.LogSource) error {
		var b bytes.Buffer
		if _, err := io.Copy(&b, r); err != nil {
			return err
		}
		got = append(got, src.String()+": "+strings.TrimSpace(b.String()[:min(b.Len(), 10)]))
		return nil
	})
	want := []string{
		"ate-system/atelet-a: aa",
		"ate-system/atelet-a (previous): aa-prev",
		"ate-system/atelet-b: ab",
		"benchmark-workloads/w-a: wa",
		"benchmark-workloads/w-b: wb",
		"benchmark-workloads/w-e-big: " + strings.Repeat("x", 10),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read:\n%s", strings.Join(got, "\n"))
	}
	if res.PodsRead != 5 || res.PodsFailed != 2 {
		t.Errorf("read %d failed %d", res.PodsRead, res.PodsFailed)
	}
	notices := strings.Join(res.Notices, "\n")
	for _, w := range []string{
		"previous log of pod benchmark-workloads/w-a (previous)", // missing previous: a notice, still read
		"pod benchmark-workloads/w-c-500: 500",
		"pod benchmark-workloads/w-d-slow: timed out",
		"the log of pod benchmark-workloads/w-e-big was cut",
	} {
		if !strings.Contains(notices, w) {
			t.Errorf("no notice %q in:\n%s", w, notices)
		}
	}
	st := url.QueryEscape(since.Format(time.RFC3339))
	wantReqs := []string{
		"/api/v1/namespaces/ate-system/pods?labelSelector=app%3Datelet",
		"/api/v1/namespaces/ate-system/pods/atelet-a/log?container=atelet&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/ate-system/pods/atelet-a/log?container=atelet&limitBytes=4000&previous=true&sinceTime=" + st,
		"/api/v1/namespaces/ate-system/pods/atelet-b/log?container=atelet&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods?labelSelector=ate.dev%2Fworker-pool",
		"/api/v1/namespaces/benchmark-workloads/pods/w-a/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-a/log?container=ateom&limitBytes=4000&previous=true&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-b/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-c-500/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-d-slow/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-e-big/log?container=ateom&limitBytes=4000&sinceTime=" + st,
	}
	if reqs := srv.Requests(); !reflect.DeepEqual(reqs, wantReqs) {
		t.Errorf("requests:\n%s", strings.Join(reqs, "\n"))
	}
}

func TestReadPodLogsListFailures(t *testing.T) {
	_, c := NewLogServer(t, nil, "ate-system", "benchmark-workloads")
	res := cluster.ReadPodLogs(context.Background(), c, cluster.LogOptions{}, func(io.Reader, cluster.LogSource) error { return nil })
	if res.PodsRead != 0 || res.PodsFailed != 2 || len(res.Notices) != 2 || !strings.Contains(res.Notices[0], "403") {
		t.Fatalf("%+v", res)
	}
}
