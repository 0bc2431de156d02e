package plugin

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// fakeClock is a settable clock safe for concurrent reads.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func testKey(name string) cacheKey { return cacheKey{kind: keyBlock, name: name} }

// counted is a computation that counts its runs and answers v with o.
type counted struct {
	n atomic.Int64
	v string
	o outcome
}

func (c *counted) compute(context.Context) (string, outcome) {
	c.n.Add(1)
	return c.v, c.o
}

// The one rule: finished and read without failure is kept until evicted by
// size, never by time; failed or partial and live are kept 10 s; an answer
// not worth keeping is not kept.
func TestCachedOutcomeRule(t *testing.T) {
	for _, c := range []struct {
		o                                outcome
		keptAt9s, keptAt11s, keptAt1000h bool
	}{
		{finishedOK, true, true, true},
		{failedRead, true, false, false},
		{liveRun, true, false, false},
		{dontKeep, false, false, false},
	} {
		t.Run(c.o.String(), func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1000, 0)}
			ca := newCached[string](8, time.Minute, clk.now, nil)
			f := &counted{v: "v", o: c.o}
			v, hit, err := ca.get(context.Background(), testKey("k"), f.compute)
			if v != "v" || hit || err != nil {
				t.Fatalf("first get: %q %v %v", v, hit, err)
			}
			for _, step := range []struct {
				after time.Duration
				kept  bool
			}{{9 * time.Second, c.keptAt9s}, {2 * time.Second, c.keptAt11s}, {1000 * time.Hour, c.keptAt1000h}} {
				clk.add(step.after)
				before := f.n.Load()
				v, hit, err := ca.get(context.Background(), testKey("k"), f.compute)
				if v != "v" || err != nil || hit != step.kept || (f.n.Load() == before) != step.kept {
					t.Fatalf("at %v: %q hit %v err %v computations %d->%d; want kept %v",
						clk.now().Sub(time.Unix(1000, 0)), v, hit, err, before, f.n.Load(), step.kept)
				}
			}
		})
	}
}

// Hits, misses and eviction by size (least recently used first); with no
// capacity nothing is kept.
func TestCachedHitMissEviction(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ca := newCached[string](2, time.Minute, clk.now, nil)
	f := &counted{v: "v", o: finishedOK}
	get := func(k string) bool {
		_, hit, err := ca.get(context.Background(), testKey(k), f.compute)
		if err != nil {
			t.Fatal(err)
		}
		return hit
	}
	for _, c := range []struct {
		key string
		hit bool
	}{
		{"a", false}, {"a", true}, {"b", false}, {"a", true}, // a is now the most recently used
		{"c", false},                           // evicts b
		{"a", true}, {"c", true}, {"b", false}, // b again evicts a
		{"a", false},
	} {
		if got := get(c.key); got != c.hit {
			t.Fatalf("get %s: hit %v, want %v", c.key, got, c.hit)
		}
	}
	if h, m, n := ca.stats(); h != 4 || m != 5 || n != 2 {
		t.Fatalf("stats: %d hits, %d misses, %d entries; want 4, 5, 2", h, m, n)
	}
	// Another kind of key with the same name is another entry.
	if _, hit, _ := ca.get(context.Background(), cacheKey{kind: keyStoredFile, name: "a"}, f.compute); hit {
		t.Fatal("two kinds share an entry")
	}

	none := newCached[string](0, time.Minute, clk.now, nil)
	for range 2 {
		if _, hit, _ := none.get(context.Background(), testKey("a"), f.compute); hit {
			t.Fatal("a cache of capacity 0 kept a value")
		}
	}
}

