package promql

import (
	"fmt"
	"io"
)

// ResponseTooLargeError is returned when an answer exceeds
// Config.MaxResponseBytes.
type ResponseTooLargeError struct{ Limit int64 }

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("response larger than the MaxResponseBytes limit of %d bytes", e.Limit)
}

// LimitBody wraps rc so that reading more than limit bytes fails with
// *ResponseTooLargeError: the limit the client applies to every answer,
// for callers reading Prometheus answers outside it (health probes).
func LimitBody(rc io.ReadCloser, limit int64) io.ReadCloser {
	return &limitedBody{rc: rc, left: limit, limit: limit}
}

// limitedBody fails the read once more than limit bytes arrive.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Probe: a body of exactly limit bytes is fine, one byte more is not.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &ResponseTooLargeError{Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
