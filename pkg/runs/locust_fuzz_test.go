package runs

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
	"testing/iotest"
)

// Seeds live in testdata/fuzz/<FuzzName>/ (committed); the f.Add calls keep
// the spec's examples in every plain `go test` run as well.

func FuzzCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte("\"a\nb\",\"c\"\"d\"\r\n\"ab\"cd,e\r"))
	f.Add([]byte("\uFEFF x , x \n1\n\n\"unterminated"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h1, rows1, err1 := dictRows(bytes.NewReader(data))
		h2, rows2, err2 := dictRows(iotest.OneByteReader(bytes.NewReader(data)))
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(h1, h2) || !reflect.DeepEqual(rows1, rows2) {
			t.Fatalf("result depends on read sizes: %q %q %v / %q %q %v", h1, rows1, err1, h2, rows2, err2)
		}
		if err1 != nil && !errors.Is(err1, ErrCSVInvalidUTF8) && !errors.Is(err1, ErrCSVFieldTooLarge) {
			t.Fatalf("unexpected error kind: %v", err1)
		}
		for _, h := range h1 {
			if PyStrip(h) != h {
				t.Fatalf("header %q not trimmed", h)
			}
		}
		for _, row := range rows1 {
			for k, v := range row {
				if PyStrip(v) != v {
					t.Fatalf("value %q of %q not trimmed", v, k)
				}
			}
		}
	})
}

func FuzzReadUserSamples(f *testing.F) {
	f.Add([]byte(historyHeader+"1700000000,10,,Aggregated,0,0,1,1,1,1,1,1,1,1,1,1,1,0,0,0,0,0,0,0\n"), int64(1700000000), int64(1700000100))
	f.Add([]byte("Timestamp,User Count\n5,nan\n6,inf\n7,1e3\n8,-1\n"), int64(0), int64(10))
	f.Add([]byte("User Count,Timestamp,Name\n1,99999999999999999999,Total\n"), int64(-5), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, start, end int64) {
		h, err := ReadHistory(bytes.NewReader(data))
		if err != nil {
			if h.Samples != nil || h.Observed != nil || h.HasBounds {
				t.Fatalf("error %v with partial result %+v", err, h)
			}
		}
		h2, err2 := ReadHistory(iotest.OneByteReader(bytes.NewReader(data)))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(h.Samples, h2.Samples) || h.First != h2.First || h.Last != h2.Last {
			t.Fatalf("result depends on read sizes")
		}
		for _, s := range h.Samples {
			if math.IsNaN(s.Users) || math.IsInf(s.Users, 0) {
				t.Fatalf("non-finite sample %v", s)
			}
			if !h.HasBounds || s.Timestamp < h.First || s.Timestamp > h.Last {
				t.Fatalf("sample %v outside bounds %d..%d", s, h.First, h.Last)
			}
		}
		for _, u := range h.Observed {
			if !(u > 0) || math.IsInf(u, 0) {
				t.Fatalf("observed %v", u)
			}
		}
		if start > end {
			start, end = end, start
		}
		st := ComputeSteady(h.Samples, start, end)
		if st.Start > st.End || st.Start < start || st.End > end {
			t.Fatalf("window [%d, %d] outside run [%d, %d]", st.Start, st.End, start, end)
		}
		if st.FromSamples {
			found := false
			for _, s := range h.Samples {
				if s.Timestamp == st.Start && s.Users >= SteadyThreshold**st.Peak {
					found = true
				}
			}
			if !found {
				t.Fatalf("steady start %d is not a sample at 90%% of peak", st.Start)
			}
		} else if st.Start != start || st.End != end || st.Why == "" {
			t.Fatalf("fallback %+v is not the run window with a reason", st)
		}
	})
}

func FuzzReadStatsCSV(f *testing.F) {
	f.Add([]byte("Type,Name,Request Count,Failure Count\nPOST,CreateActor,100,2\n,Aggregated,100,2\n"))
	f.Add([]byte("Name,Request Count,Failure Count\nx,1_0,+3\ny,1e3,\nz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := ReadStatsCSV(bytes.NewReader(data))
		if err != nil && ops != nil {
			t.Fatalf("error %v with rows", err)
		}
		for _, o := range ops {
			if o.Name == "" || PyStrip(o.Name) != o.Name || PyStrip(o.Requests) != o.Requests || PyStrip(o.Failures) != o.Failures {
				t.Fatalf("bad row %+v", o)
			}
			if r, fl, err := o.Counts(); err == nil {
				if v, _ := ParsePyInt(o.Requests); v != r {
					t.Fatalf("Counts disagrees with ParsePyInt: %d %d", r, v)
				}
				if v, _ := ParsePyInt(o.Failures); v != fl {
					t.Fatalf("Counts disagrees with ParsePyInt: %d %d", fl, v)
				}
			}
		}
		has, herr := HasDataRows(bytes.NewReader(data))
		if err == nil && len(ops) > 0 && (!has || herr != nil) {
			t.Fatalf("rows found but HasDataRows = %v, %v", has, herr)
		}
	})
}

func FuzzParsePyNumbers(f *testing.F) {
	for _, s := range []string{"12", " -1_000 ", "1e3", "nan", "\u0661\u0662", "0x10", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, ierr := ParsePyInt(s)
		v, ferr := ParsePyFloat(s)
		if ierr == nil || errors.Is(ierr, ErrIntRange) {
			// Every string Python's int() takes, float() takes too.
			if ferr != nil {
				t.Fatalf("int(%q) = %d but float fails: %v", s, i, ferr)
			}
			if ierr == nil && i > -1<<53 && i < 1<<53 && float64(i) != v {
				t.Fatalf("int(%q) = %d, float = %v", s, i, v)
			}
		}
		if ierr != nil && !errors.Is(ierr, ErrNotNumber) && !errors.Is(ierr, ErrIntRange) {
			t.Fatalf("unexpected int error %v", ierr)
		}
	})
}
