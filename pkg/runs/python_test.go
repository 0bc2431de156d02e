package runs

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/substrate/density/internal/pytest"
)

// These tests check the Python emulation against the real thing: python3 is
// required (a missing python3 fails the test with the reason, never skips).

func TestPyIsSpaceMatchesPython(t *testing.T) {
	var want []int
	pytest.Run(t, `import json,sys
json.dump([c for c in range(0x110000) if chr(c).isspace()], sys.stdout)`, nil, &want)
	var got []int
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if pyIsSpace(r) {
			got = append(got, int(r))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pyIsSpace set %x\npython %x", got, want)
	}
}

func TestDecimalDigitsMatchPython(t *testing.T) {
	var goDigits [][2]int
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if d, ok := decimalValue(r); ok {
			goDigits = append(goDigits, [2]int{int(r), d})
		}
	}
	var res struct {
		Python  [][2]int // every non-ASCII decimal Python knows
		Unknown []int    // Go's digits that are unassigned in Python's Unicode version
	}
	pytest.Run(t, `import json,sys,unicodedata
gd = json.load(sys.stdin)
py = [[c, unicodedata.decimal(chr(c))] for c in range(0x80, 0x110000) if unicodedata.decimal(chr(c), -1) >= 0]
unknown = [c for c, _ in gd if unicodedata.category(chr(c)) == 'Cn']
json.dump({"Python": py, "Unknown": unknown}, sys.stdout)`, goDigits, &res)
	unknown := map[int]bool{}
	for _, c := range res.Unknown {
		unknown[c] = true
	}
	var known [][2]int
	for _, d := range goDigits {
		if !unknown[d[0]] {
			known = append(known, d)
		}
	}
	if !reflect.DeepEqual(known, res.Python) {
		t.Errorf("decimal digits differ from Python's (%d Go, %d Python)", len(known), len(res.Python))
	}
	if len(res.Unknown) > 40 {
		t.Errorf("%d Go digits unknown to Python: more than a Unicode version bump explains", len(res.Unknown))
	}
}

