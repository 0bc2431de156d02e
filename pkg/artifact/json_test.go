package artifact

import (
	"errors"
	"math"
	"strings"
	"testing"
)

var tenth = 0.1 // a variable: constant arithmetic would be exact

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{2, "2.0"}, {0.8, "0.8"}, {1e-05, "1e-05"}, {1e16, "1e+16"}, {123456789012345.6, "123456789012345.6"},
		{0.0001, "0.0001"}, {math.Copysign(0, -1), "-0.0"}, {0, "0.0"}, {12, "12.0"}, {-2.5, "-2.5"},
		{1e15, "1000000000000000.0"}, {9999999999999998, "9999999999999998.0"}, {1.5e-07, "1.5e-07"},
		{1e100, "1e+100"}, {1.5e16, "1.5e+16"}, {-1e-05, "-1e-05"}, {0.00012345, "0.00012345"},
		{5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"}, {tenth + 2*tenth, "0.30000000000000004"},
		{1.0 / 3, "0.3333333333333333"}, {100, "100.0"}, {1234.5, "1234.5"}, {0.5, "0.5"}, {1e-4 * 0.99999, "9.9999e-05"},
		{1e22, "1e+22"}, {123456789, "123456789.0"}, {50, "50.0"},
		{math.NaN(), "nan"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
	}
	for _, tc := range tests {
		if got := FormatFloat(tc.in); got != tc.want {
			t.Errorf("FormatFloat(%v) = %q want %q", tc.in, got, tc.want)
		}
	}
}

type pyMarshaler struct{ v any }

func (p pyMarshaler) PythonJSON() (any, error) { return p.v, nil }

type ptrMarshaler struct{}

func (p *ptrMarshaler) PythonJSON() (any, error) { return "ptr", nil }

