package promql

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// transport wraps the caller's RoundTripper with bounded retries of the
// failures that are safe to retry (every request of this package is an
// idempotent read) and with the response size limit.
type transport struct {
	next     http.RoundTripper
	maxBytes int64
	retries  int
	maxWait  time.Duration
}

// baseBackoff is the first wait between attempts when the server gives no
// Retry-After; it doubles per attempt.
const baseBackoff = 100 * time.Millisecond

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := t.next.RoundTrip(r)
		if attempt < t.retries && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil) {
			if wait, ok := t.retryWait(attempt, resp, err); ok && fitsDeadline(ctx, wait) {
				if resp != nil {
					drainClose(resp.Body)
				}
				if err := sleep(ctx, wait); err != nil {
					return nil, err
				}
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		if t.maxBytes > 0 {
			if resp.ContentLength > t.maxBytes {
				drainClose(resp.Body)
				return nil, &ResponseTooLargeError{Limit: t.maxBytes}
			}
			resp.Body = LimitBody(resp.Body, t.maxBytes)
		}
		return resp, nil
	}
}

// retryWait says whether an attempt's outcome is worth retrying and after how
// long. A Retry-After longer than maxWait is honoured by not retrying at all
// (retrying sooner than asked would only add load to a struggling server).
func (t *transport) retryWait(attempt int, resp *http.Response, err error) (time.Duration, bool) {
	backoff := baseBackoff << attempt
	if backoff > t.maxWait {
		backoff = t.maxWait
	}
	if err != nil {
		// A reset or a connection closed before any answer: the server (or a
		// proxy) dropped us mid-flight. Refused connections are not retried:
		// nothing is listening and the request timeout is better spent
		// failing fast.
		if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return backoff, true
		}
		return 0, false
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if ra, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			if ra > t.maxWait {
				return 0, false
			}
			backoff = ra
		}
		return backoff, true
	}
	return 0, false
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	if h == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(h); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(h); err == nil {
		d := at.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// fitsDeadline reports whether waiting d still leaves time for another
// attempt before ctx's deadline (retries live inside the request timeout).
func fitsDeadline(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	if !ok {
		return true
	}
	return time.Until(deadline) > d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// drainClose reads a little of a discarded body so the connection can be
// reused, then closes it.
func drainClose(rc io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	_ = rc.Close()
}
