package cluster

import (
	"context"
	"errors"
	"fmt"

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
