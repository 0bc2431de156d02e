package runs

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// A Locust CSV cut mid-line (an interrupted copy or upload) is unreadable
// as a whole: its last row would parse as a plausible row with a wrong
// number. A file ending in "\n" or "\r" (Python's "\r\n"), and an empty
// file, are complete.
func TestHalfWrittenCSVIsUnreadable(t *testing.T) {
	history := "Timestamp,User Count,Name\n1,10,Aggregated\n2,20,Aggregated\n"
	stats := "Type,Name,Request Count,Failure Count\nGET,a,100,2\n,Aggregated,893,7\n"
	tests := []struct {
		name string
		in   string
		read func(string) error
		cut  bool
	}{
		{"history complete", history, readHistory, false},
		{"history with CRLF", strings.ReplaceAll(history, "\n", "\r\n"), readHistory, false},
		{"history cut inside a count", history[:len(history)-13], readHistory, true},
		{"history cut after a comma", history[:len(history)-12], readHistory, true},
		{"history without its last line break", strings.TrimSuffix(history, "\n"), readHistory, true},
		{"empty history", "", readHistory, false},
		{"stats complete", stats, readStats, false},
		{"stats cut inside the Aggregated failure count", stats[:len(stats)-2], readStats, true},
		{"stats header only, cut", "Type,Name,Req", readStats, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(tc.in)
			if tc.cut != errors.Is(err, ErrHalfWritten) {
				t.Fatalf("err %v, half-written %v", err, tc.cut)
			}
			if !tc.cut && err != nil {
				t.Fatal(err)
			}
		})
	}
}

func readHistory(s string) error {
	h, err := ReadHistory(iotest.OneByteReader(strings.NewReader(s)))
	if err != nil && (h.Samples != nil || h.Observed != nil || h.HasBounds) {
		return errors.New("partial history kept")
	}
	return err
}

func readStats(s string) error {
	rows, err := ReadStatsCSV(strings.NewReader(s))
	if err != nil && rows != nil {
		return errors.New("partial rows kept")
	}
	return err
}
