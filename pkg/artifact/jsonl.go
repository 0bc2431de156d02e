package artifact

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unicode/utf8"
)

// Metrics of this project's stats.jsonl rows.
const (
	MetricServerSummary = "server_summary"
	MetricTrialSummary  = "trial_summary"
)

// Row is one stats.jsonl row: keys timestamp, tag, test_name, metric,
// measurements, in that order (runs.md).
type Row struct {
	Timestamp    string
	Tag          string
	TestName     string
	Metric       string
	Measurements Object
}

// Object returns the row in this package's value model.
func (r Row) Object() Object {
	m := r.Measurements
	if m == nil {
		m = Object{}
	}
	return Object{
		{"timestamp", r.Timestamp},
		{"tag", r.Tag},
		{"test_name", r.TestName},
		{"metric", r.Metric},
		{"measurements", m},
	}
}

// MarshalLine encodes the row on one line, without the newline, exactly as
// Python's json.dumps(row) would. Every measurement must be a string, a
// *string or nil (spec: strings or null); anything else is an error, so a
// number can never slip into a flat row.
func (r Row) MarshalLine() ([]byte, error) {
	if r.Metric == "" {
		return nil, errors.New("stats.jsonl row without a metric")
	}
	for _, f := range r.Measurements {
		switch f.Value.(type) {
		case nil, string, *string:
		default:
			return nil, fmt.Errorf("measurement %s of %s: %T is not a string or null", f.Key, r.Metric, f.Value)
		}
	}
	return Marshal(r.Object())
}

// FloatMeasurement is a flat-row value: nil (and NaN/±Inf, which are not
// measurements) give null, anything else Python's str(float).
func FloatMeasurement(p *float64) any {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return FormatFloat(*p)
}

// IntMeasurement is a flat-row value: nil gives null, else the decimal text.
func IntMeasurement(p *int64) any {
	if p == nil {
		return nil
	}
	return fmt.Sprint(*p)
}

// stringMeasurement is a flat-row value: nil gives null.
func stringMeasurement(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// Errors in Line.Err.
var (
	ErrBlankLine = errors.New("blank line")
	ErrNotRow    = errors.New("not a stats.jsonl row")
)

// Line is one line of stats.jsonl as read.
type Line struct {
	Num        int    // 1-based
	Raw        []byte // the exact bytes, without the '\n' terminator
	Terminated bool   // the line ended with '\n' (only the last may not)
	// Row is the parsed row; nil when the line is blank, not JSON, or not an
	// object with exactly the five row keys (Err says which).
	Row *Row
	Err error
}

// ParseRow parses one line (surrounding whitespace allowed) as a row: a JSON
// object with exactly the keys timestamp, tag, test_name, metric (strings)
// and measurements (an object), in any order. Measurement values are kept as
// decoded (strings or nil in this project's rows; other tools' rows may
// differ).
func ParseRow(line []byte) (*Row, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, ErrBlankLine
	}
	v, err := Decode(line)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(Object)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrNotRow)
	}
	if len(obj) != 5 {
		return nil, fmt.Errorf("%w: %d keys, want timestamp, tag, test_name, metric, measurements", ErrNotRow, len(obj))
	}
	var r Row
	for _, f := range obj {
		var dst *string
		switch f.Key {
		case "timestamp":
			dst = &r.Timestamp
		case "tag":
			dst = &r.Tag
		case "test_name":
			dst = &r.TestName
		case "metric":
			dst = &r.Metric
		case "measurements":
			m, ok := f.Value.(Object)
			if !ok {
				return nil, fmt.Errorf("%w: measurements is not an object", ErrNotRow)
			}
			r.Measurements = m
			continue
		default:
			return nil, fmt.Errorf("%w: unexpected key %q", ErrNotRow, f.Key)
		}
		s, ok := f.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s is not a string", ErrNotRow, f.Key)
		}
		*dst = s
	}
	return &r, nil
}

// ScanRows calls fn for every line of r in order, corrupt ones included
// (Row nil, Err set): nothing is skipped. It stops at the first error from
// reading or from fn.
func ScanRows(r io.Reader, fn func(Line) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for num := 1; ; num++ {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			l := Line{Num: num, Raw: raw}
			if raw[len(raw)-1] == '\n' {
				l.Raw, l.Terminated = raw[:len(raw)-1], true
			}
			l.Row, l.Err = ParseRow(l.Raw)
			if ferr := fn(l); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading line %d: %w", num, err)
		}
	}
}

