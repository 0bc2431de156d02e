package demo

import (
	"bytes"
	"sync"
)

var mu sync.Mutex

type syncWriter struct{ w *bytes.Buffer }

func (s *syncWriter) Write(p []byte) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	return s.w.Write(p)
}

func readSync(b *bytes.Buffer) string {
	mu.Lock()
	defer mu.Unlock()
	return b.String()
}
