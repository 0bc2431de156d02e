package artifact

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
)

// StoredSummary is a server_summary.json read back into the typed Result it
// was written from: the same type the harvest produces, so that a stored run
// and a harvested one are two sources of one value.
type StoredSummary struct {
	Meta   ServerMetadata
	Result *harvest.Result
	// Blocks names the blocks the file holds (harvest block names); a block
	// it lacks (a reference-runner artifact without oom_events, say) is
	// all-null in Result and missing here.
	Blocks map[string]bool
}

// ReadServerSummary parses server_summary.json as this project writes it and
// as the reference runner wrote it (working_set.ateom is the worker block;
// blocks may be missing). Counts must be integers and values finite numbers
// or null; anything else is an error naming the key.
func ReadServerSummary(data []byte) (*StoredSummary, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("server_summary.json: %w", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("server_summary.json: not an object")
	}
	s := &StoredSummary{Result: harvest.EmptyResult(), Blocks: map[string]bool{}}
	if raw, ok := doc["metadata"]; ok {
		var md RecordedMetadata
		if err := json.Unmarshal(raw, &md); err != nil {
			return nil, fmt.Errorf("server_summary.json metadata: %w", err)
		}
		s.Meta = md.Meta()
	}
	// The blocks in the engine's table order, each by its reader; a block
	// the file lacks (or holds as null) stays all-null.
	for _, b := range harvest.Blocks() {
		raw, ok := doc[b.Name]
		if !ok || string(raw) == "null" {
			continue
		}
		read, ok := blockReaders[b.Name]
		if !ok {
			return nil, fmt.Errorf("server_summary.json %s: no reader for this block", b.Name)
		}
		if err := read(raw, s.Result); err != nil {
			var ke *keyError
			if errors.As(err, &ke) {
				return nil, fmt.Errorf("server_summary.json %s.%s: %w", b.Name, ke.key, ke.err)
			}
			return nil, fmt.Errorf("server_summary.json %s: %w", b.Name, err)
		}
		s.Blocks[b.Name] = true
	}
	return s, nil
}

// RecordedMetadata is the metadata block of server_summary.json as
// recorded: a nil field was not (the reference runner's files, a file cut
// short).
type RecordedMetadata struct {
	TestName    *string `json:"test_name"`
	Tag         *string `json:"tag"`
	PromURL     *string `json:"prom_url"`
	Start       *int64  `json:"start_ts"`
	End         *int64  `json:"end_ts"`
	SteadyStart *int64  `json:"steady_start_ts"`
	SteadyEnd   *int64  `json:"steady_end_ts"`
	LagS        *int64  `json:"atelet_lag_s"`
}

// Meta is the metadata with what was not recorded as zero.
func (m RecordedMetadata) Meta() ServerMetadata {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	num := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return ServerMetadata{TestName: str(m.TestName), Tag: str(m.Tag), PromURL: str(m.PromURL), Start: num(m.Start), End: num(m.End),
		SteadyStart: num(m.SteadyStart), SteadyEnd: num(m.SteadyEnd), LagS: num(m.LagS)}
}

// RunKey is the identity the run's stats.jsonl rows repeat, when the
// metadata recorded it (test_name, tag and start_ts).
func (m RecordedMetadata) RunKey() *RunKey {
	if m.TestName == nil || m.Tag == nil || m.Start == nil {
		return nil
	}
	return &RunKey{Timestamp: DataTimestamp(*m.Start), Tag: *m.Tag, TestName: *m.TestName}
}

