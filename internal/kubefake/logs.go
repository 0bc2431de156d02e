package kubefake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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

// NewLogServer serves pods (plain HTTP on 127.0.0.1, no auth); a list in
// a namespace of listFail answers 403. Close it when done.
func NewLogServer(pods []LogPod, listFail ...string) *LogServer {
	s := &LogServer{pods: pods, listFail: map[string]bool{}}
	for _, ns := range listFail {
		s.listFail[ns] = true
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewTLSLogServer is NewLogServer serving HTTPS with httptest's
// certificate (see CACertPEM), for clients that send a token only over TLS.
func NewTLSLogServer(pods []LogPod, listFail ...string) *LogServer {
	s := &LogServer{pods: pods, listFail: map[string]bool{}}
	for _, ns := range listFail {
		s.listFail[ns] = true
	}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server.
func (s *LogServer) Close() { s.srv.Close() }

// URL is the server's base URL.
func (s *LogServer) URL() string { return s.srv.URL }

// CACertPEM is the PEM of the TLS server's certificate (nil without TLS).
func (s *LogServer) CACertPEM() []byte {
	if s.srv.Certificate() == nil {
		return nil
	}
	return pemEncode(s.srv.Certificate().Raw)
}

// Client is a client-go clientset talking to the server.
func (s *LogServer) Client() (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(&rest.Config{Host: s.srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: s.CACertPEM()}})
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
			writeLogStatus(w, http.StatusForbidden, "pods is forbidden")
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
			writeLogStatus(w, p.Status, "boom")
			return
		}
		key := q.Get("container")
		if q.Get("previous") == "true" {
			key += "/previous"
		}
		log, ok := p.Logs[key]
		if !ok {
			writeLogStatus(w, http.StatusBadRequest, "previous terminated container not found")
			return
		}
		if n := q.Get("limitBytes"); n != "" {
			var lim int
			_, _ = fmt.Sscan(n, &lim)
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
	writeLogStatus(w, http.StatusNotFound, "pod not found")
}

func writeLogStatus(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: "Failure", Code: int32(code), Message: msg}) // #nosec G115 -- an HTTP status code
}
