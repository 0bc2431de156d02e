package artifact

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/substrate/density/internal/pytest"
)

// These tests compare the encoder with Python's json.dumps itself. python3 is
// required: a missing python3 fails the test with the reason, never skips.

// randomFloat mixes raw bit patterns (every exponent) with the short
// decimals and boundary values real artifacts hold.
func randomFloat(r *rand.Rand) float64 {
	for {
		var x float64
		switch r.IntN(6) {
		case 0:
			x = math.Float64frombits(r.Uint64())
		case 1:
			x = float64(r.IntN(2000000)-1000000) / math.Pow(10, float64(r.IntN(9)))
		case 2:
			x = math.Round(r.Float64()*1e4) / 1e4
		case 3:
			b := []float64{1e-4, 1e16, 1e-5, 1e15, 1}[r.IntN(5)]
			x = math.Nextafter(b, [2]float64{0, math.Inf(1)}[r.IntN(2)])
			if r.IntN(3) == 0 {
				x = b
			}
		case 4:
			x = float64(r.Int64N(1<<62)) * math.Pow(2, float64(r.IntN(40)-20))
		default:
			x = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if r.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

func TestFormatFloatMatchesPython(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var bits []uint64
	for range 600 {
		bits = append(bits, math.Float64bits(randomFloat(r)))
	}
	bits = append(bits, math.Float64bits(math.Copysign(0, -1)), 0, math.Float64bits(math.MaxFloat64), 1)
	var want struct {
		Repr  []string
		Str   []string
		Dumps string
	}
	pytest.Run(t, `import json,struct,sys
xs = [struct.unpack('<d', struct.pack('<Q', b))[0] for b in json.load(sys.stdin)]
json.dump({"Repr": [repr(x) for x in xs], "Str": [str(x) for x in xs], "Dumps": json.dumps(xs)}, sys.stdout)`, bits, &want)
	list := make([]any, len(bits))
	for i, b := range bits {
		x := math.Float64frombits(b)
		list[i] = x
		if got := FormatFloat(x); got != want.Repr[i] || got != want.Str[i] {
			t.Errorf("FormatFloat(%b) = %s, Python repr %s str %s", b, got, want.Repr[i], want.Str[i])
		}
	}
	got, err := Marshal(list)
	if err != nil || string(got) != want.Dumps {
		t.Errorf("Marshal(floats) differs from json.dumps (err %v)", err)
	}
}

func TestStringsMatchPython(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pools := [][2]int{{0, 0x80}, {0x80, 0x800}, {0x800, 0xd800}, {0xe000, 0x10000}, {0x10000, 0x110000}}
	var cps [][]int
	for range 300 {
		var s []int
		for range r.IntN(20) {
			p := pools[r.IntN(len(pools))]
			s = append(s, p[0]+r.IntN(p[1]-p[0]))
		}
		cps = append(cps, s)
	}
	// Strings with bytes that are not UTF-8 (surrogateescape in Python).
	var raw [][]byte
	for range 200 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		raw = append(raw, b)
	}
	var want struct{ Text, Raw []string }
	pytest.Run(t, `import json,sys,base64
d = json.load(sys.stdin)
text = [json.dumps(''.join(map(chr, s or []))) for s in d["Text"]]
raw = [json.dumps(base64.b64decode(b or "").decode('utf-8', 'surrogateescape')) for b in d["Raw"]]
json.dump({"Text": text, "Raw": raw}, sys.stdout)`, map[string]any{"Text": cps, "Raw": raw}, &want)
	for i, s := range cps {
		rs := make([]rune, len(s))
		for j, c := range s {
			rs[j] = rune(c)
		}
		got, err := Marshal(string(rs))
		if err != nil || string(got) != want.Text[i] {
			t.Errorf("Marshal(%q) = %s, Python %s", string(rs), got, want.Text[i])
		}
	}
	for i, b := range raw {
		got, err := Marshal(string(b))
		if err != nil || string(got) != want.Raw[i] {
			t.Errorf("Marshal(%q) = %s, Python %s", b, got, want.Raw[i])
		}
	}
}

// tree is a random value plus a tagged description Python rebuilds exactly
// (dict order, float bits, code points).
func randomTree(r *rand.Rand, depth int) (any, any) {
	kind := r.IntN(9)
	if depth > 3 && kind >= 6 {
		kind = r.IntN(6)
	}
	switch kind {
	case 0:
		return nil, []any{"n"}
	case 1:
		b := r.IntN(2) == 0
		return b, []any{"b", b}
	case 2:
		i := r.Int64() - r.Int64()
		return i, []any{"i", i}
	case 3:
		x := randomFloat(r)
		return x, []any{"f", math.Float64bits(x)}
	case 4, 5:
		s := []rune{}
		for range r.IntN(8) {
			s = append(s, []rune("aZ09 \"\\/<>&\n\t\x01é€😀")[r.IntN(17)])
		}
		cps := make([]int, len(s))
		for i, c := range s {
			cps[i] = int(c)
		}
		return string(s), []any{"s", cps}
	case 6, 7:
		var obj Object
		desc := []any{}
		for range r.IntN(5) {
			k := string([]rune("abcé😀")[r.IntN(5)]) + string(rune('a'+r.IntN(3)))
			v, d := randomTree(r, depth+1)
			obj.Set(k, v) // Python dict assignment semantics on both sides
			kc := []int{}
			for _, c := range k {
				kc = append(kc, int(c))
			}
			desc = append(desc, []any{kc, d})
		}
		if obj == nil {
			obj = Object{}
		}
		return obj, []any{"o", desc}
	default:
		var list []any
		desc := []any{}
		for range r.IntN(5) {
			v, d := randomTree(r, depth+1)
			list = append(list, v)
			desc = append(desc, d)
		}
		return list, []any{"l", desc}
	}
}

func TestNestedMatchesPython(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var values []any
	var descs []any
	for range 300 {
		v, d := randomTree(r, 0)
		values = append(values, v)
		descs = append(descs, d)
	}
	var want []struct{ Compact, Indent string }
	pytest.Run(t, `import json,struct,sys
def build(d):
    k = d[0]
    if k == "n": return None
    if k in ("b", "i"): return d[1]
    if k == "f": return struct.unpack('<d', struct.pack('<Q', d[1]))[0]
    if k == "s": return ''.join(map(chr, d[1]))
    if k == "l": return [build(x) for x in d[1]]
    o = {}
    for kc, v in d[1]:
        o[''.join(map(chr, kc))] = build(v)
    return o
out = []
for d in json.load(sys.stdin):
    v = build(d)
    out.append({"Compact": json.dumps(v), "Indent": json.dumps(v, indent=2)})
json.dump(out, sys.stdout)`, descs, &want)
	for i, v := range values {
		c, err := Marshal(v)
		if err != nil || string(c) != want[i].Compact {
			t.Errorf("Marshal #%d:\n got %s (%v)\nwant %s", i, c, err, want[i].Compact)
		}
		ind, err := MarshalIndent(v)
		if err != nil || string(ind) != want[i].Indent {
			t.Errorf("MarshalIndent #%d:\n got %s (%v)\nwant %s", i, ind, err, want[i].Indent)
		}
		// Decode must read back what Python's json.loads reads.
		back, err := Decode(c)
		if err != nil {
			t.Errorf("Decode #%d: %v", i, err)
			continue
		}
		if again, _ := Marshal(back); string(again) != string(c) {
			t.Errorf("Decode/Marshal #%d not stable:\n%s\n%s", i, again, c)
		}
	}
}