// ReadRows returns every line of r (see ScanRows). The error is only a read
// error; the lines read before it are returned too.
func ReadRows(r io.Reader) ([]Line, error) {
	var out []Line
	err := ScanRows(r, func(l Line) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// matchRun matches this project's rows (server_summary and trial_summary)
// of one run: same timestamp, tag and test_name. Lines that do not parse
// never match, so they are kept by ReplaceRows. The expected strings are
// compared as they read back from a written row: bytes that are not UTF-8
// are written as \udcXX escapes and read back as U+FFFD.
func matchRun(timestamp, tag, testName string) func(line []byte) bool {
	return MatchRunFamily(timestamp, tag, testName, func(metric string) bool {
		return metric == MetricServerSummary || metric == MetricTrialSummary
	})
}

// MatchRunFamily is matchRun for the rows whose metric family accepts.
func MatchRunFamily(timestamp, tag, testName string, family func(metric string) bool) func(line []byte) bool {
	timestamp, tag, testName = readBack(timestamp), readBack(tag), readBack(testName)
	return func(line []byte) bool {
		r, err := ParseRow(line)
		if err != nil {
			return false
		}
		return family(r.Metric) && r.Timestamp == timestamp && r.Tag == tag && r.TestName == testName
	}
}

// readBack is s after a Marshal/Decode round trip.
func readBack(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b, err := Marshal(s)
	if err != nil {
		return s
	}
	v, err := Decode(b)
	if err != nil {
		return s
	}
	out, _ := v.(string)
	return out
}

// EncodeRows is rows as stats.jsonl lines, each ended by '\n'.
func EncodeRows(rows []Row) ([]byte, error) {
	var buf []byte
	for i, r := range rows {
		line, err := r.MarshalLine()
		if err != nil {
			return nil, fmt.Errorf("encoding row %d: %w", i+1, err)
		}
		buf = append(append(buf, line...), '\n')
	}
	return buf, nil
}

// maxReopen bounds how often openLocked follows a file replaced under it.
const maxReopen = 100

// openLocked opens path (creating it) and takes the exclusive lock, making
// sure the locked file is still the one path names: ReplaceRows renames a
// new file over path, and a writer that was waiting on the old file's lock
// must not write to the orphan. A path that is a symbolic link is refused
// (*SymlinkError): checked with Lstat, opened with O_NOFOLLOW.
func openLocked(ctx context.Context, path string, flag int) (*os.File, error) {
	for range maxReopen {
		f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE|flag, 0o644)
		if err != nil {
			return nil, err
		}
		if err := lockFile(ctx, f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("locking: %w", err)
		}
		fi, ferr := f.Stat()
		pi, perr := os.Lstat(path) // #nosec G703 -- the path opened above
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		_ = unlockFile(f)
		_ = f.Close()
		if ferr != nil {
			return nil, ferr
		}
	}
	return nil, fmt.Errorf("%s keeps being replaced", path)
}

func closeLocked(f *os.File) {
	_ = unlockFile(f)
	_ = f.Close()
}

// AppendRows appends rows to the JSONL file at path (created 0644 if
// missing) so that no reader or concurrent writer ever sees a partial line:
//   - every row is encoded first; an encoding error writes nothing;
//   - all rows go out in one write(2) on an O_APPEND descriptor, under an
//     exclusive flock shared with other AppendRows/ReplaceRows callers
//     (goroutines or processes), so two exports never interleave bytes;
//   - if that write fails part-way, the file is truncated back to its
//     previous length (we hold the lock), then the error is returned;
//   - the file is fsynced.
//
// Existing bytes are never altered. If the file does not end with a newline
// (a line left half-written by someone else), a "\n" is written before the
// rows: that line stays byte for byte as it was, now terminated, and the
// new rows stay whole lines instead of being glued to it.
//
// ctx bounds the wait for the lock.
func AppendRows(ctx context.Context, path string, rows ...Row) error {
	data, err := EncodeRows(rows)
	if err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if len(data) == 0 {
		return nil
	}
	f, err := openLocked(ctx, path, os.O_APPEND)
	if err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	defer closeLocked(f)
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	size := fi.Size()
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return fmt.Errorf("appending to %s: reading its last byte: %w", path, err)
		}
		if last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	n, err := writeOnce(f, data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			if terr := f.Truncate(size); terr != nil {
				return fmt.Errorf("appending to %s: %w (and removing the partial line: %v)", path, err, terr)
			}
		}
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

// ReplaceRows rewrites the JSONL file at path (created if missing) with
// every line that match rejects kept byte for byte and in order, and the
// lines it accepts replaced by rows: the new rows take the position of the
// first matching line (all later matching lines are dropped), or go at the
// end when nothing matches (after a "\n" if the file did not end with one).
// match sees each line without its '\n'. The new content is written to a
// temporary file and renamed over path (mode kept) while holding the same
// lock AppendRows takes; appenders waiting on the old file follow the
// rename. It returns how many lines matched.
//
// On Windows the rename can fail while another process has the file open.
func ReplaceRows(ctx context.Context, path string, match func(line []byte) bool, rows ...Row) (int, error) {
	data, err := EncodeRows(rows)
	if err != nil {
		return 0, fmt.Errorf("replacing rows in %s: %w", path, err)
	}
	f, err := openLocked(ctx, path, 0)
	if err != nil {
		return 0, fmt.Errorf("replacing rows in %s: %w", path, err)
	}
	defer closeLocked(f)
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("replacing rows in %s: %w", path, err)
	}
	old, err := io.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	out, matched := replaceLines(old, match, data)
	if err := WriteFileAtomic(path, out, fi.Mode().Perm()); err != nil {
		return 0, fmt.Errorf("replacing rows in %s: %w", path, err)
	}
	return matched, nil
}

// replaceLines is ReplaceRows on bytes.
func replaceLines(old []byte, match func([]byte) bool, data []byte) ([]byte, int) {
	out := make([]byte, 0, len(old)+len(data)+1)
	matched := 0
	for rest := old; len(rest) > 0; {
		line := rest
		next := []byte(nil)
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, next = rest[:i+1], rest[i+1:]
		}
		rest = next
		if match(bytes.TrimSuffix(line, []byte{'\n'})) {
			if matched == 0 {
				out = append(out, data...)
			}
			matched++
			continue
		}
		out = append(out, line...)
	}
	if matched == 0 && len(data) > 0 {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, data...)
	}
	return out, matched
}
