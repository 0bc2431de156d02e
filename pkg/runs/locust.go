package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Column names in Locust's CSV files.
const (
	colName          = "Name"
	colType          = "Type"
	colTimestamp     = "Timestamp"
	colUserCount     = "User Count"
	colRequestCount  = "Request Count"
	colFailureCount  = "Failure Count"
	pyMaxIntDigits   = 4300 // sys.int_info.default_max_str_digits (Python >= 3.11)
	statusSizeLimit  = 1 << 20
	statusKeyExit    = "locust_exit_code"
	statusKeyStatsOK = "stats_generated"
)

// ErrNotNumber is returned by ParsePyInt / ParsePyFloat where Python's
// int() / float() raise ValueError.
var ErrNotNumber = errors.New("not a number")

// ErrIntRange is returned by ParsePyInt for a valid integer outside int64
// (Python would accept it); the returned value is clamped to int64.
var ErrIntRange = errors.New("integer out of int64 range")

// isAggregateName says whether a stats_history.csv row is the all-operations
// row: Locust names it "Aggregated" (older versions "Total"), and a missing
// Name counts as "".
func isAggregateName(name string) bool {
	return name == "" || name == "Aggregated" || name == "Total"
}

// History is what one pass over stats_history.csv yields.
type History struct {
	// Samples are the steady-window samples of runs.md, in file order:
	// aggregate rows with both User Count and Timestamp, an integer
	// Timestamp and a finite User Count.
	Samples []UserSample
	// Observed are trial_summary's observed user counts, in file order:
	// aggregate rows whose User Count is a finite number > 0 (Timestamp not
	// needed).
	Observed []float64
	// First, Last are the smallest and largest integer Timestamp of any row
	// (every operation's rows, not only the aggregate ones); equal to the
	// first and last timestamps of a well-formed file. Valid when HasBounds.
	First, Last int64
	HasBounds   bool
}

// ReadHistory reads stats_history.csv in one pass. A file that cannot be read
// to its end (I/O error, invalid UTF-8, a field over the csv limit, a last
// line cut short: ErrHalfWritten) yields an
// empty History and the error: a half-read file would drag the peak down and
// open the steady window in ramp-up (runs.md), so callers treat it as having
// no samples and put the error in a notice.
//
// NaN and ±Inf user counts (Python's float() accepts "nan", "inf") are
// skipped: they are not user counts and must never become the peak.
// Timestamps follow Python's int() (base 10, sign, "1_000", Unicode digits,
// at most 4300 digits); one outside int64 is clamped, which leaves the
// steady-window decision unchanged for any run window inside int64.
func ReadHistory(r io.Reader) (History, error) {
	var h History
	tail := &tailReader{r: r}
	c := NewCSVReader(tail)
	for {
		row, err := c.Next()
		if err == io.EOF && tail.cut() {
			err = ErrHalfWritten
		}
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return History{}, fmt.Errorf("reading %s: %w", FileStatsHistory, err)
		}
		tsText, hasTS := row.Get(colTimestamp)
		var ts int64
		tsOK := false
		if hasTS {
			v, err := ParsePyInt(tsText)
			if err == nil || errors.Is(err, ErrIntRange) {
				ts, tsOK = v, true
				if !h.HasBounds || ts < h.First {
					h.First = ts
				}
				if !h.HasBounds || ts > h.Last {
					h.Last = ts
				}
				h.HasBounds = true
			}
		}
		name, _ := row.Get(colName)
		if !isAggregateName(name) {
			continue
		}
		usersText, hasUsers := row.Get(colUserCount)
		if !hasUsers {
			continue
		}
		users, err := ParsePyFloat(usersText)
		if err != nil || math.IsNaN(users) || math.IsInf(users, 0) {
			continue
		}
		if users > 0 {
			h.Observed = append(h.Observed, users)
		}
		if tsOK {
			h.Samples = append(h.Samples, UserSample{Timestamp: ts, Users: users})
		}
	}
}

// OperationStats is one stats.csv row with a non-empty Name and both Request
// Count and Failure Count present. The counts are kept as written (trimmed):
// a corrupt integer changes trial_summary's output (only
// aggregate_failure_ratio, null), so the decision belongs to the caller; use
// Counts to parse them.
type OperationStats struct {
	Type     string // "" when absent
	Name     string
	Requests string
	Failures string
	Line     int // physical line the row ends on
}

