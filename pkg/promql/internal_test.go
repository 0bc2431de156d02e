package promql

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// spansOf cuts [start, end] the way RangeEach walks it with a fixed chunk
// size: each span from nextSpan, the next one step after it.
func spansOf(start, end, step, points int64) []span {
	var out []span
	for s := start; s <= end; {
		sp := nextSpan(s, end, step, points)
		out = append(out, sp)
		s = sp.end + step
	}
	return out
}

func TestNextSpan(t *testing.T) {
	rows := []struct {
		start, end, step, max int64
		want                  []span
	}{
		{0, 100, 10, 11, []span{{0, 100}}},
		{0, 100, 10, 4, []span{{0, 30}, {40, 70}, {80, 100}}},
		{0, 100, 10, 10, []span{{0, 90}, {100, 100}}},
		{0, 1, 10, 11000, []span{{0, 1}}},
		{5, 109, 10, 2, []span{{5, 15}, {25, 35}, {45, 55}, {65, 75}, {85, 95}, {105, 109}}},
		// 30.5 hours at 10 s = 10981 points: one request; 31 hours: two.
		{0, 109800, 10, 11000, []span{{0, 109800}}},
		{0, 111600, 10, 11000, []span{{0, 109990}, {110000, 111600}}},
		// A budget below one point still makes progress.
		{0, 20, 10, 0, []span{{0, 0}, {10, 10}, {20, 20}}},
	}
	for _, r := range rows {
		if got := spansOf(r.start, r.end, r.step, r.max); !reflect.DeepEqual(got, r.want) {
			t.Errorf("spans of (%d, %d, %d, %d) = %v, want %v", r.start, r.end, r.step, r.max, got, r.want)
		}
	}
	// Property: the spans evaluate exactly the unsplit grid, each point once,
	// each span within the point budget.
	for start := int64(0); start < 7; start++ {
		for end := start; end < start+200; end += 7 {
			for _, step := range []int64{1, 3, 10} {
				for _, maxP := range []int64{2, 3, 5, 11000} {
					var got []int64
					for _, s := range spansOf(start, end, step, maxP) {
						n := int64(0)
						for ts := s.start; ts <= s.end; ts += step {
							got = append(got, ts)
							n++
						}
						if n > maxP {
							t.Fatalf("span %v has %d points > %d", s, n, maxP)
						}
					}
					var want []int64
					for ts := start; ts <= end; ts += step {
						want = append(want, ts)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("split(%d,%d,%d,%d) points %v, want %v", start, end, step, maxP, got, want)
					}
				}
			}
		}
	}
}