func TestMarshal(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	i := func(x int64) *int64 { return &x }
	s := func(x string) *string { return &x }
	var nilObj *Object
	var nilPM *ptrMarshaler
	tests := []struct {
		name    string
		in      any
		compact string
		indent  string
	}{
		{"null", nil, "null", "null"},
		{"bools", []any{true, false}, "[true, false]", "[\n  true,\n  false\n]"},
		{"ints", []any{0, -1, int64(math.MaxInt64), uint64(math.MaxUint64), int8(-8)}, "[0, -1, 9223372036854775807, 18446744073709551615, -8]",
			"[\n  0,\n  -1,\n  9223372036854775807,\n  18446744073709551615,\n  -8\n]"},
		{"floats", []float64{2, 0.8, 1e-05}, "[2.0, 0.8, 1e-05]", "[\n  2.0,\n  0.8,\n  1e-05\n]"},
		{"pointers", []any{f(1.5), (*float64)(nil), i(7), (*int64)(nil), s("x"), (*string)(nil), nilObj}, `[1.5, null, 7, null, "x", null, null]`,
			"[\n  1.5,\n  null,\n  7,\n  null,\n  \"x\",\n  null,\n  null\n]"},
		{"empty containers", Object{{"o", Object{}}, {"l", []any{}}, {"nl", []int(nil)}}, `{"o": {}, "l": [], "nl": []}`,
			"{\n  \"o\": {},\n  \"l\": [],\n  \"nl\": []\n}"},
		{"nested", Object{{"metadata", Object{{"tag", "abc"}, {"start_ts", 1700000000}}}, {"ts", []Object{{{"timestamp", 1}, {"v", 0.5}}}}},
			`{"metadata": {"tag": "abc", "start_ts": 1700000000}, "ts": [{"timestamp": 1, "v": 0.5}]}`,
			"{\n  \"metadata\": {\n    \"tag\": \"abc\",\n    \"start_ts\": 1700000000\n  },\n  \"ts\": [\n    {\n      \"timestamp\": 1,\n      \"v\": 0.5\n    }\n  ]\n}"},
		{"key order kept", Object{{"z", 1}, {"a", 2}}, `{"z": 1, "a": 2}`, "{\n  \"z\": 1,\n  \"a\": 2\n}"},
		{"html chars not escaped", "<a href=\"x\">&amp;</a>/", `"<a href=\"x\">&amp;</a>/"`, `"<a href=\"x\">&amp;</a>/"`},
		{"short escapes", "\\\"\b\f\n\r\t", `"\\\"\b\f\n\r\t"`, `"\\\"\b\f\n\r\t"`},
		{"control chars", "\x00\x01\x1f\x7f", `"\u0000\u0001\u001f\u007f"`, `"\u0000\u0001\u001f\u007f"`},
		{"non-ascii lowercase hex", "é\u00ff\u0100\uabcd\ufeff", `"\u00e9\u00ff\u0100\uabcd\ufeff"`, `"\u00e9\u00ff\u0100\uabcd\ufeff"`},
		{"astral as surrogate pair", "😀\U0010FFFF", `"\ud83d\ude00\udbff\udfff"`, `"\ud83d\ude00\udbff\udfff"`},
		{"invalid bytes as surrogateescape", "a\xffb\xed\xa0\x80", `"a\udcffb\udced\udca0\udc80"`, `"a\udcffb\udced\udca0\udc80"`},
		{"number literal", []any{Number("12345678901234567890123"), Number("-1.50e+3")}, "[12345678901234567890123, -1.50e+3]",
			"[\n  12345678901234567890123,\n  -1.50e+3\n]"},
		{"marshalers", []any{pyMarshaler{Object{{"k", 1.0}}}, &ptrMarshaler{}, nilPM}, `[{"k": 1.0}, "ptr", null]`,
			"[\n  {\n    \"k\": 1.0\n  },\n  \"ptr\",\n  null\n]"},
		{"pointer to object keeps indentation", Object{{"p", &Object{{"a", 1}}}}, `{"p": {"a": 1}}`, "{\n  \"p\": {\n    \"a\": 1\n  }\n}"},
		{"unicode key", Object{{"ключ", "v"}}, `{"\u043a\u043b\u044e\u0447": "v"}`, "{\n  \"\\u043a\\u043b\\u044e\\u0447\": \"v\"\n}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil || string(got) != tc.compact {
				t.Errorf("Marshal = %s, %v\nwant %s", got, err, tc.compact)
			}
			got, err = MarshalIndent(tc.in)
			if err != nil || string(got) != tc.indent {
				t.Errorf("MarshalIndent = %s, %v\nwant %s", got, err, tc.indent)
			}
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	cyc := []any{nil}
	cyc[0] = cyc
	tests := []struct {
		name string
		in   any
		want error // nil: any error
	}{
		{"NaN", math.NaN(), ErrNotFinite},
		{"Inf in object", Object{{"a", Object{{"b", math.Inf(1)}}}}, ErrNotFinite},
		{"-Inf pointer", []any{func() *float64 { x := math.Inf(-1); return &x }()}, ErrNotFinite},
		{"map", map[string]int{"a": 1}, nil},
		{"struct", struct{ A int }{1}, nil},
		{"float32", float32(0.1), nil},
		{"invalid number", Number("01"), nil},
		{"empty number", Number(""), nil},
		{"cycle", cyc, nil},
		{"marshaler error", pyMarshaler{math.NaN()}, ErrNotFinite},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, fn := range []func(any) ([]byte, error){Marshal, MarshalIndent} {
				out, err := fn(tc.in)
				if err == nil {
					t.Fatalf("no error, wrote %s", out)
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("err %v, want %v", err, tc.want)
				}
			}
		})
	}
	if _, err := Marshal(Object{{"outer", Object{{"inner", math.NaN()}}}}); err == nil || !strings.Contains(err.Error(), "outer: inner") {
		t.Errorf("error does not name the key path: %v", err)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in   string
		want string // Marshal of the decoded value; "" means an error
	}{
		{`{"b": 1, "a": [1, 2.50, "x"], "c": {}}`, `{"b": 1, "a": [1, 2.5, "x"], "c": {}}`},
		{`{"a":1,"b":2,"a":3}`, `{"a": 3, "b": 2}`},
		{`3`, `3`}, {`3.0`, `3.0`}, {`-0`, `0`}, {`-0.0`, `-0.0`}, {`1e5`, `100000.0`}, {`1E-7`, `1e-07`},
		{`12345678901234567890123`, `12345678901234567890123`}, {`-9223372036854775809`, `-9223372036854775809`},
		{`1e-400`, `0.0`}, {` "\u00e9<>&" `, `"\u00e9<>&"`}, {`"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{`null`, `null`}, {`[true, false, null]`, `[true, false, null]`}, {`[]`, `[]`},
		{`1e400`, ""}, {`NaN`, ""}, {`Infinity`, ""}, {`{"a": 1} x`, ""}, {`{"a": 1}{}`, ""}, {`[1,]`, ""},
		{`{"a" 1}`, ""}, {``, ""}, {`  `, ""}, {`"\xff"`, ""}, {"\"a\xffb\"", ""}, {`[` + strings.Repeat("[", maxDepth+1), ""},
		{`01`, ""}, {`{1: 2}`, ""},
	}
	for _, tc := range tests {
		v, err := Decode([]byte(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("Decode(%.40q) = %v, want error", tc.in, v)
			} else if !errors.Is(err, ErrInvalidJSON) {
				t.Errorf("Decode(%.40q) error %v does not wrap ErrInvalidJSON", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Decode(%q): %v", tc.in, err)
			continue
		}
		out, err := Marshal(v)
		if err != nil || string(out) != tc.want {
			t.Errorf("Decode(%q) -> %s, %v; want %s", tc.in, out, err, tc.want)
		}
	}
}

func TestObjectSetGet(t *testing.T) {
	var o Object
	o.Set("a", 1)
	o.Set("b", 2)
	o.Set("a", 3)
	if got := strings.Join(o.Keys(), ","); got != "a,b" {
		t.Errorf("keys %s", got)
	}
	if v, ok := o.Get("a"); !ok || v != 3 {
		t.Errorf("Get(a) = %v %v", v, ok)
	}
	if _, ok := o.Get("zz"); ok {
		t.Error("Get(zz) present")
	}
}
