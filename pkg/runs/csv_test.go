package runs

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// records reads every raw record (csv.reader, before DictReader).
func records(t testing.TB, r io.Reader) ([][]string, error) {
	t.Helper()
	p := csvRecordReader{br: bufio.NewReaderSize(r, 16)}
	var out [][]string
	for {
		rec, err := p.read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// dictRows reads every DictReader row as a map of the present columns.
func dictRows(r io.Reader) (header []string, rows []map[string]string, err error) {
	c := NewCSVReader(r)
	header, err = c.Header()
	if err != nil {
		return nil, nil, err
	}
	for {
		row, err := c.Next()
		if err == io.EOF {
			return header, rows, nil
		}
		if err != nil {
			return header, rows, err
		}
		m := map[string]string{}
		for _, h := range header {
			if v, ok := row.Get(h); ok {
				m[h] = v
			}
		}
		rows = append(rows, m)
	}
}

// Expected values below are what Python 3.11's csv.reader returns for the
// same input (checked by hand against the C state machine and, for random
// inputs, by TestCSVMatchesPython).
func TestCSVRecords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [][]string
	}{
		{"empty input", "", nil},
		{"one line no newline", "a,b", [][]string{{"a", "b"}}},
		{"trailing comma", "a,\n", [][]string{{"a", ""}}},
		{"crlf", "a,b\r\nc,d\r\n", [][]string{{"a", "b"}, {"c", "d"}}},
		{"lone cr", "a,b\rc,d", [][]string{{"a", "b"}, {"c", "d"}}},
		{"empty lines are empty records", "\n\r\n\ra\n", [][]string{{}, {}, {}, {"a"}}},
		{"quoted comma", `"a,b",c` + "\n", [][]string{{"a,b", "c"}}},
		{"doubled quote", `"say ""hi""",x`, [][]string{{`say "hi"`, "x"}}},
		{"newline inside quotes kept", "\"l1\nl2\",x\n", [][]string{{"l1\nl2", "x"}}},
		{"crlf inside quotes kept", "\"l1\r\nl2\",x\r\n", [][]string{{"l1\r\nl2", "x"}}},
		{"bare quote inside field is literal", `a"b,c`, [][]string{{`a"b`, "c"}}},
		{"text after closing quote read unquoted", `"ab"cd,e`, [][]string{{"abcd", "e"}}},
		{"quote after text after closing quote literal", `"ab"c"d`, [][]string{{`abc"d`}}},
		{"space before quote makes it literal", ` "a",b`, [][]string{{` "a"`, "b"}}},
		{"empty quoted field", `"",x`, [][]string{{"", "x"}}},
		{"unterminated quote at eof", "a,\"bc\nde", [][]string{{"a", "bc\nde"}}},
		{"unterminated empty quote at eof", `a,"`, [][]string{{"a", ""}}},
		{"quote-quote-eof", `a,""`, [][]string{{"a", ""}}},
		{"nul is ordinary", "a\x00b,c", [][]string{{"a\x00b", "c"}}},
		{"bom skipped at start only", "\uFEFFa,\uFEFFb", [][]string{{"a", "\uFEFFb"}}},
		{"spaces kept by reader", " a , b ", [][]string{{" a ", " b "}}},
		{"only comma", ",", [][]string{{"", ""}}},
		{"quoted then newline then row", "\"x\"\ny", [][]string{{"x"}, {"y"}}},
		{"unicode", "é,日本\n", [][]string{{"é", "日本"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{{"whole", strings.NewReader(tc.in)}, {"one byte", iotest.OneByteReader(strings.NewReader(tc.in))}} {
				got, err := records(t, rd.r)
				if err != nil {
					t.Fatalf("%s: %v", rd.name, err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s: got %q want %q", rd.name, got, tc.want)
				}
			}
		})
	}
}

func TestCSVErrors(t *testing.T) {
	big := strings.Repeat("x", CSVFieldLimit)
	tests := []struct {
		name    string
		in      string
		want    error
		records int // records read before the error
	}{
		{"field at the limit is fine", big + ",y\n", nil, 1},
		{"field over the limit", "a\n" + big + "x,y\n", ErrCSVFieldTooLarge, 1},
		{"quoted field over the limit", "\"" + big + "x\"", ErrCSVFieldTooLarge, 0},
		{"limit counts characters not bytes", strings.Repeat("é", CSVFieldLimit) + "\n", nil, 1},
		{"invalid utf-8", "a,b\n\xff,c\n", ErrCSVInvalidUTF8, 1},
		{"encoded surrogate is invalid", "\xed\xa0\x80\n", ErrCSVInvalidUTF8, 0},
		{"truncated sequence at eof", "a\n\xe6\x97", ErrCSVInvalidUTF8, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := records(t, strings.NewReader(tc.in))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if len(got) != tc.records {
				t.Errorf("records before error = %d, want %d", len(got), tc.records)
			}
		})
	}
}

func TestCSVErrorIsSticky(t *testing.T) {
	c := NewCSVReader(strings.NewReader("h\n\xff\nok\n"))
	if _, err := c.Next(); !errors.Is(err, ErrCSVInvalidUTF8) {
		t.Fatalf("first Next: %v", err)
	}
	if _, err := c.Next(); !errors.Is(err, ErrCSVInvalidUTF8) {
		t.Fatalf("second Next: %v, want the same error", err)
	}
}

func TestCSVDictRows(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		header []string
		rows   []map[string]string
	}{
		{"empty file", "", nil, nil},
		{"header only", "a,b\n", []string{"a", "b"}, nil},
		{"trimmed names and values", " Name , User Count \n Aggregated ,\t12 \n",
			[]string{"Name", "User Count"}, []map[string]string{{"Name": "Aggregated", "User Count": "12"}}},
		{"missing trailing field is absent", "a,b,c\n1,2\n", []string{"a", "b", "c"}, []map[string]string{{"a": "1", "b": "2"}}},
		{"empty trailing field is present", "a,b\n1,\n", []string{"a", "b"}, []map[string]string{{"a": "1", "b": ""}}},
		{"extra fields ignored", "a\n1,2,3\n", []string{"a"}, []map[string]string{{"a": "1"}}},
		{"empty lines skipped", "a\n\n1\n\r\n2\n", []string{"a"}, []map[string]string{{"a": "1"}, {"a": "2"}}},
		{"spaces-only line is a row", "a,b\n  \n", []string{"a", "b"}, []map[string]string{{"a": ""}}},
		{"empty first line is an empty header", "\na,b\n1,2\n", []string{}, []map[string]string{{}, {}}},
		{"duplicate name: last column wins", "x,y,x\n1,2,3\n", []string{"x", "y", "x"}, []map[string]string{{"x": "3", "y": "2"}}},
		{"duplicate name: short row makes it absent", "x,y,x\n1,2\n", []string{"x", "y", "x"}, []map[string]string{{"y": "2"}}},
		{"names collide after trimming", " x,x \n1,2\n", []string{"x", "x"}, []map[string]string{{"x": "2"}}},
		{"python whitespace incl. U+001C and NBSP", "a\n\x1c\u00a0v\u3000\x1f\n", []string{"a"}, []map[string]string{{"a": "v"}}},
		{"zero-width space is not whitespace", "a\n\u200bv\n", []string{"a"}, []map[string]string{{"a": "\u200bv"}}},
		{"bom before header", "\uFEFFTimestamp,Name\n1,\n", []string{"Timestamp", "Name"}, []map[string]string{{"Timestamp": "1", "Name": ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			header, rows, err := dictRows(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(header, tc.header) {
				t.Errorf("header %q want %q", header, tc.header)
			}
			if !reflect.DeepEqual(rows, tc.rows) {
				t.Errorf("rows %q want %q", rows, tc.rows)
			}
		})
	}
}

func TestCSVRowLine(t *testing.T) {
	c := NewCSVReader(strings.NewReader("h\n\"a\nb\"\n\nc"))
	var lines []int
	for {
		row, err := c.Next()
		if err != nil {
			break
		}
		lines = append(lines, row.Line)
	}
	if want := []int{3, 5}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %v want %v", lines, want)
	}
}