// Concurrent misses of one key compute once; every caller gets the value.
func TestCachedInFlightDedup(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ca := newCached[int](8, time.Minute, clk.now, nil)
	var n atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 10)
	for i := range got {
		wg.Go(func() {
			v, _, err := ca.get(context.Background(), testKey("k"), func(context.Context) (int, outcome) {
				n.Add(1)
				<-release
				return 42, finishedOK
			})
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	waitFor(t, func() bool { h, m, _ := ca.stats(); return h+m == 10 })
	close(release)
	wg.Wait()
	if n.Load() != 1 {
		t.Fatalf("10 concurrent misses computed %d times", n.Load())
	}
	for i, v := range got {
		if v != 42 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
}

// A waiter whose context ends returns its context's error at once; the
// computation goes on under a context its caller's cancellation does not
// reach, the other waiter gets the value and it is kept.
func TestCachedWaiterCancellation(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ca := newCached[string](8, time.Minute, clk.now, nil)
	release := make(chan struct{})
	var computeErr atomic.Value
	var n atomic.Int64
	compute := func(ctx context.Context) (string, outcome) {
		n.Add(1)
		<-release
		computeErr.Store(errOrNone(ctx.Err()))
		return "v", finishedOK
	}
	// A starts the computation and leaves at its deadline.
	ctxA, cancelA := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancelA()
	type res struct {
		v   string
		err error
	}
	aDone, bDone := make(chan res, 1), make(chan res, 1)
	go func() { v, _, err := ca.get(ctxA, testKey("k"), compute); aDone <- res{v, err} }()
	waitFor(t, func() bool { _, m, _ := ca.stats(); return m == 1 })
	go func() { v, _, err := ca.get(context.Background(), testKey("k"), compute); bDone <- res{v, err} }()
	a := <-aDone
	if !errors.Is(a.err, context.DeadlineExceeded) || a.v != "" {
		t.Fatalf("A: %q %v; want its deadline", a.v, a.err)
	}
	close(release)
	b := <-bDone
	if b.err != nil || b.v != "v" {
		t.Fatalf("B: %q %v; want the value", b.v, b.err)
	}
	if e := computeErr.Load(); e != errOrNone(nil) {
		t.Fatalf("the computation saw %v after its first caller left", e)
	}
	if v, hit, err := ca.get(context.Background(), testKey("k"), compute); !hit || v != "v" || err != nil || n.Load() != 1 {
		t.Fatalf("after: %q hit %v err %v, %d computations", v, hit, err, n.Load())
	}

	// A caller already gone starts nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ca.get(ctx, testKey("other"), compute); !errors.Is(err, context.Canceled) || n.Load() != 1 {
		t.Fatalf("a cancelled caller: %v, %d computations", err, n.Load())
	}
}

// A computation outlives all its waiters: it finishes and is kept.
func TestCachedComputationOutlivesWaiters(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ca := newCached[string](8, time.Minute, clk.now, nil)
	release, finished := make(chan struct{}), make(chan struct{})
	f := &counted{v: "v", o: finishedOK}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err := ca.get(ctx, testKey("k"), func(ctx context.Context) (string, outcome) {
		defer close(finished)
		<-release
		return f.compute(ctx)
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the only waiter: %v", err)
	}
	close(release)
	<-finished
	waitFor(t, func() bool { _, _, n := ca.stats(); return n == 1 })
	if v, hit, err := ca.get(context.Background(), testKey("k"), f.compute); !hit || v != "v" || err != nil || f.n.Load() != 1 {
		t.Fatalf("after: %q hit %v err %v, %d computations", v, hit, err, f.n.Load())
	}
}

// A computation that runs past the cache's timeout is a failed read (kept
// 10 s) whatever it reports; the gate is waited for before the timeout
// starts.
func TestCachedTimeout(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	gate := make(chan struct{}, 1)
	gate <- struct{}{} // taken by someone else
	ca := newCached[string](8, 50*time.Millisecond, clk.now, func(ctx context.Context) (func(), error) {
		return takeHarvestSlot(ctx, gate)
	})
	go func() { time.Sleep(100 * time.Millisecond); <-gate }() // longer than the timeout
	var n atomic.Int64
	compute := func(ctx context.Context) (string, outcome) {
		if n.Add(1) > 1 {
			return "fresh", finishedOK
		}
		if ctx.Err() != nil {
			return "expired before it started", finishedOK
		}
		<-ctx.Done()
		return "late", finishedOK
	}
	v, _, err := ca.get(context.Background(), testKey("k"), compute)
	if v != "late" || err != nil {
		t.Fatalf("got %q %v", v, err)
	}
	clk.add(9 * time.Second)
	if v, hit, _ := ca.get(context.Background(), testKey("k"), compute); !hit || v != "late" {
		t.Fatalf("a timed-out read within 10 s: %q hit %v", v, hit)
	}
	clk.add(2 * time.Second)
	if v, hit, _ := ca.get(context.Background(), testKey("k"), compute); hit || v != "fresh" {
		t.Fatalf("a timed-out read after 10 s: %q hit %v; want read again", v, hit)
	}
}

// A shared computation is bounded by timeoutSeconds, never below
// minComputeTimeout (its reads each carry the request timeout already).
func TestComputeTimeout(t *testing.T) {
	for _, c := range []struct {
		timeoutSeconds any
		want           time.Duration
	}{
		{nil, minComputeTimeout},
		{30, minComputeTimeout},
		{1200, 20 * time.Minute},
	} {
		jd := map[string]any{}
		if c.timeoutSeconds != nil {
			jd["timeoutSeconds"] = c.timeoutSeconds
		}
		d := fakeDatasource(t, "http://127.0.0.1:1", jd)
		if got := d.cache.blocks.timeout; got != c.want || d.cache.rows.timeout != c.want {
			t.Errorf("timeoutSeconds %v: computations bounded by %v, want %v", c.timeoutSeconds, got, c.want)
		}
	}
}

// A panic in the computation reaches its waiters and nothing is kept.
func TestCachedPanic(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ca := newCached[string](8, time.Minute, clk.now, nil)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not reach the caller")
			}
		}()
		_, _, _ = ca.get(context.Background(), testKey("k"), func(context.Context) (string, outcome) { panic("boom") })
	}()
	if _, _, n := ca.stats(); n != 0 {
		t.Fatalf("%d entries after a panic", n)
	}
}

