package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/harvest"
)

// Defaults of the pod log reading (phase-breakdown.md); the atelet
// namespace and container are harvest's default selectors.
const (
	DefaultAteletSelector = "app=atelet"
	DefaultLogTimeout     = 60 * time.Second
	DefaultMaxLogBytes    = 256 << 20
)

// LogOptions say which pod logs to read and bound every call. Zero fields
// take the defaults.
type LogOptions struct {
	AteletNamespace, AteletSelector, AteletContainer string
	WorkerNamespace, WorkerLabelKey, WorkerContainer string
	// Since is sinceTime of every log read (the run start − 60 s); zero
	// reads the whole log.
	Since time.Time
	// ListTimeout bounds each page of a pod list; ReadTimeout each log read
	// (the whole stream).
	ListTimeout, ReadTimeout time.Duration
	// MaxBytes is the most read of one log (limitBytes, and enforced while
	// reading).
	MaxBytes int64
	PageSize int64
}

func (o LogOptions) withDefaults() LogOptions {
	d := DefaultOptions()
	sel := harvest.DefaultSelectors()
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.AteletNamespace, sel.AteletNamespace)
	def(&o.AteletSelector, DefaultAteletSelector)
	def(&o.AteletContainer, sel.AteletContainer)
	def(&o.WorkerNamespace, d.WorkerNamespace)
	def(&o.WorkerLabelKey, d.WorkerLabelKey)
	def(&o.WorkerContainer, d.WorkerContainer)
	if o.ListTimeout <= 0 {
		o.ListTimeout = d.Timeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultLogTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxLogBytes
	}
	if o.PageSize <= 0 {
		o.PageSize = d.PageSize
	}
	return o
}

// LogSource is one log as given to the reader: the pod, its container and
// whether it is the previous (restarted) container's log.
type LogSource struct {
	Namespace, Pod, Container string
	Previous                  bool
}

func (s LogSource) String() string {
	if s.Previous {
		return s.Namespace + "/" + s.Pod + " (previous)"
	}
	return s.Namespace + "/" + s.Pod
}

// LogResult counts the pods: read, and failed (a log that could not be
// read, or 1 per namespace whose list failed).
type LogResult struct {
	PodsRead, PodsFailed int
	Notices              []string
}

// ReadPodLogs reads the logs of the atelet pods (AteletSelector in
// AteletNamespace) then of the worker pods (having WorkerLabelKey in
// WorkerNamespace), pods by name, each container log streamed into read,
// followed by its previous log when the container restarted. read must
// discard what it took from a log when it returns an error (the pod is
// then skipped and counted as failed; a failed previous log is a notice).
// Never fatal: failures are counted, with notices.
func ReadPodLogs(ctx context.Context, c kubernetes.Interface, o LogOptions, read func(r io.Reader, src LogSource) error) LogResult {
	o = o.withDefaults()
	var res LogResult
	for _, ns := range []struct{ namespace, selector, container, what string }{
		{o.AteletNamespace, o.AteletSelector, o.AteletContainer, "atelet"},
		{o.WorkerNamespace, o.WorkerLabelKey, o.WorkerContainer, "worker"},
	} {
		pods, err := listLogPods(ctx, c, o, ns.namespace, ns.selector)
		if err != nil {
			res.PodsFailed++
			res.Notices = append(res.Notices, describe(fmt.Sprintf("listing %s pods (namespace %s, selector %s)", ns.what, ns.namespace, ns.selector), err).Error())
			continue
		}
		for _, p := range pods {
			if p.node == "" {
				continue // not scheduled yet: no log, not a failure
			}
			src := LogSource{Namespace: ns.namespace, Pod: p.name, Container: ns.container}
			if err := readOneLog(ctx, c, o, src, read, &res); err != nil {
				res.PodsFailed++
				res.Notices = append(res.Notices, describe("reading the log of pod "+src.String(), err).Error())
				continue
			}
			res.PodsRead++
			if p.restarts[ns.container] > 0 {
				src.Previous = true
				if err := readOneLog(ctx, c, o, src, read, &res); err != nil {
					res.Notices = append(res.Notices, describe("reading the previous log of pod "+src.String(), err).Error())
				}
			}
		}
	}
	return res
}

type logPod struct {
	name, node string
	restarts   map[string]int32
}

func listLogPods(ctx context.Context, c kubernetes.Interface, o LogOptions, namespace, selector string) ([]logPod, error) {
	var pods []logPod
	page := func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		l, err := c.CoreV1().Pods(namespace).List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			p := &l.Items[i]
			lp := logPod{name: p.Name, node: p.Spec.NodeName, restarts: map[string]int32{}}
			for _, cs := range p.Status.ContainerStatuses {
				lp.restarts[cs.Name] = cs.RestartCount
			}
			pods = append(pods, lp)
		}
		return l.Continue, nil
	}
	lo := Options{PageSize: o.PageSize, Timeout: o.ListTimeout}
	if err := paginate(ctx, lo, metav1.ListOptions{LabelSelector: selector}, page, func() { pods = nil }); err != nil {
		return nil, err
	}
	slices.SortFunc(pods, func(a, b logPod) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return pods, nil
}

// readOneLog streams one log under ReadTimeout, at most MaxBytes.
func readOneLog(ctx context.Context, c kubernetes.Interface, o LogOptions, src LogSource, read func(io.Reader, LogSource) error, res *LogResult) error {
	ctx, cancel := context.WithTimeout(ctx, o.ReadTimeout)
	defer cancel()
	opts := &corev1.PodLogOptions{Container: src.Container, Previous: src.Previous, LimitBytes: &o.MaxBytes}
	if !o.Since.IsZero() {
		opts.SinceTime = &metav1.Time{Time: o.Since}
	}
	body, err := c.CoreV1().Pods(src.Namespace).GetLogs(src.Pod, opts).Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	lr := &limitedReader{r: body, left: o.MaxBytes}
	if err := read(lr, src); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("timed out after %s: %w", o.ReadTimeout, ctx.Err())
		}
		return err
	}
	// A log of exactly MaxBytes is reported as cut too: the server's
	// limitBytes leaves no way to tell.
	if lr.cut || lr.left == 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("the log of pod %s was cut at %d MiB (--phase-max-log-mb)", src, o.MaxBytes>>20))
	}
	return nil
}

// limitedReader reads at most left bytes; cut says more were offered.
type limitedReader struct {
	r    io.Reader
	left int64
	cut  bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.cut = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
