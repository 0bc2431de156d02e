package phases

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

const (
	lineAteletRestore = `{"time":"2026-09-23T10:00:05.5Z","level":"INFO","msg":"Restore timing breakdown","ate.actor.uid":"u1","ate.actor.name":"sb-1","ate.snapshot.scope":"full","ate.snapshot.kind":"latest","ate.sandbox.class":"microvm","ate.actor.restore.duration.download":2.4,"ate.actor.restore.duration.ateom_restore":1.1,"ate.actor.restore.duration.total":3.9}`
	lineAteomRestore  = `{"time":"2026-09-23T10:00:05.4Z","msg":"Restore timing breakdown","ate.actor.uid":"u1","ate.snapshot.scope":"full","ateom.actor.restore.duration.vm_restore":0.7,"ateom.actor.restore.duration.total":1.0}`
)

// t0 is 2026-09-23T10:00:05Z in microseconds.
const t0 = int64(1790157605) * 1_000_000

func read(t *testing.T, log string) *Collector {
	t.Helper()
	c := NewCollector()
	if err := c.ReadLog(strings.NewReader(log), "test"); err != nil {
		t.Fatal(err)
	}
	// The same log read one byte at a time gives the same result.
	c2 := NewCollector()
	if err := c2.ReadLog(iotest.OneByteReader(strings.NewReader(log)), "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimLeft(log, " \t\r\n"), "[") && (!reflect.DeepEqual(c.Records, c2.Records) || c.Stats != c2.Stats) {
		t.Fatalf("one-byte reads differ:\n%+v %+v\n%+v %+v", c.Stats, c.Records, c2.Stats, c2.Records)
	}
	return c
}

func TestReadLogAteletExample(t *testing.T) {
	c := read(t, lineAteletRestore+"\n")
	want := []Record{{
		Layer: LayerAtelet, Op: OpRestore, Time: t0 + 500_000, HasTime: true,
		UID: "u1", Name: "sb-1", Scope: "full", Kind: "latest", Class: "microvm",
		Phases: []Phase{{"download", 2.4}, {"ateom_restore", 1.1}, {"total", 3.9}},
		Source: "test", Pair: -1,
	}}
	if !reflect.DeepEqual(c.Records, want) {
		t.Fatalf("got %+v\nwant %+v", c.Records, want)
	}
	if c.Stats != (Stats{Lines: 1, Records: 1}) {
		t.Fatalf("stats %+v", c.Stats)
	}
}

// TestReadLogTolerance pins the tolerant-reading rules: what is a record,
// what counts as a line, what is skipped.
func TestReadLogTolerance(t *testing.T) {
	rec := func(layer, op string, phases ...Phase) Record {
		return Record{Layer: layer, Op: op, Phases: phases, Source: "test", Pair: -1}
	}
	cases := []struct {
		name  string
		log   string
		stats Stats
		recs  []Record // compared on layer, op, phases, failed when set
	}{
		{"no brace lines are not counted", "hello\n\nINFO started\n", Stats{}, nil},
		{"empty log", "", Stats{}, nil},
		{"kubectl --prefix", `[pod/atelet-abc/atelet] {"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1.5}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAtelet, OpRestore, Phase{"total", 1.5})}},
		{"timestamp prefix", `2026-09-23T10:00:05.123456789Z {"msg":"Checkpoint timing breakdown","ateom.actor.checkpoint.duration.total":2}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAteom, OpCheckpoint, Phase{"total", 2})}},
		{"truncated JSON", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1.5` + "\n",
			Stats{Lines: 1, Undecodable: 1}, nil},
		{"truncated at end of input", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1.5`,
			Stats{Lines: 1, Undecodable: 1}, nil},
		{"trailing garbage after the object", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1.5} x` + "\n",
			Stats{Lines: 1, Undecodable: 1}, nil},
		{"trailing whitespace and CRLF", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1.5}  ` + "\r\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAtelet, OpRestore, Phase{"total", 1.5})}},
		{"object inside a non-object", `x [{"a":1}]` + "\n", Stats{Lines: 1, Undecodable: 1}, nil},
		{"other msg", `{"msg":"restore timing breakdown","ate.actor.restore.duration.total":1.5}` + "\n", Stats{Lines: 1}, nil},
		{"no msg", `{"ate.actor.restore.duration.total":1.5}` + "\n", Stats{Lines: 1}, nil},
		{"non-numeric values drop that phase only",
			`{"msg":"Restore timing breakdown","ate.actor.restore.duration.a":"1.5","ate.actor.restore.duration.b":true,"ate.actor.restore.duration.c":null,"ate.actor.restore.duration.d":NaN,"ate.actor.restore.duration.e":-Infinity,"ate.actor.restore.duration.f":1e400,"ate.actor.restore.duration.g":{},"ate.actor.restore.duration.total":3}` + "\n",
			Stats{Lines: 1, Records: 1, BadValues: 7}, []Record{rec(LayerAtelet, OpRestore, Phase{"total", 3})}},
		{"only bad values: not a record", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":"3"}` + "\n", Stats{Lines: 1}, nil},
		{"prefix order: atelet restore first",
			`{"msg":"Restore timing breakdown","ateom.actor.restore.duration.total":1,"ate.actor.restore.duration.total":2}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAtelet, OpRestore, Phase{"total", 2})}},
		{"first prefix with a numeric phase wins",
			`{"msg":"Checkpoint timing breakdown","ate.actor.checkpoint.duration.total":"x","ateom.actor.checkpoint.duration.total":1}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAteom, OpCheckpoint, Phase{"total", 1})}},
		{"a prefix without a phase name is not a phase", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.":1}` + "\n", Stats{Lines: 1}, nil},
		{"unknown phases are kept", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.zz_new":0.25,"ate.actor.restore.duration.total":1}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAtelet, OpRestore, Phase{"zz_new", 0.25}, Phase{"total", 1})}},
		{"duplicate keys: the last wins", `{"msg":"x","msg":"Restore timing breakdown","ate.actor.restore.duration.total":"bad","ate.actor.restore.duration.total":2}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAtelet, OpRestore, Phase{"total", 2})}},
		{"escaped keys", `{"msg":"Restore timing breakdown","ate.actor.restore.duration.\u0074otal":2}` + "\n",
			Stats{Lines: 1, Records: 1}, []Record{rec(LayerAtelet, OpRestore, Phase{"total", 2})}},
		{"a JSON array line is read line by line", `[` + "\n" + lineAteomRestore + ",\n" + `]` + "\n",
			Stats{Lines: 1, Undecodable: 1}, nil},
		{"binary", "\x00\xff{\x01\x02\n\x7f{{{\n", Stats{Lines: 2, Undecodable: 2}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := read(t, tc.log)
			if c.Stats != tc.stats {
				t.Errorf("stats %+v, want %+v", c.Stats, tc.stats)
			}
			if len(c.Records) != len(tc.recs) {
				t.Fatalf("records %+v, want %+v", c.Records, tc.recs)
			}
			for i, w := range tc.recs {
				g := c.Records[i]
				if g.Layer != w.Layer || g.Op != w.Op || !reflect.DeepEqual(g.Phases, w.Phases) {
					t.Errorf("record %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestReadLogFailed(t *testing.T) {
	c := read(t, `{"msg":"Checkpoint timing breakdown","error.type":null,"ate.actor.checkpoint.duration.total":2}`+"\n"+
		`{"msg":"Checkpoint timing breakdown","error.type":"DeadlineExceeded","ateom.actor.checkpoint.duration.total":2}`+"\n"+
		`{"msg":"Checkpoint timing breakdown","ate.actor.checkpoint.duration.total":2}`+"\n")
	got := []bool{c.Records[0].Failed, c.Records[1].Failed, c.Records[2].Failed}
	if !reflect.DeepEqual(got, []bool{true, true, false}) || c.Stats.Records != 3 {
		t.Fatalf("failed %v, stats %+v", got, c.Stats)
	}
}

func TestReadLogTimes(t *testing.T) {
	cases := []struct {
		line    string
		hasTime bool
		us      int64
	}{
		{`{"time":"2026-09-23T10:00:05Z",`, true, t0},
		{`{"time":"2026-09-23T10:00:05.123456789Z",`, true, t0 + 123456},
		{`{"time":"2026-09-23T12:00:05+02:00",`, true, t0},
		{`{"time":"2026-09-23T09:30:05-0030",`, true, t0},
		{`{"time":"2026-09-23T10:00:05.5",`, true, t0 + 500_000},
		{`{"time":"2026-09-23 10:00:05Z",`, false, 0},
		{`{"time":1790157605,`, false, 0},
		{`{"time":"yesterday",`, false, 0},
		{`{"time":"2026-02-30T10:00:05Z",`, false, 0},
		{`{`, false, 0},
	}
	for _, tc := range cases {
		c := read(t, tc.line+`"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1}`+"\n")
		if len(c.Records) != 1 {
			t.Fatalf("%s: %d records", tc.line, len(c.Records))
		}
		r := c.Records[0]
		if r.HasTime != tc.hasTime || r.Time != tc.us {
			t.Errorf("%s: time %v %d, want %v %d", tc.line, r.HasTime, r.Time, tc.hasTime, tc.us)
		}
	}
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in string
		us int64
		ok bool
	}{
		{"2026-09-23T10:00:05Z", t0, true},
		{"2026-09-23T10:00:05.000001Z", t0 + 1, true},
		{"2026-09-23T10:00:05.9999999Z", t0 + 999999, true}, // trimmed, not rounded
		{"2026-09-23T10:00:05.1+0100", t0 - 3600_000_000 + 100_000, true},
		{"2026-09-23T10:00:05", t0, true},
		{"2026-09-23t10:00:05Z", 0, false},
		{"2026-09-23T10:00:05.Z", 0, false},
		{"2026-09-23T10:00:05+1", 0, false},
		{"2026-09-23T24:00:05Z", 0, false},
		{"2026-13-23T10:00:05Z", 0, false},
		{"2024-02-29T00:00:00Z", 1709164800_000000, true},
		{"2026-09-23T10:00:05ZZ", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		us, ok := ParseTime(tc.in)
		if ok != tc.ok || us != tc.us {
			t.Errorf("ParseTime(%q) = %d, %v; want %d, %v", tc.in, us, ok, tc.us, tc.ok)
		}
	}
}

func TestReadLogCloudLogging(t *testing.T) {
	entry := func(payload string, stamp string) string {
		return fmt.Sprintf(`{"insertId":"x","jsonPayload":%s,"resource":{"type":"k8s_container","labels":{"pod_name":"atelet-1"}},"timestamp":%q}`, payload, stamp)
	}
	noTime := `{"msg":"Restore timing breakdown","ate.actor.uid":"u1","ateom.actor.restore.duration.total":1}`
	withTime := `{"time":"2026-09-23T10:00:06Z","msg":"Restore timing breakdown","ateom.actor.restore.duration.total":1}`
	badTime := `{"time":7,"msg":"Restore timing breakdown","ateom.actor.restore.duration.total":1}`
	lines := entry(noTime, "2026-09-23T10:00:05Z") + "\n" + entry(withTime, "2026-09-23T10:00:05Z") + "\n" + entry(badTime, "2026-09-23T10:00:05Z") + "\n"
	check := func(c *Collector) {
		t.Helper()
		if len(c.Records) != 3 {
			t.Fatalf("records %+v", c.Records)
		}
		got := [][2]any{}
		for _, r := range c.Records {
			got = append(got, [2]any{r.HasTime, r.Time})
		}
		want := [][2]any{{true, t0}, {true, t0 + 1_000_000}, {false, int64(0)}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("times %v, want %v", got, want)
		}
		if c.Records[0].UID != "u1" {
			t.Fatalf("uid %q", c.Records[0].UID)
		}
	}
	check(read(t, lines))

	// The same entries as one pretty-printed JSON array (a Cloud Logging
	// export), from a seekable file.
	array := "  [\n " + entry(noTime, "2026-09-23T10:00:05Z") + ",\n" + entry(withTime, "2026-09-23T10:00:05Z") + ",\n  " + entry(badTime, "2026-09-23T10:00:05Z") + ", 5\n]\n"
	c := NewCollector()
	if err := c.ReadLog(bytes.NewReader([]byte(array)), "export.json"); err != nil {
		t.Fatal(err)
	}
	check(c)
	if c.Lines != 4 || c.Undecodable != 1 || len(c.Notices) != 0 {
		t.Fatalf("stats %+v notices %v", c.Stats, c.Notices)
	}

	// A file starting with '[' that is not one array: read line by line,
	// with a notice, and nothing counted twice.
	broken := "[\n" + lineAteletRestore + "\n" + lineAteomRestore + "\n"
	c = NewCollector()
	if err := c.ReadLog(bytes.NewReader([]byte(broken)), "broken.json"); err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 2 || c.Lines != 2 || len(c.Notices) != 1 {
		t.Fatalf("records %d stats %+v notices %v", len(c.Records), c.Stats, c.Notices)
	}
}

// TestReadLogLongLines: lines of any length are decoded; what is kept of
// them stays bounded.
func TestReadLogLongLines(t *testing.T) {
	junk := strings.Repeat("x", 8<<20)
	log := `{"msg":"Restore timing breakdown","stack":"` + junk + `","ate.actor.uid":"` + junk + `","ate.actor.restore.duration.total":1}` + "\n" +
		`{"msg":"Restore timing breakdown","nested":[[[{"a":[1,2,{"b":"` + junk[:1000] + `"}]}]]],"ate.actor.restore.duration.total":2}` + "\n"
	c := NewCollector()
	if err := c.ReadLog(strings.NewReader(log), "long"); err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 2 || c.Records[0].UID != "" || c.Records[1].Phases[0].Seconds != 2 {
		t.Fatalf("records %d %+v", len(c.Records), c.Stats)
	}
	// Too many phases on one line are dropped, counted.
	var b strings.Builder
	b.WriteString(`{"msg":"Restore timing breakdown"`)
	for i := range MaxPhases + 10 {
		fmt.Fprintf(&b, `,"ate.actor.restore.duration.p%d":1`, i)
	}
	b.WriteString("}\n")
	c = read(t, b.String())
	if len(c.Records[0].Phases) != MaxPhases || c.PhasesDropped != 10 {
		t.Fatalf("phases %d dropped %d", len(c.Records[0].Phases), c.PhasesDropped)
	}
}

func TestDropAfter(t *testing.T) {
	c := NewCollector()
	c.DropAfter(t0 + 500_000)
	log := `{"time":"2026-09-23T10:00:05.5Z","msg":"Restore timing breakdown","ate.actor.restore.duration.total":1}` + "\n" +
		`{"time":"2026-09-23T10:00:05.500001Z","msg":"Restore timing breakdown","ate.actor.restore.duration.total":1}` + "\n" +
		`{"msg":"Restore timing breakdown","ate.actor.restore.duration.total":1}` + "\n"
	if err := c.ReadLog(strings.NewReader(log), "x"); err != nil {
		t.Fatal(err)
	}
	if c.Stats.Records != 2 || c.Late != 1 {
		t.Fatalf("stats %+v", c.Stats)
	}
}
