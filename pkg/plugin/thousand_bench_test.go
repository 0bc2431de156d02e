//go:build linux

package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/substrate/density/internal/cputime"
	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts/command"
)

// BenchmarkThousandStoredRuns is `summary` over the range, `changePoints`
// (over gRPC) and `density regressions` over a store of 1,000 nightly runs
// written from one template run, rich (its stats.jsonl with a ladder and
// 65 phase rows, as exported with pod logs) and plain (the same without
// those rows), at the default storedRunCacheMiB: cold (a new datasource instance each
// time) and warm (the identical next query of the same instance). It
// reports the stored files opened and directories listed per query
// (inotify on the store's directories), the answer's bytes (Arrow, as
// Grafana receives it) and the notices on the busiest frame; B/op is the
// memory allocated. docs/performance.md "A thousand stored runs".
func BenchmarkThousandStoredRuns(b *testing.B) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	tmpl, promURL := storetest.Template(b)
	plain := plainTemplate(b, tmpl)
	for _, store := range []struct{ name, tmpl string }{{"rich", tmpl}, {"plain", plain}} {
		m, err := storetest.WriteMany(store.tmpl, b.TempDir(), 1000, now)
		if err != nil {
			b.Fatal(err)
		}
		m.PromURL = promURL
		b.Run(store.name, func(b *testing.B) { benchThousand(b, m, now) })
	}
}

// plainTemplate is a copy of the template run whose stats.jsonl holds no
// phase or ladder rows: a plain run beside the rich one.
func plainTemplate(b *testing.B, tmpl string) string {
	dir := b.TempDir()
	des, err := os.ReadDir(tmpl)
	if err != nil {
		b.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(tmpl, de.Name())) // #nosec G304 -- the template run the benchmark wrote
		if err != nil {
			b.Fatal(err)
		}
		if de.Name() == runs.FileStatsJSONL {
			var out bytes.Buffer
			err = artifact.ScanRows(bytes.NewReader(data), func(l artifact.Line) error {
				if l.Row != nil {
					if f := artifact.FamilyOf(l.Row.Metric); f == artifact.FamilyPhases || f == artifact.FamilyLadder {
						return nil
					}
				}
				out.Write(l.Raw)
				out.WriteByte('\n')
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			data = out.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, de.Name()), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func benchThousand(b *testing.B, m *storetest.Many, now time.Time) {
	w := watchOpens(b, m.Root)
	from, to := m.Runs[0].Start-day, m.Runs[len(m.Runs)-1].Start+day
	newEnv := func(i int) *env {
		return &env{
			name: "thousand", storeRoot: m.Root, promURL: m.PromURL, now: now,
			jsonData: map[string]any{"resultsStore": m.URL, "discoverRuns": false, "timeoutSeconds": 120},
			uid:      fmt.Sprintf("ds-thousand-%d-%d", envSeq.Add(1), i),
		}
	}
	grpc := func(model map[string]any) func(b *testing.B, e *env) answer {
		return func(b *testing.B, e *env) answer {
			r := e.query(b, e.client(b), q("A", from, to, model))["A"]
			if r.Error != nil {
				b.Fatalf("%v: %v", model, r.Error)
			}
			var a answer
			for _, f := range r.Frames {
				arrow, err := f.MarshalArrow()
				if err != nil {
					b.Fatal(err)
				}
				a.bytes += len(arrow)
				if f.Meta != nil {
					a.notices = max(a.notices, len(f.Meta.Notices))
				}
			}
			return a
		}
	}
	cli := func(b *testing.B, _ *env) answer {
		var out, errOut bytes.Buffer
		env := command.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		code := command.RegressionsCommand(env).Main(context.Background(), []string{"--store", m.URL, "--test-name", m.TestName, "--json"}, env.Stdout, env.Stderr)
		if code != 0 && code != 4 {
			b.Fatalf("density regressions: exit %d: %s", code, errOut.String())
		}
		return answer{bytes: out.Len(), notices: bytes.Count(errOut.Bytes(), []byte("\n"))}
	}
	for _, c := range []struct {
		name string
		run  func(*testing.B, *env) answer
	}{
		{"summary", grpc(map[string]any{"queryType": "summary", "run": "range", "testName": m.TestName})},
		{"changePoints", grpc(map[string]any{"queryType": "changePoints", "testName": m.TestName})},
		{"freshness", grpc(map[string]any{"queryType": "freshness", "testName": m.TestName})},
		{"summaryNumeric", grpc(map[string]any{"queryType": "summary", "run": "range", "testName": m.TestName, "format": "numeric"})},
		{"regressions", cli},
	} {
		for _, mode := range []string{"cold", "warm"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				var a answer
				var files, dirs int
				var cpu time.Duration
				for i := range b.N {
					b.StopTimer()
					e := newEnv(i)
					if mode == "warm" {
						c.run(b, e)
					}
					w.take(b)
					runtime.GC()
					b.StartTimer()
					c0 := cputime.Now(b)
					a = c.run(b, e)
					cpu += cputime.Now(b) - c0
					b.StopTimer()
					f, d := w.take(b)
					files, dirs = files+f, dirs+d
					b.StartTimer()
				}
				// CPU time: the process's, the plugin serving in it included.
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(files)/float64(b.N), "files/op")
				b.ReportMetric(float64(dirs)/float64(b.N), "dirs/op")
				b.ReportMetric(float64(a.bytes), "answer-B")
				b.ReportMetric(float64(a.notices), "notices/frame")
			})
		}
	}
}

type answer struct{ bytes, notices int }

// openWatch counts the files and directories opened under a tree through
// inotify: the kernel's count of opens, whoever opens them.
type openWatch struct {
	f      *os.File
	marker string
	mu     sync.Mutex
	cond   *sync.Cond
	files  int
	dirs   int
	marks  int
	err    error
}

func watchOpens(b *testing.B, root string) *openWatch {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		b.Fatalf("inotify: %v", err)
	}
	w := &openWatch{f: os.NewFile(uintptr(fd), "inotify"), marker: filepath.Join(root, ".opens-marker")}
	w.cond = sync.NewCond(&w.mu)
	if err := os.WriteFile(w.marker, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		_, err = unix.InotifyAddWatch(fd, path, unix.IN_OPEN)
		return err
	})
	if err != nil {
		b.Fatalf("watching %s: %v", root, err)
	}
	b.Cleanup(func() { _ = w.f.Close() })
	go w.read()
	return w
}

func (w *openWatch) read() {
	buf := make([]byte, 1<<16)
	for {
		n, err := w.f.Read(buf)
		w.mu.Lock()
		if err != nil {
			w.err = err
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			l := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l], "\x00"))
			switch {
			case mask&unix.IN_Q_OVERFLOW != 0:
				w.err = fmt.Errorf("inotify queue overflowed")
			case name == filepath.Base(w.marker):
				w.marks++
			case mask&unix.IN_ISDIR != 0:
				w.dirs++
			default:
				w.files++
			}
			off += unix.SizeofInotifyEvent + l
		}
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

// take returns the opens since the last take: it opens the marker file and
// waits for its event, which the kernel queues after every earlier open.
func (w *openWatch) take(b *testing.B) (files, dirs int) {
	w.mu.Lock()
	want := w.marks + 1
	w.mu.Unlock()
	f, err := os.Open(w.marker)
	if err != nil {
		b.Fatal(err)
	}
	_ = f.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.marks < want && w.err == nil {
		w.cond.Wait()
	}
	if w.err != nil {
		b.Fatalf("counting opens: %v", w.err)
	}
	files, dirs = w.files, w.dirs
	w.files, w.dirs = 0, 0
	return files, dirs
}
