package phases

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Bounds of what the parser keeps of one line. A line itself may be of any
// length: it is decoded as a stream, and what lies beyond these bounds is
// validated and dropped, so memory never grows with line length.
const (
	// maxKeep is the longest string value kept (msg, time, dimensions).
	maxKeep = 4096
	// maxKey is the longest key compared against the record's keys.
	maxKey = 512
	// maxNumber is the longest number text parsed as a phase value.
	maxNumber = 512
	// MaxPhases is the most phases kept per record and prefix; more are
	// dropped and counted in Stats.PhasesDropped.
	MaxPhases = 128
	// maxDepth bounds the nesting of a decoded value.
	maxDepth = 512
)

var errSyntax = errors.New("phases: invalid JSON")

// errStop ends a line early: the newline (line mode) or the end of the input
// was reached inside a value.
var errStop = errors.New("phases: value cut by end of line")

// scanner reads bytes of one log; in line mode a '\n' ends the value being
// decoded (JSON strings cannot hold a raw newline, so a record never spans
// lines).
type scanner struct {
	br        *bufio.Reader
	multiline bool
	eol       bool  // the '\n' ending the current line was consumed
	ioErr     error // a read error other than EOF
	buf       []byte
}

// next returns the next byte; ok false at the end of the line or input.
func (s *scanner) next() (byte, bool) {
	b, err := s.br.ReadByte()
	if err != nil {
		if err != io.EOF {
			s.ioErr = err
		}
		return 0, false
	}
	if b == '\n' && !s.multiline {
		s.eol = true
		return 0, false
	}
	return b, true
}

func (s *scanner) back() { _ = s.br.UnreadByte() }

// skipSpace returns the first byte after JSON whitespace.
func (s *scanner) skipSpace() (byte, bool) {
	for {
		b, ok := s.next()
		if !ok {
			return 0, false
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b, true
	}
}

// restOfLine consumes the line; ok is false when a byte other than JSON
// whitespace was on it.
func (s *scanner) restOfLine() bool {
	clean := true
	for {
		b, ok := s.next()
		if !ok {
			return clean
		}
		switch b {
		case ' ', '\t', '\r':
		default:
			clean = false
		}
	}
}

// findBrace consumes the line up to and including its first '{'; false
// when the line (or the input) ended first.
func (s *scanner) findBrace() bool {
	for {
		if _, err := s.br.Peek(1); err != nil {
			if err != io.EOF {
				s.ioErr = err
			}
			return false
		}
		p, _ := s.br.Peek(s.br.Buffered())
		seg := p
		nl := bytes.IndexByte(p, '\n')
		if nl >= 0 {
			seg = p[:nl]
		}
		if i := bytes.IndexByte(seg, '{'); i >= 0 {
			_, _ = s.br.Discard(i + 1)
			return true
		}
		if nl >= 0 {
			_, _ = s.br.Discard(nl + 1)
			s.eol = true
			return false
		}
		_, _ = s.br.Discard(len(p))
	}
}

// skipLine consumes the rest of the current line.
func (s *scanner) skipLine() {
	if s.eol {
		return
	}
	for {
		_, err := s.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			s.ioErr = err
		}
		s.eol = true
		return
	}
}

// str decodes a JSON string after its opening quote into s.buf (up to keep
// bytes); kept is false when it was longer (the rest is validated, dropped).
func (s *scanner) str(keep int) (kept bool, err error) {
	s.buf = s.buf[:0]
	kept = true
	add := func(p []byte) {
		if !kept {
			return
		}
		if len(s.buf)+len(p) > keep {
			kept = false
			s.buf = s.buf[:0]
			return
		}
		s.buf = append(s.buf, p...)
	}
	var one [4]byte
	for {
		// Fast path: the plain bytes already buffered.
		if p, _ := s.br.Peek(s.br.Buffered()); len(p) > 0 {
			i := 0
			for i < len(p) && p[i] >= 0x20 && p[i] != '"' && p[i] != '\\' {
				i++
			}
			if i > 0 {
				add(p[:i])
				_, _ = s.br.Discard(i)
				continue
			}
		}
		b, ok := s.next()
		if !ok {
			return false, errStop
		}
		switch {
		case b == '"':
			return kept, nil
		case b < 0x20:
			return false, errSyntax
		case b != '\\':
			if kept && len(s.buf) < keep {
				s.buf = append(s.buf, b)
			} else {
				add([]byte{b})
			}
			continue
		}
		e, ok := s.next()
		if !ok {
			return false, errStop
		}
		switch e {
		case '"', '\\', '/':
			one[0] = e
		case 'b':
			one[0] = '\b'
		case 'f':
			one[0] = '\f'
		case 'n':
			one[0] = '\n'
		case 'r':
			one[0] = '\r'
		case 't':
			one[0] = '\t'
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return false, err
			}
			if utf16.IsSurrogate(r) {
				r = s.lowSurrogate(r)
			}
			n := utf8.EncodeRune(one[:], r)
			add(one[:n])
			continue
		default:
			return false, errSyntax
		}
		add(one[:1])
	}
}

