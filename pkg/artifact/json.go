// Package artifact writes this project's artifacts byte-compatible with
// Python's json module (server-telemetry.md "Bytes on disk"): an ordered JSON
// value model, an encoder matching json.dumps (compact and indent=2), Python
// float repr, atomic file writes, and append/replace of stats.jsonl rows.
package artifact

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Field is one key/value pair of an Object.
type Field struct {
	Key   string
	Value any
}

// Object is a JSON object whose keys keep their order, like a Python dict.
//
// Values the encoder accepts (anything else is an error, so a mistake shows
// up at write time rather than as a silently different file):
//   - nil, bool, string, Number, Object, Marshaler;
//   - all Go integer types (written as integers);
//   - float64, written like Python's repr (NaN and ±Inf are errors: an
//     unmeasured value is nil, never a special float); float32 is refused
//     (its float64 digits would not be the ones the reader meant);
//   - a pointer to any accepted value (nil pointer: null);
//   - a slice or array of accepted values (a nil slice is [], as Python's
//     empty list).
//
// Go maps are refused: their order is random.
type Object []Field

// Get returns the value of key and whether it is present.
func (o Object) Get(key string) (any, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Set assigns key like Python's d[key] = value: an existing key keeps its
// position, a new one goes last.
func (o *Object) Set(key string, value any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = value
			return
		}
	}
	*o = append(*o, Field{key, value})
}

// Keys returns the keys in order.
func (o Object) Keys() []string {
	out := make([]string, len(o))
	for i, f := range o {
		out[i] = f.Key
	}
	return out
}

// Number is a JSON number written exactly as given (it must be a valid JSON
// number literal). Decode uses it for integers beyond int64, which Python
// keeps exactly.
type Number string

// Marshaler lets a type supply its JSON form as a value of this model.
type Marshaler interface {
	PythonJSON() (any, error)
}

// ErrNotFinite is returned when a NaN or ±Inf float reaches the encoder.
var ErrNotFinite = errors.New("NaN or infinite float cannot be written")

// maxDepth bounds nesting (encoder and decoder) so a cycle or hostile input
// cannot exhaust the stack or, indented, grow quadratically. Python's own
// json module stops near its recursion limit of 1000 too.
const maxDepth = 1000

// Marshal encodes v on one line like Python's json.dumps(v) (separators
// ", " and ": ", ensure_ascii).
func Marshal(v any) ([]byte, error) {
	e := encoder{compact: true}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// MarshalIndent encodes v like Python's json.dumps(v, indent=2), without a
// trailing newline.
func MarshalIndent(v any) ([]byte, error) {
	e := encoder{}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	buf     []byte
	compact bool
	nest    int // recursion depth, pointers included (level is indentation only)
}

func (e *encoder) newline(level int) {
	e.buf = append(e.buf, '\n')
	for range level {
		e.buf = append(e.buf, ' ', ' ')
	}
}

// sep writes the separator between items (Python: ", " compact, "," +
// newline indented).
func (e *encoder) sep(level int) {
	if e.compact {
		e.buf = append(e.buf, ',', ' ')
		return
	}
	e.buf = append(e.buf, ',')
	e.newline(level)
}

// value writes v; depth is the indentation level.
func (e *encoder) value(v any, depth int) error {
	e.nest++
	defer func() { e.nest-- }()
	if e.nest > maxDepth {
		return fmt.Errorf("nesting deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case string:
		e.buf = appendString(e.buf, x)
	case Number:
		if !validNumber(string(x)) {
			return fmt.Errorf("invalid JSON number %q", string(x))
		}
		e.buf = append(e.buf, x...)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ErrNotFinite
		}
		e.buf = append(e.buf, FormatFloat(x)...)
	case Object:
		return e.object(x, depth)
	case []any:
		return e.list(len(x), func(i int) any { return x[i] }, depth)
	case Marshaler:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		inner, err := x.PythonJSON()
		if err != nil {
			return err
		}
		return e.value(inner, depth)
	default:
		return e.reflectValue(reflect.ValueOf(v), depth)
	}
	return nil
}

func (e *encoder) reflectValue(rv reflect.Value, depth int) error {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf = strconv.AppendInt(e.buf, rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.buf = strconv.AppendUint(e.buf, rv.Uint(), 10)
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, rv.Bool())
	case reflect.String:
		if rv.Type() == reflect.TypeFor[Number]() {
			return e.value(Number(rv.String()), depth)
		}
		e.buf = appendString(e.buf, rv.String())
	case reflect.Float64:
		return e.value(rv.Float(), depth)
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.value(rv.Elem().Interface(), depth)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem() == reflect.TypeFor[Field]() {
			return e.object(rv.Convert(reflect.TypeFor[Object]()).Interface().(Object), depth)
		}
		return e.list(rv.Len(), func(i int) any { return rv.Index(i).Interface() }, depth)
	default:
		return fmt.Errorf("cannot encode %s as Python-compatible JSON", rv.Type())
	}
	return nil
}

