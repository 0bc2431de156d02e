// Package kubefake is an HTTP test server that speaks the Kubernetes API's
// list semantics for pods, nodes and events, for testing client-go code
// paths that the fake clientset cannot reach: JSON List objects, label and
// field selectors, limit/continue pagination (pages filled up to the limit
// from the matching items, a continue token whenever unscanned items
// remain, so a last page may be empty, as with an etcd-backed list),
// bearer-token authentication, Status bodies for errors, and injected
// faults (403, 500, slow responses, 410 Expired continue tokens).
//
// Objects come from a Source, which may generate them on the fly so a
// simulated cluster of 100,000 pods costs the test process no memory.
package kubefake

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names, as used in URLs, Faults and Requests.
const (
	Pods   = "pods"
	Nodes  = "nodes"
	Events = "events"
)

// ResourceVersion is the (fixed) resourceVersion of every list.
const ResourceVersion = "4242"

// Source yields the objects of one resource in storage order.
type Source[T any] struct {
	Len int
	At  func(i int) *T
}

// Slice is a Source over fixed items.
func Slice[T any](items ...T) Source[T] {
	return Source[T]{Len: len(items), At: func(i int) *T { return &items[i] }}
}

// Fault is injected on every request to one resource.
type Fault struct {
	// Status, when non-zero, answers every request with a Status of this
	// code (403 Forbidden, 401, 500, ...).
	Status int
	// Delay holds each response this long (or until the client gives up).
	Delay time.Duration
	// ExpireContinue answers the first N requests that carry a continue
	// token with 410 Gone, reason Expired (a compacted snapshot).
	ExpireContinue int
	// AfterPages applies Status only to requests after this many
	// successful pages (a failure mid-pagination).
	AfterPages int
}

// Config describes the cluster the server pretends to be.
type Config struct {
	Pods   Source[corev1.Pod]
	Nodes  Source[corev1.Node]
	Events Source[corev1.Event]
	// Token, when set, is the only bearer token accepted (401 otherwise).
	Token string
	// Faults by resource name.
	Faults map[string]Fault
	// TLS serves HTTPS with httptest's certificate (see Server.CACertPEM).
	TLS bool
	// PodLogNamespaces are where a SelfSubjectAccessReview of get pods/log
	// is allowed (every other review is denied).
	PodLogNamespaces []string
}

// Server is a running fake API server. Close it when done.
type Server struct {
	*httptest.Server
	cfg Config

	mu       sync.Mutex
	requests map[string]int
	expired  map[string]int
	pages    map[string]int
	log      []string
}

// New starts a server.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, requests: map[string]int{}, expired: map[string]int{}, pages: map[string]int{}}
	h := http.HandlerFunc(s.serve)
	if cfg.TLS {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	return s
}

// Requests is the number of requests received for a resource ("" = all).
func (s *Server) Requests(resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if resource == "" {
		n := 0
		for _, v := range s.requests {
			n += v
		}
		return n
	}
	return s.requests[resource]
}

// Log returns the request URIs received, in order.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// CACertPEM is the PEM of the TLS server's certificate (nil without TLS).
func (s *Server) CACertPEM() []byte {
	if s.Certificate() == nil {
		return nil
	}
	return pemEncode(s.Certificate().Raw)
}

// route parses /api/v1/[namespaces/{ns}/]{resource}.
func route(path string) (ns, resource string, ok bool) {
	p := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(p) == 3 && p[0] == "api" && p[1] == "v1":
		return "", p[2], p[2] == Pods || p[2] == Nodes || p[2] == Events
	case len(p) == 5 && p[0] == "api" && p[1] == "v1" && p[2] == "namespaces":
		return p[3], p[4], p[4] == Pods || p[4] == Events
	}
	return "", "", false
}

// accessReviewPath is where client-go creates SelfSubjectAccessReviews.
const accessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

// review answers a SelfSubjectAccessReview from Config.PodLogNamespaces.
func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	var rev authorizationv1.SelfSubjectAccessReview
	if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || r.Method != http.MethodPost {
		writeStatus(w, apierrors.NewBadRequest("a SelfSubjectAccessReview is created with a POST of one"))
		return
	}
	if a := rev.Spec.ResourceAttributes; a != nil {
		rev.Status.Allowed = a.Verb == "get" && a.Resource == "pods" && a.Subresource == "log" && slices.Contains(s.cfg.PodLogNamespaces, a.Namespace)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(rev)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == accessReviewPath {
		s.mu.Lock()
		s.log = append(s.log, r.URL.RequestURI())
		s.mu.Unlock()
		s.review(w, r)
		return
	}
	ns, resource, ok := route(r.URL.Path)
	s.mu.Lock()
	s.log = append(s.log, r.URL.RequestURI())
	if ok {
		s.requests[resource]++
	}
	s.mu.Unlock()
	if !ok {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
		return
	}
	if s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	if r.Method != http.MethodGet || r.URL.Query().Get("watch") != "" {
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: resource}, r.Method))
		return
	}
	f := s.cfg.Faults[resource]
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			// The client gave up: abort without a response (returning
			// normally would send an empty 200 the client might still read).
			panic(http.ErrAbortHandler)
		}
	}
	q := r.URL.Query()
	s.mu.Lock()
	failNow := f.Status != 0 && s.pages[resource] >= f.AfterPages
	expire := q.Get("continue") != "" && s.expired[resource] < f.ExpireContinue
	if expire {
		s.expired[resource]++
	}
	s.mu.Unlock()
	if failNow {
		writeStatus(w, statusFor(f.Status, resource, ns))
		return
	}
	if expire {
		writeStatus(w, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."))
		return
	}

	lsel, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err)))
		return
	}
	fsel, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err)))
		return
	}
	if err := checkFields(resource, fsel); err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			writeStatus(w, apierrors.NewBadRequest("invalid limit"))
			return
		}
	}
	from := 0
	if c := q.Get("continue"); c != "" {
		if from, err = decodeContinue(c); err != nil {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err)))
			return
		}
	}
	match := func(ons string, l map[string]string, f fields.Set) bool {
		return (ns == "" || ns == ons) && lsel.Matches(labels.Set(l)) && fsel.Matches(f)
	}
	var body any
	switch resource {
	case Pods:
		items, next := page(s.cfg.Pods, from, limit, func(p *corev1.Pod) bool {
			return match(p.Namespace, p.Labels, podFields(p))
		})
		body = &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: listMeta(next), Items: items}
	case Nodes:
		items, next := page(s.cfg.Nodes, from, limit, func(n *corev1.Node) bool {
			return match("", n.Labels, nodeFields(n))
		})
		body = &corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, ListMeta: listMeta(next), Items: items}
	case Events:
		items, next := page(s.cfg.Events, from, limit, func(e *corev1.Event) bool {
			return match(e.Namespace, e.Labels, eventFields(e))
		})
		body = &corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}, ListMeta: listMeta(next), Items: items}
	}
	s.mu.Lock()
	s.pages[resource]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// page scans src from index from, collecting up to limit matches (all
