package cluster

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pageFunc fetches one page with opts, reduces its items, and returns the
// continue token ("" on the last page).
type pageFunc func(ctx context.Context, opts metav1.ListOptions) (string, error)

// paginate lists with Limit + Continue, one request per page, each under
// its own timeout.
//
// An expired continue token (410 Gone, reason Expired: the snapshot the
// token points into was compacted away, typically after ~5 minutes of a
// slow list) restarts the list once from scratch: reset discards what the
// partial list reduced, so the result is still one consistent snapshot. A
// second expiry fails the list and nulls its group. Falling back to an
// unpaginated list (as client-go's pager does) is deliberately avoided: it
// would pull a whole large cluster into one response.
func paginate(ctx context.Context, o Options, base metav1.ListOptions, page pageFunc, reset func()) error {
	opts := base
	opts.Limit = o.PageSize
	restarted := false
	for {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		next, err := page(cctx, opts)
		cancel()
		if err != nil {
			if opts.Continue != "" && !restarted && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) {
				restarted = true
				reset()
				opts.Continue = ""
				continue
			}
			if opts.Continue != "" && restarted && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) {
				// Not wrapped: describe would otherwise print only the status.
				return fmt.Errorf("continue token expired twice (list restarted once): 410 Expired: %s", err.Error())
			}
			return err
		}
		if next == "" {
			return nil
		}
		if next == opts.Continue {
			return errors.New("server returned the same continue token twice")
		}
		opts.Continue = next
	}
}

// describe turns an API error into one plain reason (status code and the
// server's message; never request headers, so no credentials).
func describe(what string, err error) error {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		s := se.Status()
		if s.Reason == metav1.StatusReasonTimeout {
			// client-go reports its own request timeout this way too: say it
			// in the same words as a context deadline.
			return fmt.Errorf("%s: timed out: %d %s: %s", what, s.Code, s.Reason, s.Message)
		}
		return fmt.Errorf("%s: %d %s: %s", what, s.Code, s.Reason, s.Message)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: timed out: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
