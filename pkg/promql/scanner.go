package promql

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// errSyntax marks input the scanner refuses as JSON; decodeAnswer replaces
// it with encoding/json's message.
var errSyntax = errors.New("invalid JSON")

type scanner struct {
	b []byte
	i int
	// intern shares the strings of repeated label names and values (most
	// series of an answer carry the same names, many the same values).
	intern map[string]string
}

func (p *scanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte (0 at the end).
func (p *scanner) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *scanner) expect(c byte) error {
	if p.peek() != c {
		return errSyntax
	}
	p.i++
	return nil
}

// null consumes a null if one is next.
func (p *scanner) null() (bool, error) {
	if p.peek() != 'n' {
		return false, nil
	}
	if len(p.b)-p.i < 4 || string(p.b[p.i:p.i+4]) != "null" {
		return false, errSyntax
	}
	p.i += 4
	return true, nil
}

// more reports whether another element of an object or array follows,
// consuming the comma or the closing delimiter. first is true before the
// first element.
func (p *scanner) more(first bool, end byte) (bool, error) {
	c := p.peek()
	if c == end {
		p.i++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, errSyntax
	}
	p.i++
	if p.peek() == end { // a trailing comma is not JSON
		return false, errSyntax
	}
	return true, nil
}

// rawString returns the bytes between the quotes of the next string and
// whether they contain escapes (then they must go through unquote).
func (p *scanner) rawString() ([]byte, bool, error) {
	if p.peek() != '"' {
		return nil, false, errSyntax
	}
	p.i++
	start := p.i
	escaped := false
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, escaped, nil
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return nil, false, errSyntax
		default:
			p.i++
		}
	}
	return nil, false, errSyntax
}

// unquote decodes an escaped string with encoding/json (rare in answers).
func unquote(raw []byte) (string, error) {
	q := make([]byte, 0, len(raw)+2)
	q = append(q, '"')
	q = append(q, raw...)
	q = append(q, '"')
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

// str reads a string value (interned when shared is true).
func (p *scanner) str(shared bool) (string, error) {
	raw, esc, err := p.rawString()
	if err != nil {
		return "", err
	}
	// Escapes, and invalid UTF-8 (which encoding/json turns into U+FFFD per
	// bad byte, as client_golang's decoder does), go the slow way.
	if esc || !utf8.Valid(raw) {
		return unquote(raw)
	}
	if !shared {
		return string(raw), nil
	}
	if s, ok := p.intern[string(raw)]; ok { // no allocation for the lookup
		return s, nil
	}
	s := string(raw)
	p.intern[s] = s
	return s, nil
}

// key reads an object key and its colon. The bytes are only valid until
// the next read; they are for comparison.
func (p *scanner) key() (string, error) {
	raw, esc, err := p.rawString()
	if err != nil {
		return "", err
	}
	var k string
	if esc {
		if k, err = unquote(raw); err != nil {
			return "", err
		}
	} else {
		k = unsafe.String(unsafe.SliceData(raw), len(raw)) // #nosec G103 -- a zero-copy view of the read buffer, which is not written again while the string is used
	}
	return k, p.expect(':')
}

// strOrNull reads a string, leaving def for null (as Unmarshal does).
func (p *scanner) strOrNull(what, def string) (string, error) {
	if isNull, err := p.null(); err != nil || isNull {
		return def, err
	}
	if p.peek() != '"' {
		if err := p.skip(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("%s: expected a string", what)
	}
	return p.str(false)
}

// digitsEnd is the index after the run of ASCII digits that starts at i.
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// number reads a JSON number and returns its text (valid until the next
// read).
func (p *scanner) number() (string, error) {
	p.ws()
	start := p.i
	b := p.b
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return "", errSyntax
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digitsEnd(b, d); i == d {
			return "", errSyntax // a fraction needs a digit
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digitsEnd(b, d); i == d {
			return "", errSyntax // an exponent needs a digit
		}
	}
	p.i = i
	return unsafe.String(&b[start], i-start), nil // #nosec G103 -- a zero-copy view of the read buffer, which is not written again while the string is used
}

// skip reads and discards one value, validating it.
func (p *scanner) skip() error {
	switch c := p.peek(); c {
	case '{':
		return p.members(func(string) error { return p.skip() })
	case '[':
		p.i++
		for first := true; ; first = false {
			ok, err := p.more(first, ']')
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := p.skip(); err != nil {
				return err
			}
		}
	case '"':
		raw, esc, err := p.rawString()
		if err == nil && esc {
			_, err = unquote(raw)
		}
		return err
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				return nil
			}
		}
		return errSyntax
	default:
		_, err := p.number()
		return err
	}
}

// members reads an object, calling fn with each key; fn reads the value.
func (p *scanner) members(fn func(key string) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		ok, err := p.more(first, '}')
		if err != nil || !ok {
			return err
		}
		k, err := p.key()
		if err != nil {
			return err
		}
		if err := fn(k); err != nil {
			return err
		}
	}
}

// skipRestOfArray validates and consumes what is left of an array whose
// '[' and perhaps some elements were read.
func (p *scanner) skipRestOfArray() error {
	for {
		switch p.peek() {
		case ']':
			p.i++
			return nil
		case ',':
			p.i++
		}
		if err := p.skip(); err != nil {
			return err
		}
	}
}
