package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ReasonEvicted is the event reason the kubelet and the taint manager use.
const ReasonEvicted = "Evicted"

// Evictions are the Evicted events of the worker namespace as read.
// Events live about an hour, so a long run can undercount.
type Evictions struct {
	Items []Eviction
}

// Eviction is one Evicted event, reduced.
type Eviction struct {
	PodUID string    `json:"pod_uid"` // involvedObject.uid
	Pod    string    `json:"pod"`     // involvedObject.name
	Time   time.Time `json:"time"`    // zero when the event has no time at all
}

// Count is the number of distinct pods with an eviction in [start, end]
// (both ends included).
func (e *Evictions) Count(start, end time.Time) int {
	seen := map[string]struct{}{}
	for _, ev := range e.Items {
		if ev.Time.IsZero() || ev.Time.Before(start) || ev.Time.After(end) {
			continue
		}
		seen[ev.PodUID] = struct{}{}
	}
	return len(seen)
}

// eventTime is lastTimestamp, else eventTime, else firstTimestamp.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.FirstTimestamp.Time
	}
}

// ListEvictions lists the Evicted events of the worker namespace (all
// involved objects there, worker-labelled or not, as the spec counts pods
// in the namespace).
func ListEvictions(ctx context.Context, c kubernetes.Interface, o Options) (*Evictions, error) {
	o = o.withDefaults()
	var ev *Evictions
	reset := func() { ev = &Evictions{} }
	reset()
	page := func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		l, err := c.CoreV1().Events(o.WorkerNamespace).List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			e := &l.Items[i]
			// The field selector filters server-side; check again since
			// not every server (or fake) honours it.
			if e.Reason != ReasonEvicted || e.InvolvedObject.UID == "" {
				continue
			}
			ev.Items = append(ev.Items, Eviction{PodUID: string(e.InvolvedObject.UID), Pod: e.InvolvedObject.Name, Time: eventTime(e)})
		}
		return l.Continue, nil
	}
	base := metav1.ListOptions{FieldSelector: "reason=" + ReasonEvicted}
	if err := paginate(ctx, o, base, page, reset); err != nil {
		return nil, describe(fmt.Sprintf("listing Evicted events (namespace %s)", o.WorkerNamespace), err)
	}
	return ev, nil
}
