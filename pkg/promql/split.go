package promql

// span is one request's [start, end] of a split range query.
type span struct{ start, end int64 }

// splitRange cuts [start, end] at step into consecutive spans of at most
// maxPoints evaluation points each. Every span starts on the original grid
// (start + k*step) and the next span starts one step after the previous one
// ends, so the joined answer has exactly the unsplit query's points, none
// twice. (Prometheus refuses a query with more than 11,000 steps per series.)
func splitRange(start, end, step, maxPoints int64) []span {
	var out []span
	for s := start; s <= end; {
		sp := nextSpan(s, end, step, maxPoints)
		out = append(out, sp)
		s = sp.end + step
	}
	return out
}

// nextSpan is the span of at most points evaluation points (at least one)
// that starts at from and ends no later than end.
func nextSpan(from, end, step, points int64) span {
	return span{from, min(from+(max(points, 1)-1)*step, end)}
}

// joinChunks concatenates per-chunk answers per label set, in chunk order,
// and sorts the series the way Prometheus sorts a matrix.
func joinChunks(parts [][]Series) []Series {
	if len(parts) == 1 {
		out := parts[0]
		sortSeries(out, func(s *Series) map[string]string { return s.Labels })
		return out
	}
	// First pass: the label sets and their total sample counts, so that
	// each joined series is allocated once.
	index := map[string]int{}
	keys := make([][]string, len(parts))
	var out []Series
	var sizes []int
	for pi, part := range parts {
		keys[pi] = make([]string, len(part))
		for si, s := range part {
			k := labelKey(s.Labels)
			keys[pi][si] = k
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, Series{Labels: s.Labels})
				sizes = append(sizes, 0)
			}
			sizes[i] += len(s.Samples)
		}
	}
	for i := range out {
		if sizes[i] > 0 {
			out[i].Samples = make([]Sample, 0, sizes[i])
		}
	}
	for pi, part := range parts {
		for si, s := range part {
			i := index[keys[pi][si]]
			// Defensive: a backend that aligns chunk edges to its own grid
			// could answer a boundary point twice; keep time strictly
			// increasing.
			cur := out[i].Samples
			for _, p := range s.Samples {
				if len(cur) == 0 || p.T > cur[len(cur)-1].T {
					cur = append(cur, p)
				}
			}
			out[i].Samples = cur
		}
	}
	sortSeries(out, func(s *Series) map[string]string { return s.Labels })
	return out
}
