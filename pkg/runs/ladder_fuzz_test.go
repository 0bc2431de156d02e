package runs

import (
	"bytes"
	"reflect"
	"testing"
	"testing/iotest"
	"time"
)

func FuzzReadLadder(f *testing.F) {
	f.Add([]byte(ladderLog), int64(30), int64(5))
	f.Add([]byte("[2026-01-01 00:00:00,000] Ladder step 1/2: users=1 target_rps=unchanged\n[2026-01-01 00:00:01,000] Ladder step 1/2: users=2\n"), int64(0), int64(0))
	f.Add([]byte("[2026-02-30 00:00:00,000] Ladder step 9/1: users=1e3\n[2026-01-01 00:00:00,000] Ladder complete after"), int64(-5), int64(99))
	f.Fuzz(func(t *testing.T, data []byte, ts, te int64) {
		if ts < -1e6 || ts > 1e6 || te < -1e6 || te > 1e6 {
			return
		}
		l1, err1 := ReadLadder(bytes.NewReader(data), time.UTC)
		l2, err2 := ReadLadder(iotest.OneByteReader(bytes.NewReader(data)), time.UTC)
		if err1 != nil || err2 != nil {
			t.Fatalf("read errors from memory: %v %v", err1, err2)
		}
		if !reflect.DeepEqual(l1, l2) {
			t.Fatalf("result depends on read sizes")
		}
		for i, s := range l1.Steps {
			if s.Number < 1 || s.Of < 1 || s.Users < 0 || (s.TargetRPS != nil && *s.TargetRPS < 0) {
				t.Fatalf("step %d: %+v", i, s)
			}
			if s.EndMs == nil && i != len(l1.Steps)-1 {
				t.Fatalf("step %d of %d has no end", i+1, len(l1.Steps))
			}
			w := s.Window(ts, te)
			if w.Skipped == "" && w.B <= w.A {
				t.Fatalf("empty window not skipped: %+v", w)
			}
		}
	})
}
