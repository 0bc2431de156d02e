package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: extra data after the value", ErrInvalidJSON)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nesting deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj.Set(key, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return obj, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return decodeNumber(t.String())
	case string, bool, nil:
		return t, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
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
