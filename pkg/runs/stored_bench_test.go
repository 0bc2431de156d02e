//go:build unix

package runs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/cputime"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
)

// benchRunDir is a stored run of realistic size: server_summary.json and
// psi_series.json of a 1 h run, and a stats.jsonl with 2,000 Locust rows
// and three exports of the run appended (each: server_summary, a
// 40-key trial_summary, 60 phase rows, 10 ladder steps, 12 gates).
func benchRunDir(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	const start = int64(1710237600)
	md := artifact.ServerMetadata{TestName: "resume", Tag: "abc", Start: start, End: start + 3600, SteadyStart: start + 300, SteadyEnd: start + 3300}
	res := harvest.EmptyResult()
	for ts := start; ts <= start+3600; ts += 10 {
		r := float64(ts%97) / 100
		res.Packing.Timeseries = append(res.Packing.Timeseries, harvest.PackingPoint{Timestamp: ts, Busy: 40, Total: 50, Ratio: &r})
	}
	summary, err := artifact.ServerSummaryJSON(md, res)
	if err != nil {
		b.Fatal(err)
	}
	psi, err := artifact.PSISeriesJSON(artifact.NewPSISeries(res, start, start+3600))
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	add := func(r artifact.Row) {
		l, err := r.MarshalLine()
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, string(l))
	}
	ts := artifact.DataTimestamp(start)
	for i := range 2000 {
		add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: "locust_" + fmt.Sprint(i%20),
			Measurements: artifact.Object{{Key: "rps", Value: fmt.Sprint(i)}, {Key: "p50", Value: "12.5"}, {Key: "p99", Value: "80.25"}}})
	}
	for k := range 3 {
		v := fmt.Sprint(k)
		add(artifact.ServerSummaryRow(md, res))
		trial := artifact.Object{}
		for j := range 40 {
			trial = append(trial, artifact.Field{Key: fmt.Sprintf("key_%02d", j), Value: v})
		}
		add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: artifact.MetricTrialSummary, Measurements: trial})
		m := artifact.Object{{Key: "count", Value: "38"}, {Key: "p50_ms", Value: "12.5"}, {Key: "p90_ms", Value: v}, {Key: "p95_ms", Value: "41.25"}, {Key: "max_ms", Value: "77"}}
		for j := range 59 {
			add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: fmt.Sprintf("phase_atelet_restore_%02d", j), Measurements: m})
		}
		add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: "phase_breakdown_summary", Measurements: m})
		for j := 1; j < 10; j++ {
			add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: fmt.Sprintf("ladder_step_%03d", j), Measurements: m})
		}
		add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: "ladder_summary", Measurements: m})
		for j := range 11 {
			add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: fmt.Sprintf("gate_k%02d", j), Measurements: m})
		}
		add(artifact.Row{Timestamp: ts, Tag: "abc", TestName: "resume", Metric: "gate_summary", Measurements: m})
	}
	for name, data := range map[string][]byte{FileServerSummary: summary, FilePSISeries: psi, FileStatsJSONL: []byte(strings.Join(lines, "\n") + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkReadStoredRun reads a stored run of realistic size: its rows
// alone (the trend's read) and all of it (summary, PSI series, rows).
func BenchmarkReadStoredRun(b *testing.B) {
	dir := benchRunDir(b)
	for _, c := range []struct {
		name  string
		parts Part
	}{{"rows", PartRows}, {"all", PartAll}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Now(b)
			for b.Loop() {
				s, err := Dir(dir, c.parts)
				if err != nil || len(s.Problems) > 0 || s.Rows.Trial == nil || len(s.Rows.Phases) != 60 {
					b.Fatalf("%v %v %d", err, s.Problems, len(s.Rows.Phases))
				}
			}
			b.ReportMetric(float64(cputime.Now(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
