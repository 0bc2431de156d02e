package plugin

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// liveTTL is how long a block of a run that may still change (live, or
// ended less than the atelet lag ago) is reused: long enough for one
// dashboard load to share it between panels, short enough to stay live.
const liveTTL = 10 * time.Second

// blockCache is a bounded LRU of harvested blocks with per-entry expiry and
// in-flight de-duplication: concurrent panels asking for the same block of
// the same run wait for one harvest instead of each issuing it.
type blockCache struct {
	capacity int

	mu       sync.Mutex
	ll       *list.List // front = most recently used
	items    map[string]*list.Element
	inflight map[string]*flight
	// hits and misses count lookups, for tests and the health details.
	hits, misses int
}

type cacheItem struct {
	key     string
	value   any
	expires time.Time // zero: never (a finished run)
}

type flight struct {
	done  chan struct{}
	value any
}

func newBlockCache(capacity int) *blockCache {
	return &blockCache{capacity: capacity, ll: list.New(), items: map[string]*list.Element{}, inflight: map[string]*flight{}}
}

// get returns the value for key, computing it with f on a miss. f returns
// the value and how long it may be kept (0: not at all; <0: forever). A
// caller whose context ends while waiting for another's computation stops
// waiting; the computation itself runs under the first caller's context.
func (c *blockCache) get(ctx context.Context, key string, now time.Time, f func() (any, time.Duration)) (any, bool) {
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		it := el.Value.(*cacheItem)
		if it.expires.IsZero() || now.Before(it.expires) {
			c.ll.MoveToFront(el)
			c.hits++
			c.mu.Unlock()
			return it.value, true
		}
		c.ll.Remove(el)
		delete(c.items, key)
	}
	if fl, ok := c.inflight[key]; ok {
		c.hits++
		c.mu.Unlock()
		select {
		case <-fl.done:
			return fl.value, true
		case <-ctx.Done():
			return nil, false
		}
	}
	c.misses++
	fl := &flight{done: make(chan struct{})}
	c.inflight[key] = fl
	c.mu.Unlock()

	var ttl time.Duration
	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		if ttl != 0 && c.capacity > 0 {
			it := &cacheItem{key: key, value: fl.value}
			if ttl > 0 {
				it.expires = now.Add(ttl)
			}
			c.items[key] = c.ll.PushFront(it)
			for c.ll.Len() > c.capacity {
				last := c.ll.Back()
				c.ll.Remove(last)
				delete(c.items, last.Value.(*cacheItem).key)
			}
		}
		c.mu.Unlock()
		close(fl.done)
	}()
	fl.value, ttl = f()
	return fl.value, false
}

// stats returns the hit and miss counts and the number of entries.
func (c *blockCache) stats() (hits, misses, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses, c.ll.Len()
}
