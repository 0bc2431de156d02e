package runs

import (
	"errors"
	"io"
)

// ErrHalfWritten is wrapped by ReadHistory and ReadStatsCSV when the file
// does not end with a line break. Locust (Python's csv module) ends every
// row with one, so a file that stops mid-line was cut: an interrupted copy
// or upload. Its last row is a fragment that parses as a plausible row (a
// count cut from "893" to "89", a history that stops before the steady
// state ended), which would change the numbers without a word; so the file
// counts as unreadable, like a file that breaks part-way (runs.md: "a
// half-read file would drag the peak down and open the window in
// ramp-up"), and the caller nulls what depends on it with a notice. (Where
// the spec is silent: Python would read such a file as it is.)
var ErrHalfWritten = errors.New("the file ends mid-line: its last line is half-written (an interrupted copy or upload)")

// tailReader remembers the last byte read, to tell a file cut mid-line.
type tailReader struct {
	r    io.Reader
	last byte
	n    int64
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.last = p[n-1]
		t.n += int64(n)
	}
	return n, err
}

// cut reports whether a non-empty input ended without a line break.
func (t *tailReader) cut() bool {
	return t.n > 0 && t.last != '\n' && t.last != '\r'
}
