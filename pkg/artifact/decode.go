package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ErrInvalidJSON wraps every Decode failure.
var ErrInvalidJSON = errors.New("invalid JSON")

// Decode parses one JSON value into this package's model, holding what
// Python's json.loads would hold, so Marshal writes back what json.dumps
// would: objects become Object (key order kept; a repeated key keeps its
// first position and takes the last value, as a dict does), arrays []any,
// strings string, true/false bool, null nil, integers int64 (Number when
// beyond int64, digits kept exactly: Python ints are unbounded; "-0" is 0),
// other numbers float64 ("3.0" stays 3.0 and writes back as "3.0").
//
// Refused where Python would accept: the NaN/Infinity literals and numbers
// that overflow a float (json.dumps would write them back as NaN/Infinity,
// which is not JSON). Invalid UTF-8 is refused as Python refuses it; a lone
// surrogate escape ("\ud800") becomes U+FFFD (encoding/json's rule).
func Decode(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrInvalidJSON)
	}
	d := decoders.Get().(*decoder)
	defer d.release()
	// A bytes.Buffer is read in place, without a copy. Raw UTF-8 is checked
	// above; AllowInvalidUTF8 only lets a lone surrogate escape through,
	// which unquoting turns into U+FFFD. Repeated keys are resolved in
	// object, as Object.Set does.
	d.dec.Reset(bytes.NewBuffer(data),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := d.value(0)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("%w: extra data after the value", ErrInvalidJSON)
	}
	return v, nil
}

// decoder is the state of one Decode call, pooled across calls. fields and
// items are stacks holding the members of the objects and arrays being read,
// so each Object and []any is allocated once, at its final size.
type decoder struct {
	dec    *jsontext.Decoder
	fields []Field
	items  []any
}

var decoders = sync.Pool{New: func() any { return &decoder{dec: jsontext.NewDecoder(noInput{})} }}

// noInput is the reader of a pooled decoder, so it keeps no input alive.
type noInput struct{}

func (noInput) Read([]byte) (int, error) { return 0, io.EOF }

// maxScratch bounds the stacks a pooled decoder keeps.
const maxScratch = 1 << 12

// release returns d to the pool, holding no reference to the input or to
// decoded values (an error leaves members on the stacks).
func (d *decoder) release() {
	d.dec.Reset(noInput{})
	clear(d.fields)
	clear(d.items)
	d.fields, d.items = d.fields[:0], d.items[:0]
	if cap(d.fields) > maxScratch {
		d.fields = nil
	}
	if cap(d.items) > maxScratch {
		d.items = nil
	}
	decoders.Put(d)
}

// indexFrom is the object size from which object indexes keys, where a
// linear search per key would make reading the object quadratic.
const indexFrom = 64

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nesting deeper than %d", maxDepth)
	}
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		return d.object(depth)
	case '[':
		base := len(d.items)
		for d.dec.PeekKind() != ']' { // a peek error comes back from ReadToken
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d.items = append(d.items, v)
		}
		if _, err := d.dec.ReadToken(); err != nil { // ']'
			return nil, err
		}
		list := append(make([]any, 0, len(d.items)-base), d.items[base:]...)
		clear(d.items[base:])
		d.items = d.items[:base]
		return list, nil
	case '"':
		return tok.String(), nil
	case '0':
		return decodeNumber(tok.String()) // a number's String is its raw text
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// object reads the members of an object whose '{' has been read. A
// repeated key keeps its first position and takes the last value.
func (d *decoder) object(depth int) (any, error) {
	base := len(d.fields)
	var index map[string]int // key to position in d.fields, from indexFrom keys on
	for d.dec.PeekKind() != '}' {
		kt, err := d.dec.ReadToken() // the decoder accepts only a string here
		if err != nil {
			return nil, err
		}
		key := kt.String()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		at := -1
		if index != nil {
			if i, ok := index[key]; ok {
				at = i
			}
		} else {
			for i := base; i < len(d.fields); i++ {
				if d.fields[i].Key == key {
					at = i
					break
				}
			}
		}
		if at >= 0 {
			d.fields[at].Value = v
			continue
		}
		d.fields = append(d.fields, Field{key, v})
		if index != nil {
			index[key] = len(d.fields) - 1
		} else if len(d.fields)-base == indexFrom {
			index = make(map[string]int, 2*indexFrom)
			for i := base; i < len(d.fields); i++ {
				index[d.fields[i].Key] = i
			}
		}
	}
	if _, err := d.dec.ReadToken(); err != nil { // '}'
		return nil, err
	}
	obj := append(make(Object, 0, len(d.fields)-base), d.fields[base:]...)
	clear(d.fields[base:])
	d.fields = d.fields[:base]
	return obj, nil
}

func decodeNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return Number(s), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %s overflows a float", s)
	}
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, err
	}
	return f, nil // underflow gives 0 or a subnormal, as in Python
}