// blockReaders decode each block of server_summary.json into the Result,
// keyed by the block table's names (TestBlockReadersCoverTheTable).
var blockReaders = map[string]func(raw json.RawMessage, r *harvest.Result) error{
	harvest.BlockPacking: func(raw json.RawMessage, r *harvest.Result) error {
		var packing struct {
			Summary    summaryJSON `json:"summary"`
			Timeseries []struct {
				Timestamp int64    `json:"timestamp"`
				Busy      float64  `json:"busy_workers"`
				Total     float64  `json:"total_workers"`
				Ratio     *float64 `json:"packing_ratio"`
			} `json:"timeseries"`
		}
		if err := json.Unmarshal(raw, &packing); err != nil {
			return err
		}
		r.Packing.Summary = packing.Summary.summary()
		for _, p := range packing.Timeseries {
			r.Packing.Timeseries = append(r.Packing.Timeseries, harvest.PackingPoint{Timestamp: p.Timestamp, Busy: p.Busy, Total: p.Total, Ratio: p.Ratio})
		}
		return nil
	},
	harvest.BlockNodePSI: func(raw json.RawMessage, r *harvest.Result) error { return readPSI(raw, "nodes", &r.NodePSI) },
	harvest.BlockPodPSI:  func(raw json.RawMessage, r *harvest.Result) error { return readPSI(raw, "pods", &r.PodPSI) },
	harvest.BlockSnapshots: func(raw json.RawMessage, r *harvest.Result) error {
		var snaps map[string]*json.Number
		if err := json.Unmarshal(raw, &snaps); err != nil {
			return err
		}
		for _, f := range r.Snapshots.Fields() {
			n := snaps[f.Key]
			if n == nil {
				continue
			}
			if f.Key == "checkpoints_in_window" || f.Key == "checkpoints_cumulative" {
				i, err := n.Int64()
				if err != nil {
					return &keyError{f.Key, fmt.Errorf("%q is not an integer", n.String())}
				}
				r.Snapshots.Set(f.Key, nil, &i)
				continue
			}
			v, err := finiteNumber(*n)
			if err != nil {
				return &keyError{f.Key, err}
			}
			r.Snapshots.Set(f.Key, &v, nil)
		}
		return nil
	},
	harvest.BlockActiveActors: func(raw json.RawMessage, r *harvest.Result) error {
		var actors struct {
			Summary    summaryJSON `json:"summary"`
			Atelets    *int        `json:"atelets"`
			Timeseries []struct {
				Timestamp     int64   `json:"timestamp"`
				ActiveActors  float64 `json:"active_actors"`
				ActiveAtelets int     `json:"active_atelets"`
			} `json:"timeseries"`
		}
		if err := json.Unmarshal(raw, &actors); err != nil {
			return err
		}
		r.ActiveActors.Summary, r.ActiveActors.Atelets = actors.Summary.summary(), actors.Atelets
		for _, p := range actors.Timeseries {
			r.ActiveActors.Timeseries = append(r.ActiveActors.Timeseries,
				harvest.ActorsPoint{Timestamp: p.Timestamp, ActiveActors: p.ActiveActors, ActiveAtelets: p.ActiveAtelets})
		}
		return nil
	},
	harvest.BlockWorkingSet: func(raw json.RawMessage, r *harvest.Result) error {
		var ws map[string]*struct {
			Summary    summaryJSON `json:"summary"`
			Count      *int        `json:"count"`
			Timeseries []struct {
				Timestamp int64   `json:"timestamp"`
				TotalGB   float64 `json:"total_gb"`
				MaxGB     float64 `json:"max_gb"`
			} `json:"timeseries"`
		}
		if err := json.Unmarshal(raw, &ws); err != nil {
			return err
		}
		if _, ok := ws["worker"]; !ok {
			ws["worker"] = ws["ateom"] // the reference runner's name of the worker block
		}
		for _, name := range harvest.WorkingSetBlocks() {
			src := ws[name]
			if src == nil {
				continue
			}
			dst := r.WorkingSet.Block(name)
			dst.Summary, dst.Count = src.Summary.summary(), src.Count
			for _, p := range src.Timeseries {
				dst.Timeseries = append(dst.Timeseries, harvest.WSPoint{Timestamp: p.Timestamp, TotalGB: p.TotalGB, MaxGB: p.MaxGB})
			}
		}
		return nil
	},
	harvest.BlockOOM: func(raw json.RawMessage, r *harvest.Result) error {
		var oom map[string]*int64
		if err := json.Unmarshal(raw, &oom); err != nil {
			return err
		}
		o := &r.OOM
		for k, dst := range map[string]**int64{"node": &o.Node, "pod": &o.Pod, "worker_restarts": &o.WorkerRestarts,
			"worker_oomkilled_pods": &o.WorkerOOMKilledPods, "evicted": &o.Evicted, "worker_pods_lost": &o.WorkerPodsLost} {
			*dst = oom[k]
		}
		return nil
	},
}

// keyError is a block reader's error at one key of its block.
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.key + ": " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// readPSI decodes a node_psi or pod_psi block: a summary per resource and
// the series count under countKey.
func readPSI(raw json.RawMessage, countKey string, dst *harvest.PSI) error {
	var psi map[string]json.RawMessage
	if err := json.Unmarshal(raw, &psi); err != nil {
		return err
	}
	for _, res := range harvest.PSIResources() {
		var sj summaryJSON
		if raw, ok := psi[res.Key+"_stall_pct"]; ok {
			if err := json.Unmarshal(raw, &sj); err != nil {
				return &keyError{res.Key + "_stall_pct", err}
			}
		}
		dst.Resource(res.Key).Summary = sj.summary()
	}
	if raw, ok := psi[countKey]; ok {
		if err := json.Unmarshal(raw, &dst.Count); err != nil {
			return &keyError{countKey, err}
		}
	}
	return nil
}

// summaryJSON is a percentile summary as written (min, p50, ..., avg).
type summaryJSON struct {
	Min, P50, P90, P95, P99, Max, Avg *float64
}

func (s summaryJSON) summary() percentile.Summary {
	return percentile.Summary{Min: s.Min, P50: s.P50, P90: s.P90, P95: s.P95, P99: s.P99, Max: s.Max, Avg: s.Avg}
}

func finiteNumber(n json.Number) (float64, error) {
	v, err := n.Float64()
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a finite number", n.String())
	}
	return v, nil
}

// ReadServerSummaryRow reads a stats.jsonl server_summary row back into the
// typed measurements it was written from, in the spec's order: every one of
// the flat keys must be there, null or a string holding a finite number
// (an integer for counts). A row of another shape is an error naming the
// key, so that a reader can fall back to server_summary.json.
func ReadServerSummaryRow(r Row) ([]Measurement, error) {
	if r.Metric != MetricServerSummary {
		return nil, fmt.Errorf("row metric %q is not %s", r.Metric, MetricServerSummary)
	}
	out := ServerSummaryValues(harvest.EmptyResult())
	for j := range out {
		m := &out[j]
		v, ok := r.Measurements.Get(m.Key)
		if !ok {
			return nil, fmt.Errorf("%s row: %s: missing", MetricServerSummary, m.Key)
		}
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s row: %s: %T is not a string or null", MetricServerSummary, m.Key, v)
		}
		if m.Count {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s row: %s: %q is not a count", MetricServerSummary, m.Key, s)
			}
			m.Int = &n
			continue
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s row: %s: %q is not a finite number", MetricServerSummary, m.Key, s)
		}
		m.Float = &x
	}
	return out, nil
}
