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
