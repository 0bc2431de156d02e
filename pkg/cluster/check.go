package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CheckAccess verifies the permissions discovery needs (deploy/rbac.yaml):
// list nodes, and list pods and events in the worker namespace, with one
// single-item list each. It returns nil when all three work, otherwise one
// error naming each failed permission. A nil client returns ErrOff.
func CheckAccess(ctx context.Context, c kubernetes.Interface, o Options) error {
	o = o.withDefaults()
	if c == nil {
		return ErrOff
	}
	one := metav1.ListOptions{Limit: 1}
	checks := []struct {
		what string
		list func(context.Context) error
	}{
		{"list nodes", func(ctx context.Context) error { _, err := c.CoreV1().Nodes().List(ctx, one); return err }},
		{"list pods in " + o.WorkerNamespace, func(ctx context.Context) error {
			_, err := c.CoreV1().Pods(o.WorkerNamespace).List(ctx, one)
			return err
		}},
		{"list events in " + o.WorkerNamespace, func(ctx context.Context) error {
			_, err := c.CoreV1().Events(o.WorkerNamespace).List(ctx, one)
			return err
		}},
	}
	var errs []error
	for _, ch := range checks {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		err := ch.list(cctx)
		cancel()
		if err != nil {
			errs = append(errs, describe(ch.what, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("kubernetes access: %w", errors.Join(errs...))
	}
	return nil
}

// CheckLogAccess asks the API server (a SelfSubjectAccessReview per
// namespace) whether this identity may get pods/log in each of namespaces,
// which is what the phase breakdown reads; a review needs no permission of
// its own. It returns the namespaces where it may not; err is a failed
// review.
func CheckLogAccess(ctx context.Context, c kubernetes.Interface, timeout time.Duration, namespaces ...string) (denied []string, err error) {
	if c == nil {
		return nil, ErrOff
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	for _, ns := range namespaces {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(cctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: "get", Resource: "pods", Subresource: "log",
			}},
		}, metav1.CreateOptions{})
		cancel()
		if err != nil {
			return nil, describe("reviewing get pods/log in "+ns, err)
		}
		if !r.Status.Allowed {
			denied = append(denied, ns)
		}
	}
	return denied, nil
}