func (e *encoder) list(n int, at func(int) any, depth int) error {
	if n == 0 {
		e.buf = append(e.buf, '[', ']')
		return nil
	}
	e.buf = append(e.buf, '[')
	if !e.compact {
		e.newline(depth + 1)
	}
	for i := range n {
		if i > 0 {
			e.sep(depth + 1)
		}
		if err := e.value(at(i), depth+1); err != nil {
			return err
		}
	}
	if !e.compact {
		e.newline(depth)
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) object(o Object, depth int) error {
	if len(o) == 0 {
		e.buf = append(e.buf, '{', '}')
		return nil
	}
	e.buf = append(e.buf, '{')
	if !e.compact {
		e.newline(depth + 1)
	}
	for i, f := range o {
		if i > 0 {
			e.sep(depth + 1)
		}
		e.buf = appendString(e.buf, f.Key)
		e.buf = append(e.buf, ':', ' ')
		if err := e.value(f.Value, depth+1); err != nil {
			return fmt.Errorf("%s: %w", f.Key, err)
		}
	}
	if !e.compact {
		e.newline(depth)
	}
	e.buf = append(e.buf, '}')
	return nil
}

const hexDigits = "0123456789abcdef"

func appendU(buf []byte, r rune) []byte {
	return append(buf, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendString writes s like Python's json.dumps with ensure_ascii=True:
// printable ASCII as is (including <, >, &, /), \" \\ \b \f \n \r \t, every
// other character as lowercase \uXXXX (astral ones as a surrogate pair).
// Bytes that are not UTF-8 are written as the lone surrogates \udc80..\udcff,
// which is what Python holds for such bytes in command-line arguments and
// environment variables (surrogateescape), so nothing is lost.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '"':
				buf = append(buf, '\\', '"')
			case c == '\\':
				buf = append(buf, '\\', '\\')
			case c >= ' ' && c <= '~':
				buf = append(buf, c)
			case c == '\b':
				buf = append(buf, '\\', 'b')
			case c == '\f':
				buf = append(buf, '\\', 'f')
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = appendU(buf, rune(c))
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = appendU(buf, 0xdc00+rune(c))
			i++
			continue
		}
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			buf = appendU(buf, 0xd800+(r>>10))
			buf = appendU(buf, 0xdc00+(r&0x3ff))
			continue
		}
		buf = appendU(buf, r)
	}
	return append(buf, '"')
}

// FormatFloat is Python's repr(x) (= str(x)) of a float: the shortest
// digits that round-trip, in fixed notation when 1e-4 <= |x| < 1e16 with
// ".0" added to integral values ("2.0", "0.8", "123456789012345.6"),
// otherwise scientific with a signed exponent of at least two digits
// ("1e-05", "1e+16", "1.5e-07"). NaN and ±Inf give Python's "nan", "inf",
// "-inf"; the encoder refuses them, and flat rows should hold null instead
// (see FloatMeasurement).
func FormatFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case x == 0:
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	// strconv's shortest round-trip digits equal Python's repr digits (both
	// pick the shortest string that reads back, closest to x on ties).
	s := strconv.FormatFloat(x, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	ePos := strings.IndexByte(s, 'e')
	mant, expText := s[:ePos], s[ePos+1:]
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if exp < -4 || exp >= 16 {
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
		return b.String()
	}
	point := exp + 1 // digits before the decimal point
	switch {
	case point <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	case point >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", point-len(digits)))
		b.WriteString(".0")
	default:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	}
	return b.String()
}

// validNumber checks the JSON number grammar.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}
