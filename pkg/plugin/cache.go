package plugin

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// outcome is how a cached computation ended; the cache alone turns it into
// how long the value is kept (datasource.md "Caching").
type outcome int

const (
	// finishedOK: a finished run read without failure. Kept until evicted
	// by size, never by time.
	finishedOK outcome = iota
	// failedRead: a failed or partial read (a read-failed or
	// possibly-incomplete notice, an unreadable stored file, a computation
	// that timed out). Kept retryTTL: one dashboard load shares the
	// failure, the next reads again.
	failedRead
	// liveRun: a run that may still change (live, or ended less than the
	// atelet lag ago), or a read of today's cluster. Kept liveTTL.
	liveRun
	// dontKeep: an answer not worth keeping at all.
	dontKeep
)

// liveTTL is how long a value of a run that may still change is reused:
// long enough for one dashboard load to share it between panels, short
// enough to stay live.
const liveTTL = 10 * time.Second

// retryTTL is how long a failed or partial read is reused before it is
// read again.
const retryTTL = 10 * time.Second

// computeTimeout bounds one shared computation, detached from its
// callers. Each read inside it already carries its own timeout
// (timeoutSeconds, else the 5 s / 8 s defaults), so a computation of
// Prometheus and Kubernetes reads ends anyway; this bound ends one whose
// reads have none (a hung store read). It is never the request timeout
// itself: a block issues many requests, queued behind the in-flight limit,
// and a pod-PSI panel read at 24 h x 5,000 pods takes 370 s
// (docs/performance.md); at the request timeout those queued requests
// would fail as "waiting for a request slot" instead of naming a timeout.
func computeTimeout(s Settings) time.Duration {
	return max(minComputeTimeout, s.Timeout)
}

// minComputeTimeout is the least bound of a shared computation.
const minComputeTimeout = 10 * time.Minute

// keep is how long a value of outcome o is kept: ok false means not at
// all, ttl 0 means until evicted.
func (o outcome) keep() (ttl time.Duration, ok bool) {
	switch o {
	case finishedOK:
		return 0, true
	case failedRead:
		return retryTTL, true
	case liveRun:
		return liveTTL, true
	}
	return 0, false
}

