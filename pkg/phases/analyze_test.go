package phases

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/substrate/density/internal/pytest"
)

// mk builds a record at t0 + offset seconds (offset NaN: no time).
func mk(layer, op, uid string, offset float64, phases ...Phase) Record {
	r := Record{Layer: layer, Op: op, UID: uid, Phases: phases, Pair: -1}
	if !math.IsNaN(offset) {
		r.Time, r.HasTime = t0+int64(math.Round(offset*1e6)), true
	}
	return r
}

func ph(name string, s float64) Phase { return Phase{name, s} }

func pairs(recs []Record) []int {
	out := make([]int, len(recs))
	for i := range recs {
		out[i] = recs[i].Pair
	}
	return out
}

// TestPairWindows pins the windows: restore [t − ateom_restore − 1 s,
// t + 1 s], checkpoint [t − total − 1 s, t − persist + 1 s], inclusive.
func TestPairWindows(t *testing.T) {
	restore := func(ateomAt float64) []Record {
		return []Record{
			mk(LayerAtelet, OpRestore, "u", 0, ph("ateom_restore", 2), ph("total", 3)),
			mk(LayerAteom, OpRestore, "u", ateomAt, ph("total", 2)),
		}
	}
	checkpoint := func(ateomAt float64) []Record {
		return []Record{
			mk(LayerAtelet, OpCheckpoint, "u", 0, ph("ateom_checkpoint", 1), ph("persist", 2), ph("total", 4)),
			mk(LayerAteom, OpCheckpoint, "u", ateomAt, ph("total", 1)),
		}
	}
	cases := []struct {
		name   string
		recs   []Record
		paired bool
	}{
		{"restore low edge", restore(-3), true},
		{"restore below", restore(-3.000001), false},
		{"restore high edge", restore(1), true},
		{"restore above", restore(1.000001), false},
		{"checkpoint low edge", checkpoint(-5), true},
		{"checkpoint below", checkpoint(-5.000001), false},
		{"checkpoint high edge", checkpoint(-1), true},
		{"checkpoint above", checkpoint(-0.999999), false},
	}
	for _, tc := range cases {
		Pair(tc.recs)
		if got := tc.recs[0].Pair == 1 && tc.recs[1].Pair == 0; got != tc.paired {
			t.Errorf("%s: paired %v, want %v", tc.name, got, tc.paired)
		}
	}
}