func TestJoinChunks(t *testing.T) {
	a := map[string]string{"a": "1"}
	b := map[string]string{"a": "2"}
	parts := [][]Series{
		{{Labels: b, Samples: []Sample{{0, 1}, {10, 2}}}, {Labels: a, Samples: []Sample{{0, 5}}}},
		{{Labels: map[string]string{"a": "1"}, Samples: []Sample{{10, 6}, {20, 7}}}},
		// A duplicated boundary point (a backend aligning chunk edges) is
		// kept once; a series present only later is appended.
		{{Labels: b, Samples: []Sample{{10, 2}, {30, 4}}}, {Labels: map[string]string{"a": "0"}, Samples: []Sample{{30, 9}}}},
	}
	got := joinChunks(parts)
	want := []Series{
		{Labels: map[string]string{"a": "0"}, Samples: []Sample{{30, 9}}},
		{Labels: a, Samples: []Sample{{0, 5}, {10, 6}, {20, 7}}},
		{Labels: b, Samples: []Sample{{0, 1}, {10, 2}, {30, 4}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("joinChunks =\n%+v\nwant\n%+v", got, want)
	}
}

func TestCompareLabels(t *testing.T) {
	// Prometheus orders by sorted label pairs, name before value, shorter
	// prefix first: the order of a range-query matrix.
	sets := []map[string]string{
		{"__name__": "a", "x": "1"},
		{"__name__": "a", "x": "1", "y": "0"},
		{"__name__": "a", "x": "10"},
		{"__name__": "a", "x": "2"},
		{"__name__": "a", "y": "0"},
		{"__name__": "ab"},
		{"__name__": "b"},
	}
	shuffled := []Series{{Labels: sets[6]}, {Labels: sets[2]}, {Labels: sets[0]}, {Labels: sets[5]}, {Labels: sets[4]}, {Labels: sets[1]}, {Labels: sets[3]}}
	sortSeries(shuffled, func(s *Series) map[string]string { return s.Labels })
	for i, s := range shuffled {
		if !reflect.DeepEqual(s.Labels, sets[i]) {
			t.Errorf("position %d: %v, want %v", i, s.Labels, sets[i])
		}
	}
}

func TestWalk(t *testing.T) {
	s := func(kv ...float64) []Sample {
		var out []Sample
		for i := 0; i < len(kv); i += 2 {
			out = append(out, Sample{T: int64(kv[i]), V: kv[i+1]})
		}
		return out
	}
	rows := []struct {
		name      string
		vA        float64
		samples   []Sample
		want      float64
		restarted bool
	}{
		{"no samples", 5, nil, 0, false},
		{"monotonic", 5, s(100, 5, 110, 7, 120, 9), 4, false},
		{"baseline and earlier samples ignored", 5, s(90, 1, 100, 5, 110, 7), 2, false},
		{"samples after b ignored", 5, s(110, 7, 200, 9, 210, 100), 4, false},
		{"restart", 5, s(110, 7, 120, 9, 130, 2, 140, 4), 8, true},
		{"restart to zero", 5, s(110, 7, 130, 0, 140, 4), 6, true},
		{"two restarts", 10, s(110, 12, 120, 1, 130, 3, 140, 2, 150, 2), 2 + 3 + 2, true},
		{"born inside window", 0, s(150, 3, 160, 8), 8, false},
		{"flat", 5, s(110, 5, 120, 5), 0, false},
	}
	for _, r := range rows {
		got, restarted := walk(r.vA, r.samples, 100, 200)
		if got != r.want || restarted != r.restarted {
			t.Errorf("%s: walk = %v, %v; want %v, %v", r.name, got, restarted, r.want, r.restarted)
		}
	}
}

func TestWithMatcher(t *testing.T) {
	rows := []struct{ sel, want string }{
		{"x", `x{l="v"}`},
		{"x{}", `x{l="v"}`},
		{`x{a="b"}`, `x{a="b", l="v"}`},
		{`x{a="b",}`, `x{a="b",l="v"}`},
		{`{__name__=~"h_.*"} `, `{__name__=~"h_.*", l="v"}`},
		{`x{a="}"}`, `x{a="}", l="v"}`},
	}
	for _, r := range rows {
		if got := withMatcher(strings.TrimSpace(r.sel), `l="v"`); got != r.want {
			t.Errorf("withMatcher(%q) = %q, want %q", r.sel, got, r.want)
		}
	}
}

func TestWithName(t *testing.T) {
	const m = `__name__="n"`
	rows := []struct{ sel, want string }{
		{`{__name__=~"h_.*"}`, `{__name__="n"}`},
		{` {__name__=~"h_.*", job="x"} `, `{__name__="n", job="x"}`},
		// The VictoriaMetrics shape: name regex, another matcher, and the
		// added name become one name matcher first.
		{`{__name__=~"a_(sum|count)", file_name=~"p.img|m", le!=""}`, `{__name__="n", file_name=~"p.img|m", le!=""}`},
		{`{job = "x" , __name__ !~ "y" ,}`, `{__name__="n", job = "x"}`},
		{`{a="}", __name__=~'q"}', b=~` + "`\\d,`" + `}`, `{__name__="n", a="}", b=~` + "`\\d,`" + `}`},
		{`{a="x\"}, __name__=\"y", b="z"}`, `{__name__="n", a="x\"}, __name__=\"y", b="z"}`},
		{`{}`, `{__name__="n"}`},
		// Not understood: appended, as Prometheus reads it.
		{`{a="x" b="y"}`, `{a="x" b="y", __name__="n"}`},
		{`{a="x}`, `{a="x, __name__="n"}`},
		{`{a~"x"}`, `{a~"x", __name__="n"}`},
		{`{1a="x"}`, `{1a="x", __name__="n"}`},
		{`{a=x}`, `{a=x, __name__="n"}`},
		{`x{a="b"}`, `x{a="b", __name__="n"}`},
	}
	for _, r := range rows {
		if got := withName(r.sel, m); got != r.want {
			t.Errorf("withName(%q) = %q, want %q", r.sel, got, r.want)
		}
	}
}

func TestRawQueries(t *testing.T) {
	mk := func(name, inst, pod string) *growthSeries {
		return &growthSeries{labels: map[string]string{"__name__": name, "instance": inst, "pod": pod}}
	}
	var all []*growthSeries
	for _, inst := range []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"} {
		for _, n := range []string{"h_bucket", "h_count", "h_sum"} {
			all = append(all, mk(n, inst, "p-"+inst[7:8]))
		}
	}
	// Every series of one process restarted: narrowed to that instance.
	got := rawQueries(`{__name__=~"h_(bucket|count|sum)"}`, all, all[3:6], 900, 2000, DefaultMaxSeriesPoints)
	want := []string{`{__name__=~"h_(bucket|count|sum)", instance=~"10\\.0\\.0\\.2:80"}[900s] @ 2000`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Only the _count of two processes: names narrowed too.
	got = rawQueries(`{__name__=~"h_(bucket|count|sum)"}`, all, []*growthSeries{all[1], all[7]}, 900, 2000, DefaultMaxSeriesPoints)
	want = []string{`{__name__=~"h_count", instance=~"10\\.0\\.0\\.1:80|10\\.0\\.0\\.3:80"}[900s] @ 2000`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Everything is a candidate: no narrowing at all.
	got = rawQueries(`h_count`, all[1:2], all[1:2], 900, 2000, DefaultMaxSeriesPoints)
	if want := []string{`h_count[900s] @ 2000`}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Many candidates: batched regexes.
	var many []*growthSeries
	for i := range 250 {
		many = append(many, mk("c_total", fmt.Sprintf("i%03d", i), "p"))
	}
	got = rawQueries(`c_total{job="x"}`, append(many, mk("c_total", "other", "p")), many, 60, 100, DefaultMaxSeriesPoints)
	if len(got) != 3 || !strings.HasPrefix(got[0], `c_total{job="x", instance=~"i000|i001|`) || !strings.Contains(got[2], `i249"}[60s] @ 100`) {
		t.Errorf("batched queries: %d, first %.80q", len(got), got[0])
	}
	// A long window under a small budget: 1,000 samples per series (10,000 s
	// at 10 s), 3 series per instance, budget 9,000 -> 3 instances per read.
	got = rawQueries(`{__name__=~"h_(bucket|count|sum)"}`, all, all, 10000, 20000, 9000)
	if len(got) != 1 || !strings.HasPrefix(got[0], `{__name__=~"h_(bucket|count|sum)"}[10000s]`) {
		t.Errorf("every series a candidate: %q", got)
	}
	got = rawQueries(`{__name__=~"h_(bucket|count|sum)"}`, all, all[:6], 10000, 20000, 5000)
	if len(got) != 2 || !strings.Contains(got[0], `instance=~"10\\.0\\.0\\.1:80"`) || !strings.Contains(got[1], `instance=~"10\\.0\\.0\\.2:80"`) {
		t.Errorf("budgeted batches: %q", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(2 * time.Second).Format(httpTimeFormat), 2 * time.Second, true},
		{now.Add(-time.Hour).Format(httpTimeFormat), 0, true},
	}
	for _, r := range rows {
		got, ok := retryAfter(r.h, now)
		if got != r.want || ok != r.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", r.h, got, ok, r.want, r.ok)
		}
	}
}

const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

func TestResetShards(t *testing.T) {
	var group []*growthSeries
	for i, inst := range []string{"a", "a", "b", "b", "c", "c"} {
		group = append(group, &growthSeries{labels: map[string]string{"__name__": "x", "instance": inst, "pod": fmt.Sprintf("p%d", i)}})
	}
	// 6 series x 100 samples fit a budget of 600: one listing.
	if got := resetShards(`x{job="j"}`, group, 1000, 600); !reflect.DeepEqual(got, []string{`x{job="j"}`}) {
		t.Errorf("within budget: %q", got)
	}
	// Budget 250: 3 shards needed; instance (3 values) is preferred to pod
	// (6): one instance (200 samples) per shard, then the unknown rest.
	want := []string{`x{job="j", instance=~"a"}`, `x{job="j", instance=~"b"}`, `x{job="j", instance=~"c"}`, `x{job="j", instance!~"a|b|c"}`}
	if got := resetShards(`x{job="j"}`, group, 1000, 250); !reflect.DeepEqual(got, want) {
		t.Errorf("budget 250: %q, want %q", got, want)
	}
	// Budget 150: 4 shards needed, more than instances: by pod, one each.
	got := resetShards(`x`, group, 1000, 150)
	if len(got) != 7 || got[0] != `x{pod=~"p0"}` || got[6] != `x{pod!~"p0|p1|p2|p3|p4|p5"}` {
		t.Errorf("budget 150: %q", got)
	}
}