func (s *scanner) hex4() (rune, error) {
	var r rune
	for range 4 {
		b, ok := s.next()
		if !ok {
			return 0, errStop
		}
		d, ok := hexDigit(b)
		if !ok {
			return 0, errSyntax
		}
		r = r<<4 | d
	}
	return r, nil
}

// hexDigit is the value of one hex digit of a \u escape.
func hexDigit(b byte) (rune, bool) {
	switch {
	case b >= '0' && b <= '9':
		return rune(b - '0'), true
	case b >= 'a' && b <= 'f':
		return rune(b - 'a' + 10), true
	case b >= 'A' && b <= 'F':
		return rune(b - 'A' + 10), true
	}
	return 0, false
}

// lowSurrogate completes a surrogate pair when "\uDCxx" follows; a lone
// surrogate decodes to U+FFFD (Python keeps it; no key or value of a record
// depends on it).
func (s *scanner) lowSurrogate(hi rune) rune {
	if hi >= 0xDC00 {
		return utf8.RuneError
	}
	p, err := s.br.Peek(6)
	if err != nil || p[0] != '\\' || p[1] != 'u' {
		return utf8.RuneError
	}
	var lo rune
	for _, b := range p[2:] {
		d, ok := hexDigit(b)
		if !ok {
			return utf8.RuneError
		}
		lo = lo<<4 | d
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return utf8.RuneError
	}
	_, _ = s.br.Discard(6)
	return utf16.DecodeRune(hi, lo)
}

// number reads a number whose first byte is b into s.buf; kept is false for
// a text longer than maxNumber. NaN, Infinity and -Infinity (Python's json
// extension) are numbers here too.
func (s *scanner) number(b byte) (kept bool, err error) {
	s.buf = append(s.buf[:0], b)
	if b == 'N' {
		return true, s.literal("aN", "NaN")
	}
	if b == 'I' {
		return true, s.literal("nfinity", "Infinity")
	}
	kept = true
	for {
		c, ok := s.next()
		if !ok {
			break
		}
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			if len(s.buf) < maxNumber {
				s.buf = append(s.buf, c)
			} else {
				kept = false
			}
			continue
		}
		if c == 'I' && len(s.buf) == 1 && s.buf[0] == '-' {
			return true, s.literal("nfinity", "-Infinity")
		}
		s.back()
		break
	}
	if kept && !validNumber(s.buf) {
		return false, errSyntax
	}
	return kept, nil
}

// literal reads the rest of a literal and leaves its full text in s.buf.
func (s *scanner) literal(rest, full string) error {
	for i := 0; i < len(rest); i++ {
		b, ok := s.next()
		if !ok {
			return errStop
		}
		if b != rest[i] {
			return errSyntax
		}
	}
	s.buf = append(s.buf[:0], full...)
	return nil
}

// validNumber checks the JSON number grammar.
func validNumber(p []byte) bool {
	i := 0
	if i < len(p) && p[i] == '-' {
		i++
	}
	switch {
	case i < len(p) && p[i] == '0':
		i++
	case i < len(p) && p[i] >= '1' && p[i] <= '9':
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(p) && p[i] == '.' {
		i++
		if i >= len(p) || p[i] < '0' || p[i] > '9' {
			return false
		}
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	}
	if i < len(p) && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < len(p) && (p[i] == '+' || p[i] == '-') {
			i++
		}
		if i >= len(p) || p[i] < '0' || p[i] > '9' {
			return false
		}
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
	}
	return i == len(p)
}