func TestPairRules(t *testing.T) {
	nan := math.NaN()
	ar := func(uid string, at float64) Record {
		return mk(LayerAtelet, OpRestore, uid, at, ph("ateom_restore", 1), ph("total", 2))
	}
	or := func(uid string, at float64) Record { return mk(LayerAteom, OpRestore, uid, at, ph("total", 1)) }
	cases := []struct {
		name string
		recs []Record
		want []int
	}{
		{"latest candidate", []Record{ar("u", 0), or("u", -1), or("u", -0.5)}, []int{2, -1, 0}},
		{"equal times: last in input order", []Record{or("u", -0.5), ar("u", 0), or("u", -0.5)}, []int{-1, 2, 1}},
		{"at most once: the next atelet takes the next candidate", []Record{ar("u", 0), ar("u", 0.2), or("u", -0.5), or("u", -0.4)}, []int{3, 2, 1, 0}},
		{"atelet records in time order", []Record{ar("u", 0.2), ar("u", 0), or("u", -0.5), or("u", -0.4)}, []int{2, 3, 0, 1}},
		{"other uid never", []Record{ar("u", 0), or("v", -0.5)}, []int{-1, -1}},
		{"other op never", []Record{ar("u", 0), mk(LayerAteom, OpCheckpoint, "u", -0.5, ph("total", 1))}, []int{-1, -1}},
		{"no time never", []Record{ar("u", nan), or("u", 0)}, []int{-1, -1}},
		{"ateom without time never", []Record{ar("u", 0), or("u", nan)}, []int{-1, -1}},
		{"atelet without total", []Record{mk(LayerAtelet, OpRestore, "u", 0, ph("ateom_restore", 1)), or("u", 0)}, []int{-1, -1}},
		{"atelet without inner phase", []Record{mk(LayerAtelet, OpRestore, "u", 0, ph("total", 1)), or("u", 0)}, []int{-1, -1}},
		{"checkpoint needs ateom_checkpoint", []Record{mk(LayerAtelet, OpCheckpoint, "u", 0, ph("total", 3)), mk(LayerAteom, OpCheckpoint, "u", -1, ph("total", 1))}, []int{-1, -1}},
	}
	for _, tc := range cases {
		Pair(tc.recs)
		if got := pairs(tc.recs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: pairs %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPairInheritsKindAndClass(t *testing.T) {
	a := mk(LayerAtelet, OpRestore, "u", 0, ph("ateom_restore", 1), ph("total", 2))
	a.Kind, a.Class, a.Failed = "golden", "gvisor", true // failed atelet records pair too
	o1 := mk(LayerAteom, OpRestore, "u", 0)
	o2 := mk(LayerAteom, OpRestore, "u", 0.5)
	o2.Class = "microvm"
	b := a
	recs := []Record{a, o1, b, o2}
	recs[2].Time += 100_000
	Pair(recs)
	if recs[1].Kind != "golden" || recs[1].Class != "gvisor" || recs[3].Kind != "golden" || recs[3].Class != "microvm" {
		t.Fatalf("inherited %+v %+v", recs[1], recs[3])
	}
}

// TestResidual pins the unattributed rules.
func TestResidual(t *testing.T) {
	withClass := func(r Record, class string) Record { r.Class = class; return r }
	cases := []struct {
		name string
		rec  Record
		want *float64
	}{
		{"atelet checkpoint", mk(LayerAtelet, OpCheckpoint, "u", 0, ph("sandbox_assets", 0.5), ph("ateom_checkpoint", 2), ph("persist", 1), ph("download", 9), ph("total", 4)), ptr(rest(4, 0.5, 2, 1))},
		{"atelet checkpoint, missing phases count 0", mk(LayerAtelet, OpCheckpoint, "u", 0, ph("total", 4)), ptr(4.0)},
		{"negative stays", mk(LayerAtelet, OpCheckpoint, "u", 0, ph("ateom_checkpoint", 5), ph("total", 4)), ptr(-1.0)},
		{"microvm: concurrent phases count their max",
			withClass(mk(LayerAteom, OpCheckpoint, "u", 0, ph("prep", 0.1), ph("pause", 0.2), ph("snapshot", 1), ph("durable_dir", 1.5), ph("rootfs_upper", 0.7), ph("teardown", 0.3), ph("total", 3)), "microvm"),
			ptr(rest(3, 0.1, 0.2, 1.5, 0.3))},
		{"gvisor: every other phase",
			withClass(mk(LayerAteom, OpCheckpoint, "u", 0, ph("zz", 0.05), ph("pause", 0.2), ph("checkpoint", 1), ph("total", 2), ph("unattributed", 9)), "gvisor"),
			ptr(rest(2, 0.2, 1, 0.05))},
		{"ateom checkpoint of unknown class", mk(LayerAteom, OpCheckpoint, "u", 0, ph("total", 2)), nil},
		{"restore", mk(LayerAtelet, OpRestore, "u", 0, ph("total", 2)), nil},
		{"no total", mk(LayerAtelet, OpCheckpoint, "u", 0, ph("persist", 2)), nil},
	}
	for _, tc := range cases {
		r := tc.rec
		Residual(&r)
		got, ok := r.Get(PhaseUnattributed)
		if tc.want == nil {
			if ok {
				t.Errorf("%s: unattributed %v, want none", tc.name, got)
			}
			continue
		}
		if !ok || got != *tc.want {
			t.Errorf("%s: unattributed %v %v, want %v", tc.name, got, ok, *tc.want)
		}
	}
}

func ptr(v float64) *float64 { return &v }

// rest is total − (a + b + ...) in float64 at run time, summed left to right
// (constant expressions would be exact).
func rest(total float64, parts ...float64) float64 {
	sum := 0.0
	for i, p := range parts {
		if i == 0 {
			sum = p
			continue
		}
		sum += p
	}
	return total - sum
}

func TestQuantileHandValues(t *testing.T) {
	cases := []struct {
		x                 []float64
		p50, p90, p95, mx float64
	}{
		{[]float64{2.4}, 2.4, 2.4, 2.4, 2.4},
		{[]float64{1, 2}, 1.5, 1.9, 1.95, 2},
		{[]float64{1, 2, 3, 4, 5}, 3, 4.6, 4.8, 5},
		{[]float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 50, 90, 95, 100},
	}
	for _, tc := range cases {
		got := []float64{Quantile(tc.x, 50), Quantile(tc.x, 90), Quantile(tc.x, 95), tc.x[len(tc.x)-1]}
		if !reflect.DeepEqual(got, []float64{tc.p50, tc.p90, tc.p95, tc.mx}) {
			t.Errorf("%v: %v", tc.x, got)
		}
	}
}

// TestQuantilePython checks the percentiles bit for bit against Python's
// statistics.quantiles(method="inclusive") on random data (N ≥ 2).
func TestQuantilePython(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	var sets [][]float64
	for range 200 {
		n := 2 + rng.IntN(300)
		v := make([]float64, n)
		for i := range v {
			switch rng.IntN(3) {
			case 0:
				v[i] = rng.Float64() * 10
			case 1:
				v[i] = math.Round(rng.Float64()*1e6) / 1e3
			default:
				v[i] = rng.ExpFloat64() * 0.3
			}
		}
		sets = append(sets, v)
	}
	var want [][3]float64
	pytest.Run(t, `
import json, statistics, sys
out = []
for v in json.load(sys.stdin):
    q = statistics.quantiles(v, n=100, method="inclusive")
    out.append([q[49] * 1000, q[89] * 1000, q[94] * 1000])
print(json.dumps(out))
`, sets, &want)
	for i, v := range sets {
		s := append([]float64(nil), v...)
		sortFloats(s)
		got := [3]float64{Quantile(s, 50) * 1000, Quantile(s, 90) * 1000, Quantile(s, 95) * 1000}
		if got != want[i] {
			t.Fatalf("set %d (N=%d): %v, python %v", i, len(v), got, want[i])
		}
	}
}

func TestGroups(t *testing.T) {
	a := mk(LayerAtelet, OpRestore, "u", 0, ph("total", 2), ph("download", 1), ph("zz", 1), ph("aa", 1))
	a.Class, a.Kind, a.Scope = "microvm", "latest", "full"
	b := a
	b.Phases = []Phase{ph("total", 4), ph("download", 3)}
	failed := a
	failed.Failed = true
	failed.Phases = []Phase{ph("total", 100)}
	o := mk(LayerAteom, OpRestore, "u", 0, ph("total", 1))
	got := Groups([]Record{a, failed, o, b})
	type key struct{ l, o, c, k, s, p string }
	var keys []key
	for _, g := range got {
		keys = append(keys, key{g.Layer, g.Op, g.Class, g.Kind, g.Scope, g.Phase})
	}
	want := []key{
		{"atelet", "restore", "microvm", "latest", "full", "download"},
		{"atelet", "restore", "microvm", "latest", "full", "total"},
		{"atelet", "restore", "microvm", "latest", "full", "aa"},
		{"atelet", "restore", "microvm", "latest", "full", "zz"},
		{"ateom", "restore", "-", "-", "-", "total"},
	}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("order %v", keys)
	}
	if g := got[1]; g.Count != 2 || g.P50 != 3000 || g.Max != 4000 || g.P95 != 3900 {
		t.Fatalf("total group %+v (failed records must not count)", g)
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
