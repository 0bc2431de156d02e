package phases

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// synthLog is an io.Reader producing a synthetic node log of about size
// bytes, generated as it is read (nothing is stored): blocks of the four
// records of one actor's resume and suspend amid ordinary log lines (JSON
// and text). pad adds a field of that many bytes to every record line and
// makes every tenth noise line that long too.
type synthLog struct {
	size, pad int
	blocks    int // stop after this many blocks (0: only size limits)
	done      int
	block     int
	buf, back []byte
	padText   string
}

func newSynthLog(size, pad, blocks int) *synthLog {
	return &synthLog{size: size, pad: pad, blocks: blocks, padText: strings.Repeat("p", pad)}
}

func (s *synthLog) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.done >= s.size || (s.blocks > 0 && s.block >= s.blocks) {
			return 0, io.EOF
		}
		s.fill()
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	s.done += n
	return n, nil
}

func (s *synthLog) fill() {
	i := s.block
	s.block++
	sec := 1790157600 + i
	ts := time.Unix(int64(sec), 0).UTC().Format("2006-01-02T15:04:05")
	padField := ""
	if s.pad > 0 {
		padField = `,"stack":"` + s.padText + `"`
	}
	b := s.back[:0]
	for n := range 60 {
		switch {
		case s.pad > 0 && n%10 == 0:
			b = fmt.Appendf(b, "%s.000Z level=debug msg=%q\n", ts, s.padText)
		case n%3 == 0:
			b = fmt.Appendf(b, "%s.%06dZ INFO reconcile loop finished in 12.5ms for sandbox sb-%d (generation %d)\n", ts, n, i, n)
		default:
			b = fmt.Appendf(b, `{"time":"%s.%06dZ","level":"INFO","msg":"sandbox state changed","ate.actor.uid":"u%d","from":"Running","to":"Suspending","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`+"\n", ts, n, i)
		}
	}
	b = fmt.Appendf(b, `{"time":"%s.100000Z","level":"INFO","msg":"Restore timing breakdown","ate.actor.uid":"u%d","ate.actor.name":"sb-%d","ate.snapshot.scope":"full","ate.snapshot.kind":"latest","ate.sandbox.class":"microvm","ate.actor.restore.duration.download":0.%03d,"ate.actor.restore.duration.ateom_restore":0.5,"ate.actor.restore.duration.total":1.%03d%s}`+"\n", ts, i, i, i%1000, i%997, padField)
	b = fmt.Appendf(b, `[pod/w-%d/worker] {"time":"%s.050000Z","msg":"Restore timing breakdown","ate.actor.uid":"u%d","ate.snapshot.scope":"full","ateom.actor.restore.duration.vm_restore":0.%03d,"ateom.actor.restore.duration.total":0.5%s}`+"\n", i%50, ts, i, i%991, padField)
	b = fmt.Appendf(b, `{"time":"%s.900000Z","level":"INFO","msg":"Checkpoint timing breakdown","ate.actor.uid":"u%d","ate.snapshot.scope":"full","ate.snapshot.kind":"latest","ate.sandbox.class":"microvm","ate.actor.checkpoint.duration.sandbox_assets":0.01,"ate.actor.checkpoint.duration.ateom_checkpoint":0.3,"ate.actor.checkpoint.duration.persist":0.%03d,"ate.actor.checkpoint.duration.total":0.9%s}`+"\n", ts, i, i%983, padField)
	b = fmt.Appendf(b, `{"time":"%s.500000Z","msg":"Checkpoint timing breakdown","ate.actor.uid":"u%d","ateom.actor.checkpoint.duration.pause":0.01,"ateom.actor.checkpoint.duration.snapshot":0.%03d,"ateom.actor.checkpoint.duration.durable_dir":0.1,"ateom.actor.checkpoint.duration.total":0.3%s}`+"\n", ts, i, i%977, padField)
	s.back, s.buf = b, b
}

// peakHeap samples the heap in use until stopped and returns its maximum.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	var wg sync.WaitGroup
	quit := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(quit)
		wg.Wait()
		sample()
		return peak.Load()
	}
}

// BenchmarkReadLog reads a 1 GiB synthetic log (records/s) and reports the
// heap per record: retained after the read (the records themselves) and at
// its peak (garbage included). The long-lines variant holds fewer records in
// 16 KiB lines over the same 1 GiB; the short-lines variant holds exactly as
// many records as that one in short lines (about 1/14 of the bytes): equal
// heap per record shows that memory follows records, not bytes or line
// length.
func BenchmarkReadLog(b *testing.B) {
	const longBlocks = 6100 // just under 1 GiB with 16 KiB lines
	for _, bc := range []struct {
		name              string
		size, pad, blocks int
	}{
		{"1GiB", 1 << 30, 0, 0},
		{"1GiB-16KiB-lines", 1 << 30, 16 << 10, longBlocks},
		{"same-records-short-lines", 1 << 30, 0, longBlocks},
	} {
		b.Run(bc.name+"/generator-only", func(b *testing.B) {
			for b.Loop() {
				log := newSynthLog(bc.size, bc.pad, bc.blocks)
				start := time.Now()
				n, _ := io.Copy(io.Discard, log)
				b.ReportMetric(float64(n)/time.Since(start).Seconds()/(1<<20), "MiB/s")
			}
		})
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				stop := peakHeap()
				c := NewCollector()
				log := newSynthLog(bc.size, bc.pad, bc.blocks)
				start := time.Now()
				if err := c.ReadLog(log, "synthetic"); err != nil {
					b.Fatal(err)
				}
				el := time.Since(start)
				peak := stop()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				n := float64(c.Stats.Records)
				b.ReportMetric(n/el.Seconds(), "records/s")
				b.ReportMetric(float64(log.done)/el.Seconds()/(1<<20), "MiB/s")
				b.ReportMetric(float64(log.done)/(1<<20), "MiB")
				b.ReportMetric(n, "records")
				b.ReportMetric((float64(after.HeapAlloc)-float64(base.HeapAlloc))/n, "retained-B/record")
				b.ReportMetric((float64(peak)-float64(base.HeapInuse))/n, "peak-heap-B/record")
				Analyze(c.Records)
				if len(Groups(c.Records)) == 0 {
					b.Fatal("no groups")
				}
				runtime.KeepAlive(c)
			}
		})
	}
}
