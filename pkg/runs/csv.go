package runs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads Locust's CSV files the way the reference Python tooling
// does: csv.DictReader (default "excel" dialect, strict=False) over a file
// opened with encoding "utf-8-sig" and newline="", header names trimmed with
// str.strip() before the rows are zipped, values trimmed with str.strip().
// Go's encoding/csv is not used because it differs on bare quotes
// (`a"b`, `"ab"cd`), on empty lines and on an unterminated quoted field.
//
// The Python behaviours reproduced, each pinned by a table test and checked
// against python3 in TestCSVMatchesPython:
//   - records end at "\n", "\r\n" or a lone "\r" outside quotes; inside quotes
//     line breaks are kept as written;
//   - a quote opens a quoted field only as a field's first character;
//     elsewhere it is literal; `""` inside quotes is one quote; a quote that
//     closes a field followed by anything but a delimiter or line end is
//     dropped and the rest of the field read unquoted (`"ab"cd` -> `abcd`);
//   - an unterminated quoted field at end of input ends the record (the field
//     holds everything read, line breaks included);
//   - NUL is an ordinary character (Python >= 3.11);
//   - a field longer than 131072 characters is an error (csv.field_size_limit);
//   - the first record is the header even when it is an empty line; later
//     empty records are skipped; a row shorter than the header leaves the
//     trailing columns absent, extra fields are ignored; when a trimmed
//     header name repeats, the last column of that name wins, and is absent
//     when the row is too short to reach it (dict(zip()) then restval);
//   - a UTF-8 byte order mark at the very start is skipped; invalid UTF-8 is
//     an error (Python's strict decoder raises), so the file is unreadable.
//
// Errors are sticky: after one, every call returns it.

// CSVFieldLimit is Python's default csv.field_size_limit(), in characters.
const CSVFieldLimit = 131072

// ErrCSVFieldTooLarge is returned for a field longer than CSVFieldLimit.
var ErrCSVFieldTooLarge = errors.New("field larger than field limit (131072)")

// ErrCSVInvalidUTF8 is returned for bytes that are not UTF-8.
var ErrCSVInvalidUTF8 = errors.New("invalid UTF-8")

// CSVReader is a csv.DictReader equivalent. The zero value is not usable;
// call NewCSVReader. Not safe for concurrent use.
type CSVReader struct {
	rec       csvRecordReader
	header    []string
	index     map[string]int // trimmed name -> index of its last column
	headerSet bool
	err       error
}

// CSVRow is one data row.
type CSVRow struct {
	// Line is the 1-based physical line on which the row ends.
	Line   int
	fields []string
	index  map[string]int
}

// Get returns the trimmed value of the named column (trimmed name) and
// whether it is present: a column missing from the header, or a trailing
// field missing from this row, is absent.
func (r CSVRow) Get(name string) (string, bool) {
	i, ok := r.index[name]
	if !ok || i >= len(r.fields) {
		return "", false
	}
	return PyStrip(r.fields[i]), true
}

// Len is the number of fields in the row as read (extra fields included).
func (r CSVRow) Len() int { return len(r.fields) }

// NewCSVReader reads from r (buffered internally).
func NewCSVReader(r io.Reader) *CSVReader {
	return &CSVReader{rec: csvRecordReader{br: bufio.NewReaderSize(r, 16<<10)}}
}

// Header returns the trimmed header names (nil for an empty input, an empty
// slice when the first line is empty).
func (c *CSVReader) Header() ([]string, error) {
	if c.headerSet || c.err != nil {
		return c.header, c.err
	}
	c.headerSet = true
	rec, err := c.rec.read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		c.err = err
		return nil, err
	}
	c.header = make([]string, len(rec))
	c.index = make(map[string]int, len(rec))
	for i, h := range rec {
		c.header[i] = PyStrip(h)
		c.index[c.header[i]] = i
	}
	return c.header, nil
}

// Next returns the next non-empty data row, or io.EOF after the last one.
func (c *CSVReader) Next() (CSVRow, error) {
	if _, err := c.Header(); err != nil {
		return CSVRow{}, err
	}
	if c.header == nil {
		return CSVRow{}, io.EOF
	}
	for {
		rec, err := c.rec.read()
		if err != nil {
			if err != io.EOF {
				c.err = err
			}
			return CSVRow{}, err
		}
		if len(rec) == 0 {
			continue // DictReader skips empty records
		}
		return CSVRow{Line: c.rec.line, fields: rec, index: c.index}, nil
	}
}

const (
	csvStartRecord = iota
	csvStartField
	csvInField
	csvInQuoted
	csvQuoteInQuoted
	csvEatCRNL
)

// csvEOL is the end-of-line event Python's reader processes after each line.
const csvEOL rune = -2

type csvRecordReader struct {
	br      *bufio.Reader
	line    int // physical lines fully consumed (a final unterminated one counts)
	started bool
	midLine bool
	state   int
	// The record's field bytes go into rec back to back; ends[i] is where
	// field i ends. One string is made per record and the fields are cut
	// from it (two allocations per record instead of one per field).
	rec      []byte
	ends     []int
	fieldLen int // characters in the current field
	err      error
}