func errOrNone(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

// waitFor polls cond for up to 5 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
	}
}

// BenchmarkCachedHit is the hit path under parallel load, the key built
// from the run as the callers build it.
func BenchmarkCachedHit(b *testing.B) {
	d := &Datasource{settings: Settings{AteletLagSeconds: 60, WorkerPool: "benchmark-ateom", WorkerNamespace: "ate",
		WorkerContainer: "ateom", AteletNamespace: "ate-system", AteletContainer: "atelet"}}
	ca := newCached[blockResult](256, time.Minute, time.Now, nil)
	es := make([]runs.Entry, 64)
	for i := range es {
		es[i] = runs.Entry{Run: runs.Run{ID: "density-bench-" + strconv.Itoa(i), Start: 1710237600, End: 1710240600, SteadyStart: 1710237900, SteadyEnd: 1710240300}}
		_, _, _ = ca.get(context.Background(), d.key(keyBlock, es[i], harvest.BlockPacking), func(context.Context) (blockResult, outcome) { return blockResult{}, finishedOK })
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, hit, _ := ca.get(context.Background(), d.key(keyBlock, es[i%len(es)], harvest.BlockPacking), nil); !hit {
				b.Fatal("miss")
			}
			i++
		}
	})
}

// A cache bounded by bytes evicts the least recently used values until
// what it keeps fits the budget; a value larger than the budget is
// computed for its caller and not kept.
func TestCachedByteBudget(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	size := func(s string) int64 { return int64(len(s)) }
	ca := newCached[string](math.MaxInt, time.Minute, clk.now, nil).withBudget(10, size)
	get := func(k, v string) bool {
		_, hit, err := ca.get(context.Background(), testKey(k), func(context.Context) (string, outcome) { return v, finishedOK })
		if err != nil {
			t.Fatal(err)
		}
		return hit
	}
	for i, c := range []struct {
		key, value string
		hit        bool
		used       int64
	}{
		{"a", "aaaa", false, 4}, {"b", "bbbb", false, 8}, {"a", "", true, 8}, // a is the most recently used
		{"c", "cccc", false, 8},                          // 12 > 10: evicts b
		{"b", "bbbb", false, 8},                          // evicts a
		{"c", "", true, 8},                               // c kept
		{"big", "0123456789x", false, 8},                 // larger than the budget: not kept
		{"big", "0123456789x", false, 8},                 // so computed again
		{"d", "dddddddddd", false, 10},                   // fills the budget alone
		{"b", "bbbb", false, 4}, {"c", "cccc", false, 8}, // d evicted, b and c read again
	} {
		if got := get(c.key, c.value); got != c.hit {
			t.Fatalf("step %d: get %s: hit %v, want %v", i, c.key, got, c.hit)
		}
		ca.mu.Lock()
		used := ca.used
		ca.mu.Unlock()
		if used != c.used {
			t.Fatalf("step %d: %d bytes kept, want %d", i, used, c.used)
		}
	}
}