// when limit is 0). next is the index to continue from, -1 when the scan
// reached the end.
func page[T any](src Source[T], from, limit int, keep func(*T) bool) (items []T, next int) {
	items = []T{}
	i := from
	for ; i < src.Len; i++ {
		if limit > 0 && len(items) == limit {
			return items, i
		}
		if it := src.At(i); keep(it) {
			items = append(items, *it)
		}
	}
	return items, -1
}

func listMeta(next int) metav1.ListMeta {
	m := metav1.ListMeta{ResourceVersion: ResourceVersion}
	if next >= 0 {
		m.Continue = encodeContinue(next)
	}
	return m
}

type continueToken struct {
	RV    string `json:"rv"`
	Start int    `json:"start"`
}

func encodeContinue(i int) string {
	b, _ := json.Marshal(continueToken{RV: ResourceVersion, Start: i})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, err
	}
	var t continueToken
	if err := json.Unmarshal(b, &t); err != nil {
		return 0, err
	}
	if t.RV != ResourceVersion || t.Start < 0 {
		return 0, fmt.Errorf("token for another list")
	}
	return t.Start, nil
}

// Field sets the real API server supports for these resources (subset).
func podFields(p *corev1.Pod) fields.Set {
	return fields.Set{
		"metadata.name": p.Name, "metadata.namespace": p.Namespace,
		"spec.nodeName": p.Spec.NodeName, "status.phase": string(p.Status.Phase),
		"spec.restartPolicy": string(p.Spec.RestartPolicy), "spec.schedulerName": p.Spec.SchedulerName,
		"spec.serviceAccountName": p.Spec.ServiceAccountName, "status.podIP": p.Status.PodIP,
	}
}

func nodeFields(n *corev1.Node) fields.Set {
	return fields.Set{"metadata.name": n.Name, "spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
}

func eventFields(e *corev1.Event) fields.Set {
	return fields.Set{
		"metadata.name": e.Name, "metadata.namespace": e.Namespace,
		"involvedObject.kind": e.InvolvedObject.Kind, "involvedObject.namespace": e.InvolvedObject.Namespace,
		"involvedObject.name": e.InvolvedObject.Name, "involvedObject.uid": string(e.InvolvedObject.UID),
		"involvedObject.apiVersion": e.InvolvedObject.APIVersion, "involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath": e.InvolvedObject.FieldPath, "reason": e.Reason,
		"reportingComponent": e.ReportingController, "source": e.Source.Component, "type": e.Type,
	}
}

// checkFields rejects selectors on unsupported fields, as the API does.
func checkFields(resource string, sel fields.Selector) error {
	var known fields.Set
	switch resource {
	case Pods:
		known = podFields(&corev1.Pod{})
	case Nodes:
		known = nodeFields(&corev1.Node{})
	case Events:
		known = eventFields(&corev1.Event{})
	}
	for _, r := range sel.Requirements() {
		if _, ok := known[r.Field]; !ok {
			return fmt.Errorf("field label not supported: %s", r.Field)
		}
	}
	return nil
}

func statusFor(code int, resource, ns string) *apierrors.StatusError {
	gr := schema.GroupResource{Resource: resource}
	switch code {
	case http.StatusForbidden:
		scope := "at the cluster scope"
		if ns != "" {
			scope = fmt.Sprintf("in the namespace %q", ns)
		}
		return apierrors.NewForbidden(gr, "", fmt.Errorf(
			"User \"system:serviceaccount:benchmarking:density\" cannot list resource %q in API group \"\" %s", resource, scope))
	case http.StatusUnauthorized:
		return apierrors.NewUnauthorized("Unauthorized")
	case http.StatusGone:
		return apierrors.NewResourceExpired("too old resource version")
	case http.StatusTooManyRequests:
		return apierrors.NewTooManyRequests("too many requests, please try again later", 0)
	default:
		return apierrors.NewGenericServerResponse(code, "list", gr, "", "injected fault", 0, true)
	}
}

func writeStatus(w http.ResponseWriter, e *apierrors.StatusError) {
	st := e.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

func pemEncode(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