func (o outcome) String() string {
	switch o {
	case finishedOK:
		return "finished"
	case failedRead:
		return "failed or partial"
	case liveRun:
		return "live"
	case dontKeep:
		return "not kept"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// noticesOutcome is the outcome of a Prometheus read from its notices: a
// failed read or an answer the server marked as possibly incomplete is a
// failed or partial read; else live until the run is finished.
func noticesOutcome(ns []harvest.Notice, finished bool) outcome {
	for _, n := range ns {
		if n.Kind == harvest.ReadFailed || n.Kind == harvest.Warned {
			return failedRead
		}
	}
	if !finished {
		return liveRun
	}
	return finishedOK
}

// keyKind is what a cache key names.
type keyKind int

const (
	keyBlock        keyKind = iota + 1 // a harvested block; name: the block
	keyPSIPanel                        // a PSI panel's series at panel resolution
	keyStoredFile                      // a stored artifact; name: the file
	keyLadderLog                       // the ladder lines of a stored logs.txt
	keyLadder                          // a stored run's ladder evaluated over Prometheus
	keyTrial                           // the trial_summary row of a run outside the store
	keyLivePhases                      // the phase breakdown of the live pod logs
	keyListing                         // a listing of the catalogs; name: its options
	keyStoreListing                    // a listing of the results store; name: its options
	keyTestFile                        // a file beside a test's runs; name: the test and the file
	keyLatest                          // the newest catalogued run; name: the test name
	keyLatestStored                    // the newest stored run; name: the test name
)

// cacheKey identifies a cached value: what it is, of which run, under the
// settings that change the result. The window is part of it (an id alone
// is not enough for ad hoc ranges and live runs).
type cacheKey struct {
	kind keyKind
	name string
	run  runKey
	psi  psiPanelKey // zero except for keyPSIPanel
}

type runKey struct {
	id                                 string
	start, end, steadyStart, steadyEnd int64
	lagS                               int64
	sel                                harvest.Selectors
}

// psiPanelKey is what else a PSI panel's read depends on.
type psiPanelKey struct {
	scope, resource string
	bands           bool
	step            int64
	top             int
}

// key is the cache key of kind for run e under this instance's settings.
func (d *Datasource) key(kind keyKind, e runs.Entry, name string) cacheKey {
	return cacheKey{kind: kind, name: name, run: runKey{
		id: e.ID, start: e.Start, end: e.End, steadyStart: e.SteadyStart, steadyEnd: e.SteadyEnd,
		lagS: d.settings.AteletLagSeconds, sel: d.settings.selectors(),
	}}
}

// caches are the instance's caches, one per value type.
type caches struct {
	blocks     *cached[blockResult]
	psiPanels  *cached[psiPanel]
	summaries  *cached[storedFile[artifact.StoredSummary]]
	psiFiles   *cached[storedFile[artifact.PSISeries]]
	notices    *cached[storedFile[[]artifact.Notice]]
	rows       *cached[storedRun]
	ladderLogs *cached[ladderLog]
	ladders    *cached[ladderRead]
	trials     *cached[trialRow]
	livePhases *cached[livePhase]
	// listings, storeListings, testFiles and latest hold answers about
	// the store's contents, kept liveTTL (new runs and edits appear within
	// that); a failed answer retryTTL. testFiles are the files beside a
	// test's runs (acks.yaml); latest the run "latest" names, which every
	// panel of a dashboard with run latest resolves on each refresh.
	listings      *cached[liveAnswer[runs.Listing]]
	storeListings *cached[liveAnswer[storeListing]]
	testFiles     *cached[liveAnswer[[]byte]]
	latest        *cached[liveAnswer[runs.Entry]]
}

// liveAnswer is a store or catalog answer with its error: a failed answer
// is kept too, for retryTTL.
type liveAnswer[T any] struct {
	v   T
	err error
}

// storeListing is a Store.ListNewest answer.
type storeListing struct {
	entries []runs.Entry
	found   int
}

// getLive is read through c under key, kept as a listing is (listOutcome).
func getLive[T any](ctx context.Context, c *cached[liveAnswer[T]], key cacheKey, read func(context.Context) (T, error)) (T, error) {
	a, _, err := c.get(ctx, key, func(ctx context.Context) (liveAnswer[T], outcome) {
		v, err := read(ctx)
		return liveAnswer[T]{v: v, err: err}, listOutcome(err)
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return a.v, a.err
}

// listingKey is the cache key of a listing: its options but the clock
// (a listing is kept only liveTTL) and its bound.
func listingKey(kind keyKind, o runs.ListOptions, limit int) cacheKey {
	return cacheKey{kind: kind, name: fmt.Sprintf("%d\x00%d\x00%q\x00%q\x00%d", o.From, o.To, o.TestName, o.Tag, limit)}
}

// listOutcome keeps a listing liveTTL, a failed one retryTTL.
func listOutcome(err error) outcome {
	if err != nil {
		return failedRead
	}
	return liveRun
}

// listCatalogs is d.catalogs.List through the listing cache.
func (d *Datasource) listCatalogs(ctx context.Context, o runs.ListOptions) (runs.Listing, error) {
	return getLive(ctx, d.cache.listings, listingKey(keyListing, o, d.catalogs.MaxRuns), func(ctx context.Context) (runs.Listing, error) {
		return d.catalogs.List(ctx, o)
	})
}

// listStore is d.catalogs.Store.ListNewest through the listing cache.
func (d *Datasource) listStore(ctx context.Context, o runs.ListOptions, limit int) ([]runs.Entry, int, error) {
	l, err := getLive(ctx, d.cache.storeListings, listingKey(keyStoreListing, o, limit), func(ctx context.Context) (storeListing, error) {
		es, found, err := d.catalogs.Store.ListNewest(ctx, o, limit)
		return storeListing{entries: es, found: found}, err
	})
	return l.entries, l.found, err
}

// readTestFile is d.catalogs.Store.ReadTestFile through the cache of
// test files: a repeated query within liveTTL sends the store no request.
func (d *Datasource) readTestFile(ctx context.Context, testName, name string, limit int64) ([]byte, error) {
	key := cacheKey{kind: keyTestFile, name: fmt.Sprintf("%q\x00%q\x00%d", testName, name, limit)}
	return getLive(ctx, d.cache.testFiles, key, func(ctx context.Context) ([]byte, error) {
		return d.catalogs.Store.ReadTestFile(ctx, testName, name, limit)
	})
}

// latestRun is the newest run of testName (any test when empty) through
// the cache of "latest": of the catalogs (the results store and, without a
// test name, the runs discovered in Prometheus), or of the store alone.
func (d *Datasource) latestRun(ctx context.Context, testName string, storedOnly bool) (runs.Entry, error) {
	if storedOnly {
		return getLive(ctx, d.cache.latest, cacheKey{kind: keyLatestStored, name: testName}, func(ctx context.Context) (runs.Entry, error) {
			return d.catalogs.Store.Latest(ctx, testName)
		})
	}
	return getLive(ctx, d.cache.latest, cacheKey{kind: keyLatest, name: testName}, func(ctx context.Context) (runs.Entry, error) {
		return d.catalogs.Latest(ctx, testName, d.now().Unix())
	})
}

func (d *Datasource) newCaches() caches {
	n := max(d.settings.CacheEntries, 0)
	timeout := computeTimeout(d.settings)
	// Harvests (blocks, PSI panels) take a slot of their own before their
	// time starts (a read queued behind others has not started).
	slot := func(ctx context.Context) (func(), error) { return takeHarvestSlot(ctx, d.slots) }
	now := func() time.Time { return d.now() }
	return caches{
		blocks:        newCached[blockResult](n, timeout, now, slot),
		psiPanels:     newCached[psiPanel](n, timeout, now, slot),
		summaries:     newCached[storedFile[artifact.StoredSummary]](n, timeout, now, nil),
		psiFiles:      newCached[storedFile[artifact.PSISeries]](n, timeout, now, nil),
		notices:       newCached[storedFile[[]artifact.Notice]](n, timeout, now, nil),
		rows:          d.newStoredRunCache(timeout, now),
		ladderLogs:    newCached[ladderLog](n, timeout, now, nil),
		ladders:       newCached[ladderRead](n, timeout, now, nil),
		trials:        newCached[trialRow](n, timeout, now, nil),
		livePhases:    newCached[livePhase](n, timeout, now, nil),
		listings:      newCached[liveAnswer[runs.Listing]](n, timeout, now, nil),
		storeListings: newCached[liveAnswer[storeListing]](n, timeout, now, nil),
		testFiles:     newCached[liveAnswer[[]byte]](n, timeout, now, nil),
		latest:        newCached[liveAnswer[runs.Entry]](n, timeout, now, nil),
	}
}

// newStoredRunCache is the stored-run cache, the instance's one holder of
// stored rows: what this project reads of stored runs' stats.jsonl
// (storedRun), whether storedHead read the file or the store's listing
// did (keepListedRows), under one rule: kept by storedOutcome, bounded by
// storedRunCacheMiB alone (storedRunBytes; a run's kept value is small
// beside its stats.jsonl, and a dashboard range holds up to
// maxRunsPerQuery runs); 0 keeps nothing.
func (d *Datasource) newStoredRunCache(timeout time.Duration, now func() time.Time) *cached[storedRun] {
	budget := max(d.settings.StoredRunCacheMiB, 0) << 20
	capacity := 0
	if budget > 0 {
		capacity = math.MaxInt
	}
	return newCached[storedRun](capacity, timeout, now, nil).withBudget(budget, storedRunBytes)
}

// cached is a bounded LRU of values of one type with per-entry expiry and
// in-flight de-duplication: concurrent callers asking for the same key wait
// for one computation instead of each running it. The computation runs in
// its own goroutine under a context detached from its first caller's
// (context.WithoutCancel plus a timeout, see computeTimeout), so it keeps
// running when its waiters leave and one caller's cancellation never fails
// another.
type cached[T any] struct {
	capacity int           // entries kept; 0: none (in-flight sharing only)
	timeout  time.Duration // bound of one computation; 0: none
	now      func() time.Time
	// gate, when set, is waited for (under the detached context, before the
	// timeout starts) and released after the computation.
	gate func(context.Context) (release func(), err error)

	mu       sync.Mutex
	ll       *list.List // of *entry[T]; front = most recently used
	items    map[cacheKey]*list.Element
	inflight map[cacheKey]*call[T]
	// size, when set, estimates a value's bytes, and budget bounds the
	// bytes kept (used: kept now); least recently used values go first. A
	// value larger than the budget is shared with its waiters, not kept.
	size         func(T) int64
	budget, used int64
	// hits and misses count lookups, for tests.
	hits, misses int
}

type entry[T any] struct {
	key     cacheKey
	value   T
	bytes   int64     // size(value) when the cache is bounded by bytes
	expires time.Time // zero: never (until evicted)
}

type call[T any] struct {
	done     chan struct{}
	value    T
	outcome  outcome
	panicked any // a panic of the computation, re-raised in its waiters
}

func newCached[T any](capacity int, timeout time.Duration, now func() time.Time, gate func(context.Context) (func(), error)) *cached[T] {
	return &cached[T]{capacity: capacity, timeout: timeout, now: now, gate: gate,
		ll: list.New(), items: map[cacheKey]*list.Element{}, inflight: map[cacheKey]*call[T]{}}
}

// get returns the value for key and whether it was shared (kept, or
// computed for another caller), computing it with compute on a miss. It
// returns ctx's error when ctx ends first; the computation goes on.
func (c *cached[T]) get(ctx context.Context, key cacheKey, compute func(context.Context) (T, outcome)) (T, bool, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, false, err // a caller already gone starts nothing
	}
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		e := el.Value.(*entry[T])
		if e.expires.IsZero() || c.now().Before(e.expires) {
			c.ll.MoveToFront(el)
			c.hits++
			c.mu.Unlock()
			return e.value, true, nil
		}
		c.remove(el)
	}
	cl, shared := c.inflight[key]
	if shared {
		c.hits++
	} else {
		c.misses++
		cl = &call[T]{done: make(chan struct{})}
		c.inflight[key] = cl
		go c.run(context.WithoutCancel(ctx), key, cl, compute)
	}
	c.mu.Unlock()
	select {
	case <-cl.done:
		if cl.panicked != nil {
			panic(cl.panicked)
		}
		return cl.value, shared, nil
	case <-ctx.Done():
		return zero, false, ctx.Err()
	}
}

// run computes key's value, keeps it by its outcome and wakes the waiters.
func (c *cached[T]) run(ctx context.Context, key cacheKey, cl *call[T], compute func(context.Context) (T, outcome)) {
	cl.outcome = dontKeep
	defer func() {
		if p := recover(); p != nil {
			cl.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
		c.finish(key, cl)
	}()
	if c.gate != nil {
		release, err := c.gate(ctx)
		if err != nil {
			return
		}
		defer release()
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	cl.value, cl.outcome = compute(ctx)
	if ctx.Err() != nil && cl.outcome != dontKeep {
		cl.outcome = failedRead // it timed out: whatever it read is partial
	}
}

func (c *cached[T]) finish(key cacheKey, cl *call[T]) {
	c.mu.Lock()
	delete(c.inflight, key)
	if cl.panicked == nil {
		c.keep(key, cl.value, cl.outcome)
	}
	c.mu.Unlock()
	close(cl.done)
}

// put keeps a value read elsewhere (the rows a store listing read) by its
// outcome, as if computed here, unless key is kept or being computed.
func (c *cached[T]) put(key cacheKey, v T, o outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	if _, ok := c.inflight[key]; ok {
		return
	}
	c.keep(key, v, o)
}

// keep keeps v under key by its outcome; c.mu is held.
func (c *cached[T]) keep(key cacheKey, v T, o outcome) {
	if ttl, ok := o.keep(); ok && c.capacity > 0 {
		e := &entry[T]{key: key, value: v}
		if c.size != nil {
			e.bytes = c.size(v)
		}
		if ttl > 0 {
			e.expires = c.now().Add(ttl)
		}
		if el, ok := c.items[key]; ok {
			c.remove(el)
		}
		if c.size == nil || e.bytes <= c.budget {
			c.items[key] = c.ll.PushFront(e)
			c.used += e.bytes
		}
		for c.ll.Len() > c.capacity || (c.size != nil && c.used > c.budget) {
			c.remove(c.ll.Back())
		}
	}
}

// remove drops a kept value; c.mu is held.
func (c *cached[T]) remove(el *list.Element) {
	e := el.Value.(*entry[T])
	c.ll.Remove(el)
	delete(c.items, e.key)
	c.used -= e.bytes
}

// withBudget bounds c by the estimated bytes of its values (size) as well
// as by its entry count.
func (c *cached[T]) withBudget(budget int64, size func(T) int64) *cached[T] {
	c.budget, c.size = budget, size
	return c
}

// stats returns the hit and miss counts and the number of entries.
func (c *cached[T]) stats() (hits, misses, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses, c.ll.Len()
}
