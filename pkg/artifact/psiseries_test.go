package artifact

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/substrate/density/internal/pytest"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

const psiGolden = "testdata/psi_series.golden.json"

// psiResult is a small harvest: three nodes and four pods over 60 s, the
// pod memory read failed, node io had no series, and pod cpu was kept at a
// 20 s series step (so the document's grid is 20 s).
func psiResult() (*harvest.Result, int64, int64) {
	const start, end = 1_710_237_600, 1_710_237_660
	s := func(label, name string, vs ...float64) promql.Series {
		out := promql.Series{Labels: map[string]string{label: name}}
		for i, v := range vs {
			if v >= 0 { // a negative value marks a missing sample
				out.Samples = append(out.Samples, promql.Sample{T: start + int64(i)*10, V: v})
			}
		}
		return out
	}
	var r harvest.Result
	r.NodePSI.CPU = harvest.PSIResource{SeriesStep: 10, Series: []promql.Series{
		s("instance", "10.0.0.1:10250", 0.5, 1.25, 2, -1, 0.125, 3.33333, 0),
		s("instance", "10.0.0.2:10250", 0, 0, -1, -1, 7.5, 0, 0),
		s("instance", "10.0.0.3:10250", 12, 0.1, 0.2, -1, 0.3, 0.4, 0.5),
	}}
	r.NodePSI.Mem = harvest.PSIResource{SeriesStep: 10, Series: []promql.Series{
		s("instance", "10.0.0.1:10250", 0, 0, 0, 0, 0, 0, 0),
	}}
	r.NodePSI.IO = harvest.PSIResource{SeriesStep: 10, Series: []promql.Series{}}
	pod := func(vs ...float64) []float64 { return vs }
	var podCPU []promql.Series
	for i, vs := range [][]float64{pod(1, -1, 2, -1, 3, -1, 4), pod(5, -1, 6), pod(0.25, -1, 0.5, -1, 0.75), pod(9, -1, -1, -1, -1, -1, 1)} {
		series := s("pod", "benchmark-ateom-"+string(rune('a'+i)), vs...)
		podCPU = append(podCPU, series)
	}
	r.PodPSI.CPU = harvest.PSIResource{SeriesStep: 20, Series: podCPU}
	r.PodPSI.Mem = harvest.PSIResource{} // the read failed
	r.PodPSI.IO = harvest.PSIResource{SeriesStep: 10, Series: podCPU[:1]}
	return &r, start, end
}

func TestPSISeriesGolden(t *testing.T) {
	r, start, end := psiResult()
	doc := NewPSISeries(r, start, end)
	if doc.StepS != 20 {
		t.Fatalf("step_s %d, want the coarsest series step 20", doc.StepS)
	}
	got, err := PSISeriesJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(psiGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(psiGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("psi_series.json differs from %s (go test -update to accept):\n%s", psiGolden, got)
	}

	// Round trip: read back, the same document and the same bytes.
	back, err := ReadPSISeries(got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, doc) {
		t.Errorf("read back %+v\nwant %+v", back, doc)
	}
	again, err := PSISeriesJSON(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, got) {
		t.Errorf("write → read → write changed the bytes")
	}
	if back.Pod.Mem.Series != nil || len(back.Pod.Mem.Timestamps) != 0 || len(back.Pod.Mem.Top) != 0 {
		t.Errorf("a failed read must be series null with empty arrays: %+v", back.Pod.Mem)
	}

	// Python writes the same bytes for what it reads.
	var py string
	pytest.Run(t, `import json,sys
print(json.dumps(json.dumps(json.loads(json.load(sys.stdin)), indent=2) + "\n"))`, string(got), &py)
	if py != string(got) {
		t.Errorf("json.dumps(json.loads(f), indent=2) differs:\n%s", py)
	}
}

func TestReadPSISeriesErrors(t *testing.T) {
	golden, err := os.ReadFile(filepath.FromSlash(psiGolden))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(golden)
	// edit returns the golden document with the first old replaced by new.
	edit := func(old, new string) string {
		if !strings.Contains(doc, old) {
			t.Fatalf("golden lacks %q", old)
		}
		return strings.Replace(doc, old, new, 1)
	}
	for _, c := range []struct{ name, in, want string }{
		{"not JSON", "{", "invalid JSON"},
		{"not an object", "[]", "the document: want an object, got an array"},
		{"missing key", edit(`"step_s": 20,`, ``), `the document: missing key "step_s"`},
		{"unknown key", edit(`"step_s": 20,`, `"step_s": 20, "steps": 1,`), `the document: unknown key "steps"`},
		{"float step", edit(`"step_s": 20,`, `"step_s": 20.0,`), "step_s: want a positive integer, got the number 20.0"},
		{"zero step", edit(`"step_s": 20,`, `"step_s": 0,`), "step_s: want a positive integer"},
		{"series string", edit(`"series": 3,`, `"series": "3",`), `node.cpu.series: want a count or null, got the string "3"`},
		{"negative series", edit(`"series": 3,`, `"series": -3,`), `node.cpu.series: want a count or null, got -3`},
		{"float timestamp", edit(`1710237600,`, `1710237600.5,`), "node.cpu.timestamps[0]: want Unix seconds, got the number 1710237600.5"},
		{"timestamps out of order", edit(`1710237620,`, `1710237500,`), "node.cpu.timestamps[1]: 1710237500 does not follow 1710237600"},
		{"band missing", edit(`"p99": [`, `"p98": [`), `node.cpu.bands: unknown key "p98"`},
		{"band extra key", edit(`"min": [`, `"min": [1.0], "x": [`), `node.cpu.bands: unknown key "x"`},
		{"band too long", edit(`"min": [`+"\n", `"min": ["a", `+"\n"), `node.cpu.bands.min: 5 values for 4 timestamps`},
		{"top name", edit(`"name": "10.0.0.3:10250"`, `"name": 3`), "node.cpu.top[0].name: want a string, got the integer 3"},
		{"top peak null", edit(`"peak": 12.0`, `"peak": null`), "node.cpu.top[0].peak: want a number, got null"},
		{"top values too long", edit(`"values": [`+"\n", `"values": [true, `+"\n"), "node.cpu.top[0].values: 5 values for 4 timestamps"},
		{"scope key", edit(`"io": {`, `"disk": {`), `node: unknown key "disk"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadPSISeries([]byte(c.in))
			if err == nil {
				t.Fatalf("no error")
			}
			if !errors.Is(err, ErrPSISeries) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want ErrPSISeries containing %q", err, c.want)
			}
		})
	}
	// A value of the wrong type inside an array of the right length.
	bad := strings.Replace(doc, `"min": [`+"\n          0.0,", `"min": [`+"\n          \"x\",", 1)
	if bad == doc {
		t.Fatal("golden min band does not start with 0.0")
	}
	if _, err := ReadPSISeries([]byte(bad)); err == nil || !strings.Contains(err.Error(), `node.cpu.bands.min[0]: want a number or null, got the string "x"`) {
		t.Errorf("error %v", err)
	}
}
