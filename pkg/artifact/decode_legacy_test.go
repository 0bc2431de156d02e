package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// legacyDecode is Decode as written on encoding/json's Token API: the
// reference TestDecodeMatchesLegacy holds Decode to.
func legacyDecode(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrInvalidJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := legacyValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: extra data after the value", ErrInvalidJSON)
	}
	return v, nil
}

func legacyValue(dec *json.Decoder, depth int) (any, error) {
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
				v, err := legacyValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj.Set(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := legacyValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
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

// diffDecode fails t unless Decode and legacyDecode agree on data; it
// reports whether data was accepted.
func diffDecode(t *testing.T, data []byte) bool {
	t.Helper()
	v1, err1 := legacyDecode(data)
	v2, err2 := Decode(data)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%q: legacy err %v, new err %v", data, err1, err2)
	}
	if err2 != nil {
		if !errors.Is(err2, ErrInvalidJSON) {
			t.Fatalf("%q: %v does not wrap ErrInvalidJSON", data, err2)
		}
		return false
	}
	if !reflect.DeepEqual(v1, v2) {
		t.Fatalf("%q: legacy %#v, new %#v", data, v1, v2)
	}
	m1, e1 := Marshal(v1)
	m2, e2 := Marshal(v2)
	if !bytes.Equal(m1, m2) || (e1 == nil) != (e2 == nil) {
		t.Fatalf("%q: legacy %s %v, new %s %v", data, m1, e1, m2, e2)
	}
	return true
}

// diffPieces are fragments of JSON and near-JSON that random inputs are made of.
var diffPieces = []string{
	"{", "}", "[", "]", ",", ":", `"`, `\`, "u", "d800", "dc00", "DBFF", "dfff", "0041", `\ud800`, `\udc00`, `\ud83d\ude00`,
	`\"`, `\\`, `\/`, `\b`, `\n`, `\x`, `\u12`, "0", "1", "9", "-", ".", "e", "E", "+", "00", "1e400", "1e-400",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809", " ", "\t", "\n", "\r", "\f", "\v",
	"true", "false", "null", "tru", "nul", "NaN", "Infinity", `"a"`, `"b"`, "é", "\u2028", "\x00", "\x7f", "\xff", "\xed\xa0\x80",
	"\ufeff", "x", "/", "#",
}

// randJSON is a random JSON text, with the string escapes and numbers at the
// edges of Decode's rules.
func randJSON(r *rand.Rand, depth int) string {
	switch k := r.IntN(10); {
	case depth > 4 || k < 4:
		switch r.IntN(8) {
		case 0:
			a, b := r.Int64()>>r.IntN(64), r.Int64()>>r.IntN(64)
			return strconv.FormatInt(a-b, 10)
		case 1:
			return strconv.FormatFloat(r.NormFloat64()*float64(r.IntN(1e6)), 'g', -1, 64)
		case 2:
			return []string{"true", "false", "null", "-0", "0.0", "1E+2", "12345678901234567890123", "1e308", "1e309", "5e-324"}[r.IntN(10)]
		default:
			var b strings.Builder
			b.WriteByte('"')
			for range r.IntN(6) {
				b.WriteString([]string{"a", "é", `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00x`, `\n`, `\"`, "😀", `\ud800\ud800\udc00`, `\udbff\udfff`, `\ud800\u0041`, `\/`}[r.IntN(13)])
			}
			b.WriteByte('"')
			return b.String()
		}
	case k < 7:
		parts := make([]string, r.IntN(5))
		for i := range parts {
			parts[i] = randJSON(r, depth+1)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		parts := make([]string, r.IntN(5))
		for i := range parts {
			parts[i] = fmt.Sprintf("%q: %s", []string{"a", "b", "c", "é"}[r.IntN(4)], randJSON(r, depth+1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

// mutate inserts diffPieces into s, deletes or replaces bytes.
func mutate(r *rand.Rand, s []byte) []byte {
	for range r.IntN(4) {
		p := 0
		if len(s) > 0 {
			p = r.IntN(len(s) + 1)
		}
		switch r.IntN(3) {
		case 0:
			s = append(s[:p:p], append([]byte(diffPieces[r.IntN(len(diffPieces))]), s[p:]...)...)
		case 1:
			if p < len(s) {
				s = append(s[:p:p], s[p+1:]...)
			}
		default:
			if p < len(s) {
				s[p] = byte(r.IntN(128))
			}
		}
	}
	return s
}

// TestDecodeMatchesLegacy requires Decode and legacyDecode to agree on the
// FuzzDecode corpus, nesting at the depth limit, large objects with repeated
// keys and random near-JSON inputs (DIFF_N of them, default 20000, from seed
// DIFF_SEED): both refuse, or both give the same value.
func TestDecodeMatchesLegacy(t *testing.T) {
	files, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// "go test fuzz v1\n[]byte(\"...\")\n"
		line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[1])
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		diffDecode(t, []byte(s))
	}
	for _, s := range []string{`[` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth+1),
		`[` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+2),
		strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
		strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1),
		bigObject(3*indexFrom, 2*indexFrom), bigObject(indexFrom, indexFrom/2), bigObject(indexFrom+1, indexFrom/2),
		bigObject(indexFrom-1, indexFrom)} {
		diffDecode(t, []byte(s))
	}
	n := 20000
	if s := os.Getenv("DIFF_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed, _ := strconv.ParseUint(os.Getenv("DIFF_SEED"), 10, 64)
	r := rand.New(rand.NewPCG(seed, uint64(len(files))))
	ok := 0
	for range n {
		var in []byte
		if r.IntN(3) == 0 {
			for range r.IntN(12) {
				in = append(in, diffPieces[r.IntN(len(diffPieces))]...)
			}
		} else {
			in = []byte(randJSON(r, 0))
			if r.IntN(2) == 0 {
				in = mutate(r, in)
			}
		}
		if diffDecode(t, in) {
			ok++
		}
	}
	t.Logf("%d random inputs, %d accepted", n, ok)
}

// bigObject has n entries over keys k0..k(distinct-1), each key repeating.
func bigObject(n, distinct int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d": %d`, (i*7)%distinct, i)
	}
	b.WriteByte('}')
	return b.String()
}
