package runs

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

const historyHeader = "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,Total Max Response Time,Total Average Content Size\n"

func TestReadHistory(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		samples  []UserSample
		observed []float64
		first    int64
		last     int64
		bounds   bool
	}{
		{"empty file", "", nil, nil, 0, 0, false},
		{"header only", historyHeader, nil, nil, 0, 0, false},
		{"locust rows: per-operation rows ignored, Aggregated kept",
			historyHeader +
				"1700000000,0,,Aggregated,0,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,0,0,0,0,0,0,0\n" +
				"1700000001,5,POST,CreateActor,1.5,0,12,14,15,16,20,25,30,31,32,32,32,3,0,12,13.2,10,32,120\n" +
				"1700000001,5,,Aggregated,1.5,0,12,14,15,16,20,25,30,31,32,32,32,3,0,12,13.2,10,32,120\n" +
				"1700000002,10,,Aggregated,3,0,12,14,15,16,20,25,30,31,32,32,32,9,0,12,13.2,10,32,120\n",
			[]UserSample{{1700000000, 0}, {1700000001, 5}, {1700000002, 10}}, []float64{5, 10}, 1700000000, 1700000002, true},
		{"Total and empty names count, others do not",
			"Timestamp,User Count,Name\n1,1,Total\n2,2,\n3,3,Other\n4,4, Aggregated \n5,5,aggregated\n",
			[]UserSample{{1, 1}, {2, 2}, {4, 4}}, []float64{1, 2, 4}, 1, 5, true},
		{"missing Name column counts as empty",
			"Timestamp,User Count\n10,3\n11,4\n", []UserSample{{10, 3}, {11, 4}}, []float64{3, 4}, 10, 11, true},
		{"short row: absent Name counts as empty, absent count skipped",
			"Timestamp,User Count,Name\n10,3\n11\n", []UserSample{{10, 3}}, []float64{3}, 10, 11, true},
		{"timestamps: base-10 Python int() only",
			"Timestamp,User Count\n+12,1\n0013,1\n1_4,1\n\u0661\u0665,1\n16.0,1\n0x11,1\n1e1,1\n,1\n1__9,1\n 20 ,1\n",
			[]UserSample{{12, 1}, {13, 1}, {14, 1}, {15, 1}, {20, 1}}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 12, 20, true},
		{"counts: Python float(), NaN/Inf and junk skipped",
			"Timestamp,User Count\n1, 12 \n2,1e3\n3,nan\n4,inf\n5,-Infinity\n6,abc\n7,\n8,1_0.5\n9,.5\n10,-3\n11,0x10\n",
			[]UserSample{{1, 12}, {2, 1000}, {8, 10.5}, {9, 0.5}, {10, -3}}, []float64{12, 1000, 10.5, 0.5}, 1, 11, true},
		{"observed needs no timestamp",
			"Timestamp,User Count\nx,7\n,8\n", nil, []float64{7, 8}, 0, 0, false},
		{"quoted values and CRLF",
			"\"Timestamp\",\"User Count\",\"Name\"\r\n\"5\",\"2\",\"Aggregated\"\r\n", []UserSample{{5, 2}}, []float64{2}, 5, 5, true},
		{"timestamp beyond int64 clamps",
			"Timestamp,User Count\n99999999999999999999,1\n", []UserSample{{math.MaxInt64, 1}}, []float64{1}, math.MaxInt64, math.MaxInt64, true},
		{"bounds are min and max over all rows",
			"Timestamp,User Count,Name\n30,1,op\n10,1,op\n20,1,\n", []UserSample{{20, 1}}, []float64{1}, 10, 30, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ReadHistory(iotest.HalfReader(strings.NewReader(tc.in)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h.Samples, tc.samples) {
				t.Errorf("samples %v want %v", h.Samples, tc.samples)
			}
			if !reflect.DeepEqual(h.Observed, tc.observed) {
				t.Errorf("observed %v want %v", h.Observed, tc.observed)
			}
			if h.First != tc.first || h.Last != tc.last || h.HasBounds != tc.bounds {
				t.Errorf("bounds %d..%d %v want %d..%d %v", h.First, h.Last, h.HasBounds, tc.first, tc.last, tc.bounds)
			}
		})
	}
}

