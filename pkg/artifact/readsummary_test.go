package artifact

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/harvest"
)

// What ServerSummaryJSON writes, ReadServerSummary reads back into the same
// Result and metadata: writing that again gives the same bytes.
func TestReadServerSummaryRoundTrip(t *testing.T) {
	md := ServerMetadata{TestName: "actor-density", Tag: "c0ffee1", PromURL: "http://prom:9090", Start: 1710237600, End: 1710240585,
		SteadyStart: 1710237900, SteadyEnd: 1710240285, LagS: 70}
	for name, r := range map[string]*harvest.Result{"full": fullResult(), "empty": emptyResult(), "sample": sample()} {
		t.Run(name, func(t *testing.T) {
			b, err := ServerSummaryJSON(md, r)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ReadServerSummary(b)
			if err != nil {
				t.Fatal(err)
			}
			if s.Meta != md {
				t.Errorf("metadata %+v, want %+v", s.Meta, md)
			}
			if len(s.Blocks) != len(harvest.BlockNames()) {
				t.Errorf("blocks %v, want all of %v", s.Blocks, harvest.BlockNames())
			}
			again, err := ServerSummaryJSON(s.Meta, s.Result)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Errorf("written again differs:\n%s\nwant\n%s", again, b)
			}
			if !reflect.DeepEqual(ServerSummaryMeasurements(s.Result), ServerSummaryMeasurements(r)) {
				t.Error("flat measurements differ")
			}
		})
	}
}

// The reference runner's artifact: working_set.ateom is the worker block,
// oom_events is missing (null, and not among the blocks read).
func TestReadServerSummaryReferenceRunner(t *testing.T) {
	doc := `{"metadata":{"test_name":"t","tag":"g","start_ts":10,"end_ts":20},
	"working_set":{"ateom":{"summary":{"min":1,"p50":2,"p90":3,"p95":4,"p99":5,"max":6,"avg":3.5},"count":7,"timeseries":[{"timestamp":15,"total_gb":8,"max_gb":2}]}},
	"snapshots":{"size_p50_mb":12.5,"checkpoints_in_window":9}}`
	s, err := ReadServerSummary([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	w := s.Result.WorkingSet.Worker
	if w.Count == nil || *w.Count != 7 || *w.Summary.P99 != 5 || len(w.Timeseries) != 1 || w.Timeseries[0].TotalGB != 8 {
		t.Errorf("worker block %+v", w)
	}
	if s.Blocks[harvest.BlockOOM] || !s.Blocks[harvest.BlockWorkingSet] || !s.Blocks[harvest.BlockSnapshots] {
		t.Errorf("blocks %v", s.Blocks)
	}
	if s.Result.OOM.Node != nil || s.Result.Snapshots.SizeP90MB != nil || *s.Result.Snapshots.SizeP50MB != 12.5 || *s.Result.Snapshots.CheckpointsInWindow != 9 {
		t.Errorf("values %+v %+v", s.Result.OOM, s.Result.Snapshots)
	}
	if s.Meta.TestName != "t" || s.Meta.End != 20 {
		t.Errorf("metadata %+v", s.Meta)
	}
}

func TestReadServerSummaryErrors(t *testing.T) {
	for _, r := range []struct{ doc, want string }{
		{`{"snapshots":{"checkpoints_in_window":1.5}}`, `snapshots.checkpoints_in_window: "1.5" is not an integer`},
		{`{"cluster_packing":{"summary":{"p50":"x"}}}`, "cluster_packing"},
		{`{"node_psi":{"nodes":"three"}}`, "node_psi.nodes"},
		{`[1,2]`, "server_summary.json"},
		{`null`, "not an object"},
		{`{"metadata":{"start_ts":"soon"}}`, "metadata"},
		{`{"oom_events":{"node":-0.5}}`, "oom_events"},
		{``, "server_summary.json"},
	} {
		if _, err := ReadServerSummary([]byte(r.doc)); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: err %v, want one containing %q", r.doc, err, r.want)
		}
	}
}

// Every block of the engine's table has a reader, and no reader names a
// block the table lacks.
func TestBlockReadersCoverTheTable(t *testing.T) {
	names := harvest.BlockNames()
	for _, n := range names {
		if blockReaders[n] == nil {
			t.Errorf("block %s has no server_summary.json reader", n)
		}
	}
	if len(blockReaders) != len(names) {
		t.Errorf("%d readers for %d blocks %v", len(blockReaders), len(names), names)
	}
}

// A server_summary row reads back into the measurements it was written
// from, through its bytes in stats.jsonl.
func TestReadServerSummaryRowRoundTrip(t *testing.T) {
	md := ServerMetadata{TestName: "actor-density", Tag: "c0ffee1", Start: 1710237600}
	for name, r := range map[string]*harvest.Result{"full": fullResult(), "empty": emptyResult(), "sample": sample()} {
		t.Run(name, func(t *testing.T) {
			line, err := ServerSummaryRow(md, r).MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			row, err := ParseRow(line)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadServerSummaryRow(*row)
			if err != nil {
				t.Fatal(err)
			}
			if want := ServerSummaryValues(r); !reflect.DeepEqual(got, want) {
				t.Errorf("read back %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestReadServerSummaryRowErrors(t *testing.T) {
	good := ServerSummaryRow(ServerMetadata{Start: 1}, fullResult())
	set := func(key string, v any) Row {
		r := good
		r.Measurements = append(Object(nil), good.Measurements...)
		r.Measurements.Set(key, v)
		return r
	}
	countKey, figureKey := "", ""
	for _, m := range ServerSummaryValues(fullResult()) {
		if m.Count && countKey == "" {
			countKey = m.Key
		}
		if !m.Count && figureKey == "" {
			figureKey = m.Key
		}
	}
	missing := good
	missing.Measurements = good.Measurements[1:]
	other := good
	other.Metric = MetricTrialSummary
	for _, c := range []struct {
		name string
		row  Row
		want string
	}{
		{"missing key", missing, good.Measurements[0].Key + ": missing"},
		{"other metric", other, "is not server_summary"},
		{"count not an integer", set(countKey, "1.5"), countKey + `: "1.5" is not a count`},
		{"figure not a number", set(figureKey, "fast"), figureKey + `: "fast" is not a finite number`},
		{"figure NaN", set(figureKey, "NaN"), "is not a finite number"},
		{"number, not a string", set(figureKey, 1.5), "is not a string or null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ReadServerSummaryRow(c.row); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}