// Counts parses Requests and Failures like Python's int(). An error means a
// corrupt integer (ErrNotNumber, or ErrIntRange for counts beyond int64,
// which no real run reaches).
func (o OperationStats) Counts() (requests, failures int64, err error) {
	requests, err = ParsePyInt(o.Requests)
	if err != nil {
		return 0, 0, fmt.Errorf("%s %q of %q: %w", colRequestCount, o.Requests, o.Name, err)
	}
	failures, err = ParsePyInt(o.Failures)
	if err != nil {
		return 0, 0, fmt.Errorf("%s %q of %q: %w", colFailureCount, o.Failures, o.Name, err)
	}
	return requests, failures, nil
}

// ReadStatsCSV returns stats.csv's operation rows in file order (the
// "Aggregated" row included; the caller applies "last row of a name wins").
// On error (including ErrHalfWritten) the rows are nil.
func ReadStatsCSV(r io.Reader) ([]OperationStats, error) {
	var out []OperationStats
	tail := &tailReader{r: r}
	c := NewCSVReader(tail)
	for {
		row, err := c.Next()
		if err == io.EOF && tail.cut() {
			err = ErrHalfWritten
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", FileStats, err)
		}
		name, _ := row.Get(colName)
		if name == "" {
			continue
		}
		req, okReq := row.Get(colRequestCount)
		fail, okFail := row.Get(colFailureCount)
		if !okReq || !okFail {
			continue
		}
		typ, _ := row.Get(colType)
		out = append(out, OperationStats{Type: typ, Name: name, Requests: req, Failures: fail, Line: row.Line})
	}
}

// HasDataRows reports whether a CSV file (stats.csv) has at least one data
// row after its header, as csv.DictReader would yield (empty lines do not
// count; a line of spaces does). Only the start of the file is read.
func HasDataRows(r io.Reader) (bool, error) {
	_, err := NewCSVReader(r).Next()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", FileStats, err)
	}
	return true, nil
}

// Status is status.json. A field that is missing or of another JSON type is
// nil (the file is Locust's, never written here).
type Status struct {
	LocustExitCode *int64 // a JSON integer
	StatsGenerated *bool  // a JSON boolean
}

// ReadStatus parses status.json. Anything but one JSON object (at most 1 MiB)
// is an error; the caller then falls back to the stats.csv rule and says so.
func ReadStatus(r io.Reader) (Status, error) {
	data, err := io.ReadAll(io.LimitReader(r, statusSizeLimit+1))
	if err != nil {
		return Status{}, fmt.Errorf("reading %s: %w", FileStatus, err)
	}
	if len(data) > statusSizeLimit {
		return Status{}, fmt.Errorf("reading %s: larger than %d bytes", FileStatus, statusSizeLimit)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return Status{}, fmt.Errorf("parsing %s: %w", FileStatus, err)
	}
	if obj == nil {
		return Status{}, fmt.Errorf("parsing %s: not a JSON object", FileStatus)
	}
	var st Status
	if raw, ok := obj[statusKeyExit]; ok {
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&n) == nil {
			if v, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
				st.LocustExitCode = &v
			}
		}
	}
	if raw, ok := obj[statusKeyStatsOK]; ok {
		// Only a JSON boolean: Unmarshal would also accept null into a bool.
		switch string(bytes.TrimSpace(raw)) {
		case "true":
			b := true
			st.StatsGenerated = &b
		case "false":
			b := false
			st.StatsGenerated = &b
		}
	}
	return st, nil
}

// pyToASCII is CPython's _PyUnicode_TransformDecimalAndSpaceToASCII, which
// int() and float() apply first: Unicode whitespace becomes ' ', Unicode
// decimal digits their ASCII digit; any other non-ASCII character makes the
// string invalid (ok=false).
func pyToASCII(s string) (string, bool) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s, true
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r == unicode.ReplacementChar:
			return "", false // invalid UTF-8 in a Go string, or a literal U+FFFD: neither is a digit
		case pyIsSpace(r):
			b.WriteByte(' ')
		default:
			d, ok := decimalValue(r)
			if !ok {
				return "", false
			}
			b.WriteByte("0123456789"[d])
		}
	}
	return b.String(), true
}