// randomNumberText builds strings near the edges of int()/float() grammar.
func randomNumberText(r *rand.Rand) string {
	parts := []string{"0", "1", "7", "9", "_", ".", "e", "E", "+", "-", " ", "\t", "inf", "Infinity", "nan", "NaN",
		"x", "0x", "\u0661", "\uff15", "\u3000", "\u00a0", "1e308", "99999999999999999999", "\x00", "\x1c", "a"}
	n := 1 + r.IntN(6)
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func TestParseNumbersMatchPython(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var in []string
	for range 600 {
		in = append(in, randomNumberText(r))
	}
	in = append(in, "1_000", "1__0", "0_1", "+1_0", "1_e5", "1e1_0", "١٢", "12\u3000", "\u30001", "1.e5", ".e5",
		"-0", "9223372036854775808", "-9223372036854775809", strings.Repeat("9", 4300), strings.Repeat("9", 4301))
	type result struct {
		Int   *string
		Float *string
	}
	var want []result
	pytest.Run(t, `import json,sys
out = []
for s in json.load(sys.stdin):
    r = {"Int": None, "Float": None}
    try: r["Int"] = str(int(s))
    except ValueError: pass
    try: r["Float"] = repr(float(s))
    except ValueError: pass
    out.append(r)
json.dump(out, sys.stdout)`, in, &want)
	for i, s := range in {
		gi, ierr := ParsePyInt(s)
		switch {
		case want[i].Int == nil:
			if ierr == nil || errors.Is(ierr, ErrIntRange) {
				t.Errorf("int(%q): Python raises, Go gives %d (%v)", trunc(s), gi, ierr)
			}
		case errors.Is(ierr, ErrIntRange):
			if _, err := strconv.ParseInt(*want[i].Int, 10, 64); err == nil {
				t.Errorf("int(%q): Go says out of range, Python gives %s", trunc(s), *want[i].Int)
			}
		case ierr != nil || strconv.FormatInt(gi, 10) != *want[i].Int:
			t.Errorf("int(%q): Go %d (%v), Python %s", trunc(s), gi, ierr, *want[i].Int)
		}
		gf, ferr := ParsePyFloat(s)
		switch {
		case want[i].Float == nil:
			if ferr == nil {
				t.Errorf("float(%q): Python raises, Go gives %v", s, gf)
			}
		case ferr != nil:
			t.Errorf("float(%q): Go error %v, Python %s", s, ferr, *want[i].Float)
		default:
			var wf float64
			switch *want[i].Float {
			case "nan":
				wf = math.NaN()
			case "inf":
				wf = math.Inf(1)
			case "-inf":
				wf = math.Inf(-1)
			default:
				wf, _ = strconv.ParseFloat(*want[i].Float, 64)
			}
			if math.IsNaN(wf) != math.IsNaN(gf) || (!math.IsNaN(wf) && (wf != gf || math.Signbit(wf) != math.Signbit(gf))) {
				t.Errorf("float(%q): Go %v, Python %s", s, gf, *want[i].Float)
			}
		}
	}
}

// randomCSV builds small inputs rich in the characters the csv state machine
// branches on, with a small name alphabet so header names collide.
func randomCSV(r *rand.Rand) []byte {
	parts := []string{"a", "b", " a", "b ", ",", ",", ",", "\"", "\"", "\"\"", "\n", "\n", "\r", "\r\n", " ", "\t",
		"\x00", "é", "\u00a0", "\x1c", "12", "Name", "Aggregated"}
	var b bytes.Buffer
	if r.IntN(8) == 0 {
		b.WriteString("\uFEFF")
	}
	n := r.IntN(40)
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	if r.IntN(30) == 0 {
		b.WriteByte(0xff)
	}
	return b.Bytes()
}

const pyDictReader = `import csv,io,json,sys,base64
def read(data):
    f = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    rd = csv.DictReader(f)
    try:
        fn = rd.fieldnames
        if fn is not None:
            rd.fieldnames = [h.strip() for h in fn]
        rows = [{k: v.strip() for k, v in row.items() if k is not None and v is not None} for row in rd]
        return {"Header": rd.fieldnames, "Rows": rows, "Err": None}
    except (csv.Error, UnicodeDecodeError) as e:
        return {"Header": None, "Rows": None, "Err": str(e)}
`

func TestCSVMatchesPython(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var in [][]byte
	for range 700 {
		in = append(in, randomCSV(r))
	}
	in = append(in, []byte("\"a\nb"), []byte("a,\""), []byte("\"ab\"cd,\"e\"\"f\""), []byte("x,y,x\n1,2\n"), []byte("\r\r\n\n"))
	type result struct {
		Header []string
		Rows   []map[string]string
		Err    *string
	}
	var want []result
	pytest.Run(t, pyDictReader+`
json.dump([read(base64.b64decode(s or "")) for s in json.load(sys.stdin)], sys.stdout)`, in, &want)
	for i, data := range in {
		header, rows, err := dictRows(bytes.NewReader(data))
		w := want[i]
		if (err != nil) != (w.Err != nil) {
			t.Errorf("input %q: Go err %v, Python err %v", data, err, w.Err)
			continue
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(header, w.Header) {
			t.Errorf("input %q: header %q, Python %q", data, header, w.Header)
		}
		if len(rows) != len(w.Rows) || (len(rows) > 0 && !reflect.DeepEqual(rows, w.Rows)) {
			t.Errorf("input %q: rows %q, Python %q", data, rows, w.Rows)
		}
	}
}

// TestHistoryMatchesPython runs a Python rendering of the runs.md rule (with
// the documented NaN/Inf decision and int64 clamping) over random files.
func TestHistoryMatchesPython(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	names := []string{"", "Aggregated", "Total", " Aggregated ", "op", "\"Aggregated\""}
	tss := []string{"100", "101", "1.5", "", "0x1", "+102", "1_03", "99999999999999999999", "-5", " 104 ", "x"}
	counts := []string{"5", "10", "9", "nan", "inf", "1e1", "", "abc", " 7 ", "0", "-1", "9.5"}
	var in [][]byte
	for range 200 {
		var b bytes.Buffer
		cols := [][]string{{"Timestamp", "User Count", "Name"}, {"Name", "User Count", "Timestamp"}, {"User Count", "Timestamp"}}[r.IntN(3)]
		b.WriteString(strings.Join(cols, ",") + "\n")
		for range r.IntN(12) {
			vals := map[string]string{"Timestamp": tss[r.IntN(len(tss))], "User Count": counts[r.IntN(len(counts))], "Name": names[r.IntN(len(names))]}
			row := make([]string, 0, len(cols))
			for _, c := range cols {
				row = append(row, vals[c])
			}
			row = row[:len(row)-r.IntN(2)] // ragged
			b.WriteString(strings.Join(row, ",") + "\n")
		}
		in = append(in, b.Bytes())
	}
	type result struct {
		Samples  [][2]float64
		Observed []float64
		Bounds   []int64
	}
	var want []result
	pytest.Run(t, pyDictReader+`
import math
def clamp(i): return max(-2**63, min(2**63-1, i))
def hist(data):
    samples, observed, ts_all = [], [], []
    for row in read(data)["Rows"]:
        ts = None
        if "Timestamp" in row:
            try: ts = clamp(int(row["Timestamp"]))
            except ValueError: pass
        if ts is not None: ts_all.append(ts)
        if row.get("Name", "") not in ("", "Aggregated", "Total") or "User Count" not in row: continue
        try: u = float(row["User Count"])
        except ValueError: continue
        if not math.isfinite(u): continue
        if u > 0: observed.append(u)
        if ts is not None: samples.append([ts, u])
    return {"Samples": samples, "Observed": observed, "Bounds": [min(ts_all), max(ts_all)] if ts_all else []}
json.dump([hist(base64.b64decode(s or "")) for s in json.load(sys.stdin)], sys.stdout)`, in, &want)
	for i, data := range in {
		h, err := ReadHistory(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var samples [][2]float64
		for _, s := range h.Samples {
			samples = append(samples, [2]float64{float64(s.Timestamp), s.Users})
		}
		var bounds []int64
		if h.HasBounds {
			bounds = []int64{h.First, h.Last}
		}
		w := want[i]
		if len(samples)+len(w.Samples) > 0 && !reflect.DeepEqual(samples, w.Samples) ||
			len(h.Observed)+len(w.Observed) > 0 && !reflect.DeepEqual(h.Observed, w.Observed) ||
			len(bounds)+len(w.Bounds) > 0 && !reflect.DeepEqual(bounds, w.Bounds) {
			t.Errorf("input %q:\nGo     %v %v %v\nPython %v %v %v", data, samples, h.Observed, bounds, w.Samples, w.Observed, w.Bounds)
		}
	}
}