// A file that breaks part-way is unreadable as a whole: no samples at all,
// not the half that was read (runs.md).
func TestReadHistoryUnreadableGivesNothing(t *testing.T) {
	good := "Timestamp,User Count\n1,10\n2,20\n"
	tests := []struct {
		name string
		in   string
		err  error
	}{
		{"invalid utf-8 after good rows", good + "3,\xff\n", ErrCSVInvalidUTF8},
		{"field over the csv limit", good + "3," + strings.Repeat("9", CSVFieldLimit+1) + "\n", ErrCSVFieldTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ReadHistory(strings.NewReader(tc.in))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v want %v", err, tc.err)
			}
			if h.Samples != nil || h.Observed != nil || h.HasBounds {
				t.Errorf("partial result kept: %+v", h)
			}
		})
	}
	t.Run("reader error", func(t *testing.T) {
		boom := errors.New("boom")
		h, err := ReadHistory(iotest.DataErrReader(&failAfter{data: good, err: boom}))
		if !errors.Is(err, boom) || h.Samples != nil {
			t.Fatalf("got %+v, %v", h, err)
		}
	})
}

type failAfter struct {
	data string
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestParsePyInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  error
	}{
		{"0", 0, nil}, {"-0", 0, nil}, {"+5", 5, nil}, {"007", 7, nil}, {" \t12\n", 12, nil},
		{"1_000", 1000, nil}, {"0_1", 1, nil}, {"\u0661\u0662", 12, nil}, {"\uff11", 1, nil},
		{"9223372036854775807", math.MaxInt64, nil}, {"-9223372036854775808", math.MinInt64, nil},
		{"9223372036854775808", math.MaxInt64, ErrIntRange}, {"-9223372036854775809", math.MinInt64, ErrIntRange},
		{"184467440737095516160", math.MaxInt64, ErrIntRange},
		{"", 0, ErrNotNumber}, {" ", 0, ErrNotNumber}, {"+", 0, ErrNotNumber}, {"1.0", 0, ErrNotNumber},
		{"1e3", 0, ErrNotNumber}, {"0x10", 0, ErrNotNumber}, {"_1", 0, ErrNotNumber}, {"1_", 0, ErrNotNumber},
		{"1__0", 0, ErrNotNumber}, {"+-1", 0, ErrNotNumber}, {"- 1", 0, ErrNotNumber}, {"1 0", 0, ErrNotNumber},
		{"1\x00", 0, ErrNotNumber}, {"١a", 0, ErrNotNumber}, {"\ufffd", 0, ErrNotNumber},
		{strings.Repeat("1", 4300), math.MaxInt64, ErrIntRange}, {strings.Repeat("1", 4301), 0, ErrNotNumber},
		{"0_" + strings.Repeat("0", 4300), 0, ErrNotNumber},
	}
	for _, tc := range tests {
		got, err := ParsePyInt(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("ParsePyInt(%q) = %d, %v; want %d, %v", trunc(tc.in), got, err, tc.want, tc.err)
		}
	}
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func TestParsePyFloat(t *testing.T) {
	tests := []struct {
		in   string
		want float64 // NaN compared with IsNaN
		ok   bool
	}{
		{"12", 12, true}, {"  12 ", 12, true}, {"1e3", 1000, true}, {"1E+3", 1000, true}, {"1.", 1, true},
		{".5", 0.5, true}, {"-.5e-1", -0.05, true}, {"1_000.000_1", 1000.0001, true}, {"1e1_0", 1e10, true},
		{"nan", math.NaN(), true}, {"-NaN", math.NaN(), true}, {"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true},
		{"+iNfInItY", math.Inf(1), true}, {"1e999", math.Inf(1), true}, {"-1e999", math.Inf(-1), true}, {"1e-999", 0, true},
		{"\u0661.\u0665", 1.5, true}, {"0012.50", 12.5, true},
		{"", 0, false}, {".", 0, false}, {"e5", 0, false}, {"1e", 0, false}, {"1e+", 0, false}, {"0x1p3", 0, false},
		{"1_", 0, false}, {"_1", 0, false}, {"1__0", 0, false}, {"1_.5", 0, false}, {"1._5", 0, false}, {"1_e5", 0, false},
		{"in_f", 0, false}, {"infi", 0, false}, {"nan(1)", 0, false}, {"1 2", 0, false}, {"1,5", 0, false}, {"N/A", 0, false},
		{"--1", 0, false}, {"+-1", 0, false}, {"1\x1c", 0, false},
	}
	for _, tc := range tests {
		got, err := ParsePyFloat(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParsePyFloat(%q) err = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && got != tc.want) {
			t.Errorf("ParsePyFloat(%q) = %v want %v", tc.in, got, tc.want)
		}
	}
}

func TestReadStatsCSV(t *testing.T) {
	in := "Type,Name,Request Count,Failure Count,Median Response Time\n" +
		"POST,CreateActor,100,2,12\n" +
		",,5,0,1\n" + // empty name: skipped
		"GET,ShortRow,7\n" + // no Failure Count: skipped
		"GET, Spaced , 9 , x \n" +
		",Aggregated,107,2,12\n"
	got, err := ReadStatsCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []OperationStats{
		{Type: "POST", Name: "CreateActor", Requests: "100", Failures: "2", Line: 2},
		{Type: "GET", Name: "Spaced", Requests: "9", Failures: "x", Line: 5},
		{Type: "", Name: "Aggregated", Requests: "107", Failures: "2", Line: 6},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if r, f, err := got[0].Counts(); r != 100 || f != 2 || err != nil {
		t.Errorf("Counts = %d %d %v", r, f, err)
	}
	if _, _, err := got[1].Counts(); !errors.Is(err, ErrNotNumber) {
		t.Errorf("corrupt failure count: err = %v", err)
	}
	if _, _, err := (OperationStats{Name: "x", Requests: "99999999999999999999", Failures: "0"}).Counts(); !errors.Is(err, ErrIntRange) {
		t.Errorf("huge count: err = %v", err)
	}
	if _, err := ReadStatsCSV(strings.NewReader(in + "\xfe")); err == nil {
		t.Error("invalid UTF-8: no error")
	}
}

func TestHasDataRows(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false}, {"Type,Name\n", false}, {"Type,Name\n\n\r\n", false}, {"Type,Name\n,Aggregated\n", true},
		{"Type,Name\n  \n", true}, {"\n\n", false}, {"Type,Name", false},
	}
	for _, tc := range tests {
		got, err := HasDataRows(strings.NewReader(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("HasDataRows(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestReadStatus(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	tests := []struct {
		in   string
		want Status
		err  bool
	}{
		{`{"locust_exit_code": 0, "stats_generated": true}`, Status{i(0), b(true)}, false},
		{`{"locust_exit_code": 1, "stats_generated": false}`, Status{i(1), b(false)}, false},
		{`{"locust_exit_code": 1.5, "stats_generated": 1}`, Status{nil, nil}, false},
		{`{"stats_generated": "true"}`, Status{nil, nil}, false},
		{`{"locust_exit_code": null, "stats_generated": null}`, Status{nil, nil}, false},
		{`{"locust_exit_code": -0, "stats_generated": false}`, Status{i(0), b(false)}, false},
		{`{"stats_generated": true, "stats_generated": false}`, Status{nil, b(false)}, false},
		{`{}`, Status{}, false},
		{`[]`, Status{}, true},
		{`null`, Status{}, true},
		{`{"locust_exit_code": 0`, Status{}, true},
		{``, Status{}, true},
		{`{"a":1} x`, Status{}, true},
		{`{"a":"` + strings.Repeat("x", statusSizeLimit) + `"}`, Status{}, true},
	}
	for _, tc := range tests {
		got, err := ReadStatus(strings.NewReader(tc.in))
		if (err != nil) != tc.err {
			t.Errorf("ReadStatus(%q) err = %v", trunc(tc.in), err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ReadStatus(%q) = %+v want %+v", trunc(tc.in), got, tc.want)
		}
	}
}

func TestArtifacts(t *testing.T) {
	a := ArtifactsFromNames([]string{FileStats, FileStatus, "other.txt", FileClusterBefore})
	for _, n := range ArtifactFiles() {
		want := n == FileStats || n == FileStatus || n == FileClusterBefore
		if a.Has(n) != want {
			t.Errorf("Has(%s) = %v", n, a.Has(n))
		}
	}
	if a.Set("nope", true) || a.Has("nope") {
		t.Error("unknown name accepted")
	}
	if !a.Set(FileStats, false) || a.Stats {
		t.Error("Set false failed")
	}
	if len(ArtifactFiles()) != 11 {
		t.Error("ArtifactFiles changed length")
	}
}

// BenchmarkReadHistory reads a one-hour stats_history.csv (10 operations +
// Aggregated per second, Locust's full column set).
func BenchmarkReadHistory(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(historyHeader)
	for s := range 3600 {
		for op := range 11 {
			name := "Aggregated"
			if op < 10 {
				name = "Operation" + string(rune('A'+op))
			}
			sb.WriteString(strconv.Itoa(1700000000+s) + ",100,POST," + name +
				",12.5,0.1,12,14,15,16,20,25,30,31,32,32,32,4500,3,12,13.25,10,32,120\n")
		}
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := ReadHistory(strings.NewReader(data))
		if err != nil || len(h.Samples) != 3600 {
			b.Fatalf("%d samples, %v", len(h.Samples), err)
		}
	}
}
