package export

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/substrate/density/pkg/cli"
)

// modulePrefix is the import path prefix of this repository's packages.
const modulePrefix = "github.com/substrate/density/"

// TestFirstPrometheusRequestPath records the call stack at the export's
// Prometheus requests, from `density export`'s entry (Main) to the HTTP
// round trip: the request goroutine's frames (runtime.Callers) and those
// of the goroutines that started it, still waiting for it (runtime.Stack's
// "created by ... in goroutine N"), collapsed to the sequence of this
// repository's packages. It logs the first request's and every distinct
// one on a ladder run (blocks and ladder steps read). Every read is one
// pass down the layers: the export hands the run to the engine, the
// engine to harvest or the ladder, those to promql; no package is entered
// twice below the export, none bypasses the engine, and the verdict
// packages are not on the path.
func TestFirstPrometheusRequestPath(t *testing.T) {
	dir, url, tr := ladderRun(t)
	rec := &stackRecorder{base: http.DefaultTransport}
	http.DefaultTransport = rec
	defer func() { http.DefaultTransport = rec.base }()
	e := newEnv(nil, nil)
	if code := Main(context.Background(), ladderArgs(dir, url, tr, "--no-report"), e.Env); code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, e.out.String(), e.errOut.String())
	}
	first, paths := rec.result()
	if len(first) == 0 {
		t.Fatal("no Prometheus request recorded")
	}
	for _, f := range first {
		t.Logf("  %s", f)
	}
	all := collapseAll(first)
	t.Logf("first request, with the standard library: %d packages, %d returns:\n%s", distinct(all), len(all)-distinct(all), strings.Join(all, " → "))
	seq := collapse(first)
	t.Logf("first request: %d packages, %d returns to a package left before:\n%s", distinct(seq), len(seq)-distinct(seq), strings.Join(seq, " → "))
	ladderSeen := false
	for _, p := range paths {
		t.Logf("a request path: %s", strings.Join(p, " → "))
		ladderSeen = ladderSeen || slices.Contains(p, "pkg/ladder")
		// Below the export's entry (the test and the CLI's flag parsing
		// above it aside).
		from := slices.Index(p, "pkg/export")
		next := slices.Index(p[from+1:], "pkg/export")
		if from < 0 || next < 0 {
			t.Fatalf("the export's entry not on the path %v", p)
		}
		below := p[from+1+next:]
		seen := map[string]bool{}
		for _, pkg := range below {
			if seen[pkg] {
				t.Errorf("%s entered twice below the export: %v", pkg, below)
			}
			seen[pkg] = true
		}
		if len(below) < 2 || below[1] != "pkg/engine" {
			t.Errorf("a read that bypasses the engine: %v", below)
		}
		for _, pkg := range []string{"pkg/verdicts/command", "pkg/verdicts"} {
			if slices.Contains(p, pkg) {
				t.Errorf("%s on the path of a Prometheus read: %v", pkg, p)
			}
		}
	}
	if !ladderSeen {
		t.Errorf("no ladder read among the paths: the test does not cover the ladder")
	}
}

func distinct(seq []string) int {
	d := slices.Clone(seq)
	slices.Sort(d)
	return len(slices.Compact(d))
}

// stackRecorder records the logical call stack of the first Prometheus API
// request through it (function names, outermost first) and the distinct
// package sequences of all of them, in first-seen order.
type stackRecorder struct {
	base  http.RoundTripper
	mu    sync.Mutex
	first []string
	paths [][]string
}

func (r *stackRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, "/api/v1/query") {
		st := logicalStack()
		seq := collapse(st)
		r.mu.Lock()
		if r.first == nil {
			r.first = st
		}
		if !slices.ContainsFunc(r.paths, func(p []string) bool { return slices.Equal(p, seq) }) {
			r.paths = append(r.paths, seq)
		}
		r.mu.Unlock()
	}
	return r.base.RoundTrip(req)
}

