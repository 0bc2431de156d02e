package promql

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// ResponseTooLargeError is returned when an answer exceeds
// Config.MaxResponseBytes.
type ResponseTooLargeError struct{ Limit int64 }

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("response larger than the MaxResponseBytes limit of %d bytes", e.Limit)
}

// limitedBody fails the read once more than limit bytes arrive.
//
// It also keeps Close from running concurrently with Read on the wrapped
// body: api.Client.Do reads the body in a goroutine and, when the context
// ends, closes it from another, and some bodies (Grafana's httpclient
// counts bytes in a plain field) are not safe for that (a data race the
// race detector reported). A Close during a Read is carried out when that
// Read returns, which the request's context makes prompt.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64

	mu      sync.Mutex
	reading bool
	closed  bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, errBodyClosed
	}
	b.reading = true
	b.mu.Unlock()
	n, err := b.read(p)
	b.mu.Lock()
	b.reading = false
	if b.closed {
		_ = b.rc.Close()
	}
	b.mu.Unlock()
	return n, err
}

// errBodyClosed is what a read after Close returns (like net/http's).
var errBodyClosed = errors.New("http: read on closed response body")

func (b *limitedBody) read(p []byte) (int, error) {
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

func (b *limitedBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.reading {
		return nil // the Read in progress closes the body when it returns
	}
	return b.rc.Close()
}
