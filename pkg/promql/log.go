package promql

import "sync"

// Query kinds as recorded in Entry.Kind and named in errors.
const (
	KindInstant = "instant"
	KindRange   = "range"
)

// Entry is one logical query as issued (a split range query is one entry).
type Entry struct {
	Kind  string // KindInstant or KindRange
	Query string
	// Time is the evaluation time of an instant query; Start, End and Step
	// describe a range query (End after the end <= start correction).
	Time, Start, End, Step int64
	// Warnings returned by the server for this query (partial data from
	// Thanos, Mimir, Cortex...), in arrival order.
	Warnings []string
}

// Log records every PromQL string issued (in issue order), for
// FrameMeta.ExecutedQueryString and `density export --verbose`. The zero
// value is ready to use and safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []Entry
}

// Queries returns a copy of what was recorded.
func (l *Log) Queries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.entries))
	for i, e := range l.entries {
		out[i] = e.Query
	}
	return out
}

// Entries returns a copy of the recorded queries with their times and
// warnings.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Entry, len(l.entries))
	for i, e := range l.entries {
		e.Warnings = append([]string(nil), e.Warnings...)
		out[i] = e
	}
	return out
}

// Warnings returns every warning the server attached to a recorded query
// (Thanos/Mimir partial data), in recording order. A warning means the
// answer may be incomplete; callers should surface it as a notice.
func (l *Log) Warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.entries {
		out = append(out, e.Warnings...)
	}
	return out
}

// add records e and returns its index (-1 for a nil log).
func (l *Log) add(e Entry) int {
	if l == nil {
		return -1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
	return len(l.entries) - 1
}

// warn attaches server warnings to entry i.
func (l *Log) warn(i int, ws []string) {
	if l == nil || i < 0 || len(ws) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[i].Warnings = append(l.entries[i].Warnings, ws...)
}