func (r *stackRecorder) result() ([]string, [][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, r.paths
}

var (
	goroutineHead = regexp.MustCompile(`^goroutine (\d+) `)
	createdBy     = regexp.MustCompile(`^created by .* in goroutine (\d+)$`)
)

// logicalStack is the calling goroutine's functions (runtime.Callers),
// then those of the goroutine that created it, and so on up to the first
// goroutine, each innermost first; returned outermost first.
func logicalStack() []string {
	var funcs []string
	pc := make([]uintptr, 256)
	n := runtime.Callers(3, pc) // from the recorder's caller
	fr := runtime.CallersFrames(pc[:n])
	for {
		f, more := fr.Next()
		funcs = append(funcs, f.Function)
		if !more {
			break
		}
	}
	own := make([]byte, 64)
	own = own[:runtime.Stack(own, false)]
	gs := parseGoroutines(allStacks())
	id := goroutineID(own)
	for {
		g, ok := gs[id]
		if !ok || g.parent == 0 {
			break
		}
		id = g.parent
		if p, ok := gs[id]; ok {
			funcs = append(funcs, p.funcs...)
		}
	}
	slices.Reverse(funcs)
	return funcs
}

func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

func goroutineID(head []byte) int {
	m := goroutineHead.FindSubmatch(head)
	if m == nil {
		return 0
	}
	id, _ := strconv.Atoi(string(m[1]))
	return id
}

type goroutine struct {
	funcs  []string // innermost first
	parent int
}

// parseGoroutines reads runtime.Stack(all)'s text: a "goroutine N [...]:"
// line, then a function line and a file line per frame, then "created by F
// in goroutine P" for all but the first goroutine.
func parseGoroutines(dump []byte) map[int]goroutine {
	out := map[int]goroutine{}
	for _, block := range bytes.Split(dump, []byte("\n\n")) {
		lines := strings.Split(strings.TrimSpace(string(block)), "\n")
		if len(lines) == 0 {
			continue
		}
		id := goroutineID([]byte(lines[0]))
		var g goroutine
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "\t") {
				continue
			}
			if m := createdBy.FindStringSubmatch(l); m != nil {
				g.parent, _ = strconv.Atoi(m[1])
				continue
			}
			if i := strings.LastIndexByte(l, '('); i > 0 {
				l = l[:i]
			}
			g.funcs = append(g.funcs, l)
		}
		out[id] = g
	}
	return out
}

// collapse is the sequence of this repository's packages the functions
// belong to, consecutive repeats merged.
func collapse(funcs []string) []string {
	var seq []string
	for _, f := range funcs {
		pkg, ok := packageOf(f)
		if !ok {
			continue
		}
		if len(seq) == 0 || seq[len(seq)-1] != pkg {
			seq = append(seq, pkg)
		}
	}
	return seq
}

// collapseAll is collapse over every package, the standard library's
// included.
func collapseAll(funcs []string) []string {
	var seq []string
	for _, f := range funcs {
		pkg := strings.TrimPrefix(f, modulePrefix)
		slash := strings.LastIndexByte(pkg, '/')
		if dot := strings.IndexByte(pkg[slash+1:], '.'); dot >= 0 {
			pkg = pkg[:slash+1+dot]
		}
		if len(seq) == 0 || seq[len(seq)-1] != pkg {
			seq = append(seq, pkg)
		}
	}
	return seq
}

// packageOf is the package of a function name as the runtime prints it
// (path/pkg.Func, path/pkg.(*T).M, path/pkg.F.func1), relative to the
// module; false outside it.
func packageOf(fn string) (string, bool) {
	if !strings.HasPrefix(fn, modulePrefix) {
		return "", false
	}
	rest := strings.TrimPrefix(fn, modulePrefix)
	slash := strings.LastIndexByte(rest, '/')
	dot := strings.IndexByte(rest[slash+1:], '.')
	if dot < 0 {
		return rest, true
	}
	return rest[:slash+1+dot], true
}