// read returns the next record ([]string{} for an empty line) or io.EOF.
func (p *csvRecordReader) read() ([]string, error) {
	if p.err != nil {
		return nil, p.err
	}
	p.state = csvStartRecord
	p.rec = p.rec[:0]
	p.ends = p.ends[:0]
	p.fieldLen = 0
	for {
		if p.state == csvInField || p.state == csvInQuoted {
			if err := p.bulk(); err != nil {
				return nil, err
			}
		}
		r, size, err := p.br.ReadRune()
		if err != nil {
			if err != io.EOF {
				p.err = fmt.Errorf("line %d: %w", p.line+1, err)
				return nil, p.err
			}
			if p.midLine {
				// The last line had no terminator: Python still ends it with EOL.
				p.midLine = false
				p.line++
				if err := p.process(csvEOL); err != nil {
					return nil, err
				}
				if p.state == csvStartRecord {
					return p.record(), nil
				}
			}
			if p.fieldLen != 0 || p.state == csvInQuoted {
				// strict=False: an unterminated quoted field ends the record.
				p.saveField()
				p.state = csvStartRecord
				return p.record(), nil
			}
			return nil, io.EOF
		}
		if r == utf8.RuneError && size == 1 {
			p.err = fmt.Errorf("line %d: %w", p.line+1, ErrCSVInvalidUTF8)
			return nil, p.err
		}
		if !p.started {
			p.started = true
			if r == '\uFEFF' {
				continue
			}
		}
		p.midLine = true
		if err := p.process(r); err != nil {
			return nil, err
		}
		if r == '\r' {
			if b, err := p.br.Peek(1); err == nil && b[0] == '\n' {
				_, _ = p.br.ReadByte()
				if err := p.process('\n'); err != nil {
					return nil, err
				}
			}
		}
		if r == '\n' || r == '\r' {
			p.midLine = false
			p.line++
			if err := p.process(csvEOL); err != nil {
				return nil, err
			}
			if p.state == csvStartRecord {
				return p.record(), nil
			}
		}
	}
}

// record cuts the finished record into fields ([]string{} for an empty line).
func (p *csvRecordReader) record() []string {
	all := string(p.rec)
	fields := make([]string, len(p.ends))
	start := 0
	for i, end := range p.ends {
		fields[i] = all[start:end]
		start = end
	}
	return fields
}

// bulk is a fast path for the common case: it takes the run of plain ASCII
// bytes at the head of the buffer that the state machine would add to the
// current field one by one (no delimiter, quote, line break or non-ASCII).
func (p *csvRecordReader) bulk() error {
	if _, err := p.br.Peek(1); err != nil {
		return nil // let ReadRune report EOF or the error
	}
	buf, _ := p.br.Peek(p.br.Buffered())
	n := 0
	for n < len(buf) {
		c := buf[n]
		if c == ',' || c == '"' || c == '\n' || c == '\r' || c >= utf8.RuneSelf {
			break
		}
		n++
	}
	if n == 0 {
		return nil
	}
	if p.fieldLen+n > CSVFieldLimit {
		p.err = fmt.Errorf("line %d: %w", p.line+1, ErrCSVFieldTooLarge)
		return p.err
	}
	p.rec = append(p.rec, buf[:n]...)
	p.fieldLen += n
	p.midLine = true
	_, _ = p.br.Discard(n)
	return nil
}

func (p *csvRecordReader) saveField() {
	p.ends = append(p.ends, len(p.rec))
	p.fieldLen = 0
}

func (p *csvRecordReader) addChar(r rune) error {
	if p.fieldLen >= CSVFieldLimit {
		p.err = fmt.Errorf("line %d: %w", p.line+1, ErrCSVFieldTooLarge)
		return p.err
	}
	p.rec = utf8.AppendRune(p.rec, r)
	p.fieldLen++
	return nil
}

// process is Python's parse_process_char for the excel dialect, strict=False.
func (p *csvRecordReader) process(c rune) error {
	switch p.state {
	case csvStartRecord:
		if c == csvEOL {
			return nil // empty line: the record is []
		}
		if c == '\n' || c == '\r' {
			p.state = csvEatCRNL
			return nil
		}
		p.state = csvStartField
		fallthrough
	case csvStartField:
		switch c {
		case '\n', '\r', csvEOL:
			p.saveField()
			p.state = csvEatCRNL
			if c == csvEOL {
				p.state = csvStartRecord
			}
		case '"':
			p.state = csvInQuoted
		case ',':
			p.saveField()
		default:
			if err := p.addChar(c); err != nil {
				return err
			}
			p.state = csvInField
		}
	case csvInField:
		switch c {
		case '\n', '\r', csvEOL:
			p.saveField()
			p.state = csvEatCRNL
			if c == csvEOL {
				p.state = csvStartRecord
			}
		case ',':
			p.saveField()
			p.state = csvStartField
		default:
			return p.addChar(c)
		}
	case csvInQuoted:
		switch c {
		case csvEOL:
		case '"':
			p.state = csvQuoteInQuoted
		default:
			return p.addChar(c)
		}
	case csvQuoteInQuoted:
		switch c {
		case '"':
			p.state = csvInQuoted
			return p.addChar(c)
		case ',':
			p.saveField()
			p.state = csvStartField
		case '\n', '\r', csvEOL:
			p.saveField()
			p.state = csvEatCRNL
			if c == csvEOL {
				p.state = csvStartRecord
			}
		default:
			p.state = csvInField
			return p.addChar(c)
		}
	case csvEatCRNL:
		// Lines end at the line break, so only EOL or another break can follow.
		if c == csvEOL {
			p.state = csvStartRecord
		}
	}
	return nil
}

// pyIsSpace is Python's str.isspace for one character: Unicode White_Space
// plus the ASCII information separators U+001C..U+001F (bidi class B/S).
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// PyStrip is Python's str.strip() with no argument.
func PyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}