// kind of a decoded value the record may use.
type kind int

const (
	kindOther kind = iota // object, array, bool, null, or a dropped long value
	kindString
	kindNumber
)

// skipValue validates and drops one value whose first byte is b.
func (s *scanner) skipValue(b byte, depth int) error {
	if depth > maxDepth {
		return errSyntax
	}
	switch {
	case b == '{':
		return s.object(depth+1, func(string, byte, bool) error { return errSkip })
	case b == '[':
		return s.array(depth+1, func(b byte) error { return s.skipValue(b, depth+1) })
	case b == '"':
		_, err := s.str(0)
		return err
	case b == 't':
		return s.literal("rue", "true")
	case b == 'f':
		return s.literal("false"[1:], "false")
	case b == 'n':
		return s.literal("ull", "null")
	case b == '-' || b == 'N' || b == 'I' || (b >= '0' && b <= '9'):
		_, err := s.number(b)
		return err
	}
	return errSyntax
}

// object decodes an object after its '{'. For each member it calls member
// with the key (valid only during the call; kept false for a key longer than
// maxKey) and the value's first byte; member must consume the value, or
// return errSkip to have it skipped.
func (s *scanner) object(depth int, member func(key string, first byte, kept bool) error) error {
	b, ok := s.skipSpace()
	if !ok {
		return errStop
	}
	if b == '}' {
		return nil
	}
	for {
		if b != '"' {
			return errSyntax
		}
		kept, err := s.str(maxKey)
		if err != nil {
			return err
		}
		key := string(s.buf) // short: bounded by maxKey
		if b, ok = s.skipSpace(); !ok {
			return errStop
		}
		if b != ':' {
			return errSyntax
		}
		if b, ok = s.skipSpace(); !ok {
			return errStop
		}
		err = member(key, b, kept)
		if err == errSkip {
			err = s.skipValue(b, depth)
		}
		if err != nil {
			return err
		}
		var done bool
		if b, done, err = s.after('}'); done || err != nil {
			return err
		}
	}
}

var errSkip = errors.New("skip value")

// array decodes an array after its '['; elem consumes each element.
func (s *scanner) array(depth int, elem func(first byte) error) error {
	if depth > maxDepth {
		return errSyntax
	}
	b, ok := s.skipSpace()
	if !ok {
		return errStop
	}
	if b == ']' {
		return nil
	}
	for {
		if err := elem(b); err != nil {
			return err
		}
		var (
			done bool
			err  error
		)
		if b, done, err = s.after(']'); done || err != nil {
			return err
		}
	}
}

// after reads what follows a member or an element: done at closing, else
// the first byte after the comma.
func (s *scanner) after(closing byte) (next byte, done bool, err error) {
	b, ok := s.skipSpace()
	if !ok {
		return 0, false, errStop
	}
	switch b {
	case closing:
		return 0, true, nil
	case ',':
		if b, ok = s.skipSpace(); !ok {
			return 0, false, errStop
		}
		return b, false, nil
	}
	return 0, false, errSyntax
}

// value reads a value the record may use: a string up to maxKeep, a number,
// or anything else (validated and dropped). The text is in s.buf.
func (s *scanner) value(b byte, depth int) (kind, error) {
	switch {
	case b == '"':
		kept, err := s.str(maxKeep)
		if err != nil || !kept {
			return kindOther, err
		}
		return kindString, nil
	case b == '-' || b == 'N' || b == 'I' || (b >= '0' && b <= '9'):
		kept, err := s.number(b)
		if err != nil || !kept {
			return kindOther, err
		}
		return kindNumber, nil
	}
	return kindOther, s.skipValue(b, depth)
}

// phaseValue parses a number's text: ok only for a finite number.
func phaseValue(text []byte) (float64, bool) {
	if len(text) == 0 || text[0] == 'N' || text[0] == 'I' || (len(text) > 1 && text[1] == 'I') {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}