// decimalValue is the Unicode decimal digit value of r (category Nd). Nd
// characters come in contiguous runs of ten starting at zero (a Unicode
// stability guarantee), and Go's table ranges start at a zero.
func decimalValue(r rune) (int, bool) {
	v := int64(r) // every table bound fits, whatever its width
	for _, rg := range unicode.Nd.R16 {
		if lo := int64(rg.Lo); v >= lo && v <= int64(rg.Hi) {
			return int((v - lo) % 10), true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo := int64(rg.Lo); v >= lo && v <= int64(rg.Hi) {
			return int((v - lo) % 10), true
		}
	}
	return 0, false
}

// isASCIISpace is C's isspace in the "C" locale (CPython's Py_ISSPACE).
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimASCIISpace(s string) string {
	for len(s) > 0 && isASCIISpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isASCIISpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// ParsePyInt parses s like Python's int(s) (base 10): surrounding whitespace,
// one optional sign, decimal digits (Unicode digits too) with single
// underscores between digits, leading zeros allowed, at most 4300 digits.
// Anything else is ErrNotNumber. A valid integer outside int64 returns the
// nearest int64 and ErrIntRange.
func ParsePyInt(s string) (int64, error) {
	a, ok := pyToASCII(s)
	if !ok {
		return 0, ErrNotNumber
	}
	a = trimASCIISpace(a)
	neg := false
	if len(a) > 0 && (a[0] == '+' || a[0] == '-') {
		neg = a[0] == '-'
		a = a[1:]
	}
	if len(a) == 0 || !isDigit(a[0]) {
		return 0, ErrNotNumber
	}
	var v uint64
	over := false
	digits := 0
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c == '_' {
			if i+1 >= len(a) || !isDigit(a[i+1]) {
				return 0, ErrNotNumber
			}
			continue
		}
		if !isDigit(c) {
			return 0, ErrNotNumber
		}
		digits++
		if !over {
			d := uint64(c - '0')
			if v > (math.MaxUint64-d)/10 {
				over = true
			} else {
				v = v*10 + d
			}
		}
	}
	if digits > pyMaxIntDigits {
		return 0, ErrNotNumber // Python >= 3.11 raises ValueError
	}
	switch {
	case neg && (over || v > 1<<63):
		return math.MinInt64, ErrIntRange
	case neg:
		return -int64(v), nil // v == 1<<63 wraps to MinInt64, which is exact
	case over || v > math.MaxInt64:
		return math.MaxInt64, ErrIntRange
	}
	return int64(v), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ParsePyFloat parses s like Python's float(s): surrounding whitespace, an
// optional sign, then "inf", "infinity" or "nan" in any case, or a decimal
// literal (digits with single underscores between digits, an optional '.',
// an optional exponent; no hex). Overflow gives ±Inf and underflow 0, as in
// Python. NaN and ±Inf are returned as values: callers decide about them.
func ParsePyFloat(s string) (float64, error) {
	a, ok := pyToASCII(s)
	if !ok {
		return 0, ErrNotNumber
	}
	if strings.IndexByte(a, '_') >= 0 {
		// CPython's _Py_string_to_number_with_underscores: an underscore must
		// sit between two digits; then the underscores are dropped.
		var b strings.Builder
		prev := byte(0)
		for i := 0; i < len(a); i++ {
			c := a[i]
			if c == '_' {
				if !isDigit(prev) {
					return 0, ErrNotNumber
				}
			} else {
				if prev == '_' && !isDigit(c) {
					return 0, ErrNotNumber
				}
				b.WriteByte(c)
			}
			prev = c
		}
		if prev == '_' {
			return 0, ErrNotNumber
		}
		a = b.String()
	}
	a = trimASCIISpace(a)
	body := a
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	if !isDecimalLiteral(body) {
		return 0, ErrNotNumber
	}
	v, err := strconv.ParseFloat(a, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return v, nil // ±Inf or 0, as Python's strtod gives
		}
		return 0, ErrNotNumber
	}
	return v, nil
}

// isDecimalLiteral matches digits* ['.' digits*] [(e|E) [sign] digits+] with
// at least one mantissa digit (no sign: the caller removed it).
func isDecimalLiteral(s string) bool {
	i, mant := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		mant++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			mant++
		}
	}
	if mant == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}
