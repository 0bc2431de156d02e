package promql

import (
	"errors"
	"io"
	"testing"
)

// countingBody mimics Grafana's httpclient countBytesReader: Read and Close
// both touch a plain field, so they must not run at the same time.
type countingBody struct {
	n       int
	release chan struct{}
	entered chan struct{}
	closes  int
}

func (c *countingBody) Read(p []byte) (int, error) {
	c.entered <- struct{}{}
	<-c.release
	c.n += len(p)
	return len(p), nil
}

func (c *countingBody) Close() error { c.closes++; _ = c.n; return nil }

// api.Client.Do closes the body from one goroutine while another reads it
// when the request's context ends; limitedBody must serialize the two (run
// with -race) and close the wrapped body exactly once.
func TestLimitedBodyCloseDuringRead(t *testing.T) {
	cb := &countingBody{release: make(chan struct{}), entered: make(chan struct{})}
	b := &limitedBody{rc: cb, left: 1 << 20, limit: 1 << 20}
	done := make(chan error)
	go func() {
		_, err := b.Read(make([]byte, 8))
		done <- err
	}()
	<-cb.entered
	if err := b.Close(); err != nil { // while the Read is blocked
		t.Fatal(err)
	}
	close(cb.release)
	if err := <-done; err != nil {
		t.Fatalf("read in flight: %v", err)
	}
	if cb.closes != 1 {
		t.Errorf("wrapped body closed %d times, want 1 (after the read)", cb.closes)
	}
	if _, err := b.Read(make([]byte, 8)); !errors.Is(err, errBodyClosed) {
		t.Errorf("read after close: %v, want %v", err, errBodyClosed)
	}
	if err := b.Close(); err != nil || cb.closes != 1 {
		t.Errorf("second Close: %v, %d closes", err, cb.closes)
	}
	var _ io.ReadCloser = b
}
