package cluster

import "time"

// OOMFacts is oomFacts with the evictions read (for the external tests).
func OOMFacts(before, after *Snapshot, ev *Evictions, start, end time.Time) OOM {
	return oomFacts(before, after, ev, nil, start, end)
}
