package runs

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Run id forms (runs.md "Run ids").
const (
	// IDLatest names the newest run across catalogs.
	IDLatest = "latest"
	// IDRange names the ad hoc run whose window is the dashboard range.
	IDRange = "range"
	// promIDPrefix starts the id of a Prometheus-discovered run.
	promIDPrefix = "prom-"
)

// IDKind says which catalog a run id points into.
type IDKind int

// The kinds of run id.
const (
	KindStore  IDKind = iota + 1 // <test_name>/<run_ts>/<tag>
	KindProm                     // prom-<start_ts>
	KindLatest                   // latest
	KindRange                    // range
)

// ErrInvalidRunID is wrapped by every run-id validation failure.
var ErrInvalidRunID = errors.New("invalid run id")

// RunID is a parsed, validated run id. For KindStore, TestName and Tag are
// the unescaped path segments; they are guaranteed to be usable as single
// object-key segments under the store prefix (no "/", "\", "." or ".."
// segment, no control characters, valid UTF-8).
type RunID struct {
	Kind     IDKind
	TestName string
	RunTS    int64 // store run_ts or the Prometheus start_ts
	Tag      string
}

// String formats the canonical id (the inverse of ParseRunID).
func (id RunID) String() string {
	switch id.Kind {
	case KindStore:
		return StoreRunID(id.TestName, id.RunTS, id.Tag)
	case KindProm:
		return PromRunID(id.RunTS)
	case KindLatest:
		return IDLatest
	case KindRange:
		return IDRange
	}
	return ""
}

// StoreRunID is the id of a results-store run: each part URL-path-escaped.
// "$" is escaped too, so an id never looks like a dashboard variable.
func StoreRunID(testName string, runTS int64, tag string) string {
	return escapeSegment(testName) + "/" + strconv.FormatInt(runTS, 10) + "/" + escapeSegment(tag)
}

func escapeSegment(s string) string { return strings.ReplaceAll(url.PathEscape(s), "$", "%24") }

// PromRunID is the id of a Prometheus-discovered run.
func PromRunID(startTS int64) string { return promIDPrefix + strconv.FormatInt(startTS, 10) }

// maxRunIDLen bounds what a user can make the catalog handle: two fully
// escaped segments of maxSegmentLen bytes plus the timestamp fit.
const (
	maxSegmentLen = 255
	maxRunIDLen   = 2*3*maxSegmentLen + 16
)

// ParseRunID validates a user-supplied run id. It never lets a store id
// reach outside the results-store prefix: ".." and "." segments, absolute
// paths, backslashes, URL schemes, control characters and escapes that
// decode to any of these are rejected.
func ParseRunID(raw string) (RunID, error) {
	bad := func(why string) (RunID, error) {
		return RunID{}, fmt.Errorf("%w %q: %s", ErrInvalidRunID, truncateForMessage(raw), why)
	}
	switch {
	case raw == "":
		return bad("empty")
	case len(raw) > maxRunIDLen:
		return bad("too long")
	case raw == IDLatest:
		return RunID{Kind: KindLatest}, nil
	case raw == IDRange:
		return RunID{Kind: KindRange}, nil
	case !utf8.ValidString(raw):
		return bad("not valid UTF-8")
	case strings.HasPrefix(raw, "$") && !strings.Contains(raw, "/"):
		return bad("an unresolved dashboard variable")
	case strings.HasPrefix(raw, promIDPrefix) && !strings.Contains(raw, "/"):
		ts, err := parseUnixSeconds(raw[len(promIDPrefix):])
		if err != nil {
			return bad("prom-<start_ts> needs Unix seconds")
		}
		return RunID{Kind: KindProm, RunTS: ts}, nil
	}
	if strings.Contains(raw, "://") || strings.HasPrefix(raw, "/") || strings.Contains(raw, `\`) {
		return bad("not a run id (a URL or a path?)")
	}
	parts := strings.Split(raw, "/")
	if len(parts) != 3 {
		return bad("want <test_name>/<run_ts>/<tag>, latest, range or prom-<start_ts>")
	}
	test, err := idSegment(parts[0])
	if err != nil {
		return bad("test name: " + err.Error())
	}
	tag, err := idSegment(parts[2])
	if err != nil {
		return bad("tag: " + err.Error())
	}
	ts, err := parseUnixSeconds(parts[1])
	if err != nil {
		return bad("run_ts: " + err.Error())
	}
	return RunID{Kind: KindStore, TestName: test, RunTS: ts, Tag: tag}, nil
}

// idSegment unescapes one id segment and checks it can only ever name a
// single path segment.
func idSegment(esc string) (string, error) {
	s, err := url.PathUnescape(esc)
	if err != nil {
		return "", errors.New("bad %-escape")
	}
	if err := ValidSegment(s); err != nil {
		return "", err
	}
	return s, nil
}

// ValidSegment reports whether s can be used as one object-key segment of a
// store path (a test name or tag): non-empty, valid UTF-8, not "." or "..",
// no "/" or "\" and no control characters.
func ValidSegment(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case len(s) > maxSegmentLen:
		return errors.New("longer than 255 bytes")
	case s == "." || s == "..":
		return errors.New(`"." and ".." are not allowed`)
	case !utf8.ValidString(s):
		return errors.New("not valid UTF-8")
	case strings.ContainsAny(s, `/\`):
		return errors.New(`contains "/" or "\"`)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return errors.New("contains a control character")
		}
	}
	return nil
}

// parseUnixSeconds accepts base-10 digits only (no sign, no spaces), at most
// 12 digits: far past any plausible run and never overflowing.
func parseUnixSeconds(s string) (int64, error) {
	if s == "" || len(s) > 12 {
		return 0, errors.New("want 1 to 12 decimal digits")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("want decimal digits only")
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return v, nil
}

func truncateForMessage(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + "…"
}
