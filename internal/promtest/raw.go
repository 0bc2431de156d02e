package promtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
)

// RawSample is one stored sample; TMs is milliseconds since the epoch.
type RawSample struct {
	TMs int64
	V   float64
}

// RawSeries is one stored series; Labels include __name__.
type RawSeries struct {
	Labels  map[string]string
	Samples []RawSample
}

// Raw reads the stored samples of selector with from <= t <= to (Unix
// seconds). On Prometheus it evaluates the range selector
// `selector[<to-from>s]` at `to` (2.42 range selectors are closed on both
// ends); on VictoriaMetrics it uses /api/v1/export. Series come back sorted
// by their label set.
func (s *Server) Raw(ctx context.Context, selector string, from, to int64) ([]RawSeries, error) {
	var out []RawSeries
	var err error
	if s.Kind == "victoria-metrics" {
		out, err = s.rawVM(ctx, selector, from, to)
	} else {
		out, err = s.rawProm(ctx, selector, from, to)
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return labelsKey(out[i].Labels) < labelsKey(out[j].Labels) })
	return out, nil
}

func labelsKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := make([]byte, 0, 256)
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, m[k])
		b = append(b, ',')
	}
	return string(b)
}

func (s *Server) get(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("building request %s: %w", path, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("requesting %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("requesting %s?%s: %s: %s", path, q.Encode(), resp.Status, b)
	}
	return resp, nil
}

func (s *Server) rawProm(ctx context.Context, selector string, from, to int64) ([]RawSeries, error) {
	rng := to - from
	if rng < 1 {
		rng = 1
	}
	q := url.Values{"query": {fmt.Sprintf("%s[%ds]", selector, rng)}, "time": {strconv.FormatInt(to, 10)}}
	resp, err := s.get(ctx, "/api/v1/query", q)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string    `json:"metric"`
				Values [][2]json.RawMessage `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("decoding raw read of %s: %w", selector, err)
	}
	if body.Status != "success" || body.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("raw read of %s: status %q, type %q: %s", selector, body.Status, body.Data.ResultType, body.Error)
	}
	out := make([]RawSeries, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		rs := RawSeries{Labels: r.Metric, Samples: make([]RawSample, 0, len(r.Values))}
		for _, v := range r.Values {
			var ts float64
			var val string
			if err := json.Unmarshal(v[0], &ts); err != nil {
				return nil, fmt.Errorf("decoding timestamp of %s: %w", selector, err)
			}
			if err := json.Unmarshal(v[1], &val); err != nil {
				return nil, fmt.Errorf("decoding value of %s: %w", selector, err)
			}
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("parsing value %q of %s: %w", val, selector, err)
			}
			rs.Samples = append(rs.Samples, RawSample{TMs: int64(math.Round(ts * 1000)), V: f})
		}
		out = append(out, rs)
	}
	return out, nil
}

func (s *Server) rawVM(ctx context.Context, selector string, from, to int64) ([]RawSeries, error) {
	q := url.Values{"match[]": {selector}, "start": {strconv.FormatInt(from, 10)}, "end": {strconv.FormatInt(to, 10)}}
	resp, err := s.get(ctx, "/api/v1/export", q)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []RawSeries
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var line struct {
			Metric     map[string]string `json:"metric"`
			Values     []json.RawMessage `json:"values"`
			Timestamps []int64           `json:"timestamps"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("decoding export of %s: %w", selector, err)
		}
		rs := RawSeries{Labels: line.Metric}
		for i, raw := range line.Values {
			var f float64
			if err := json.Unmarshal(raw, &f); err != nil {
				var str string // VictoriaMetrics writes NaN/Inf as strings
				if err2 := json.Unmarshal(raw, &str); err2 != nil {
					return nil, fmt.Errorf("decoding value %s of %s: %w", raw, selector, err)
				}
				if f, err = strconv.ParseFloat(str, 64); err != nil {
					return nil, fmt.Errorf("parsing value %q of %s: %w", str, selector, err)
				}
			}
			rs.Samples = append(rs.Samples, RawSample{TMs: line.Timestamps[i], V: f})
		}
		// The export is not guaranteed to be time-ordered across parts.
		sort.SliceStable(rs.Samples, func(i, j int) bool { return rs.Samples[i].TMs < rs.Samples[j].TMs })
		out = append(out, rs)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading export of %s: %w", selector, err)
	}
	return out, nil
}

// promResult decodes /api/v1/query and /api/v1/query_range answers (vector,
// matrix or scalar) into RawSeries.
func (s *Server) promResult(ctx context.Context, path string, q url.Values) ([]RawSeries, error) {
	resp, err := s.get(ctx, path, q)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("decoding answer to %s: %w", q.Get("query"), err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q.Get("query"), body.Error)
	}
	point := func(p [2]json.RawMessage) (RawSample, error) {
		var ts float64
		var val string
		if err := json.Unmarshal(p[0], &ts); err != nil {
			return RawSample{}, err
		}
		if err := json.Unmarshal(p[1], &val); err != nil {
			return RawSample{}, err
		}
		f, err := strconv.ParseFloat(val, 64)
		return RawSample{TMs: int64(math.Round(ts * 1000)), V: f}, err
	}
	var out []RawSeries
	switch body.Data.ResultType {
	case "scalar":
		var p [2]json.RawMessage
		if err := json.Unmarshal(body.Data.Result, &p); err != nil {
			return nil, fmt.Errorf("decoding scalar: %w", err)
		}
		rs, err := point(p)
		if err != nil {
			return nil, fmt.Errorf("decoding scalar: %w", err)
		}
		out = []RawSeries{{Labels: map[string]string{}, Samples: []RawSample{rs}}}
	case "vector", "matrix":
		var items []struct {
			Metric map[string]string    `json:"metric"`
			Value  *[2]json.RawMessage  `json:"value"`
			Values [][2]json.RawMessage `json:"values"`
		}
		if err := json.Unmarshal(body.Data.Result, &items); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", body.Data.ResultType, err)
		}
		for _, it := range items {
			rs := RawSeries{Labels: it.Metric}
			if rs.Labels == nil {
				rs.Labels = map[string]string{}
			}
			pts := it.Values
			if it.Value != nil {
				pts = append(pts, *it.Value)
			}
			for _, p := range pts {
				smp, err := point(p)
				if err != nil {
					return nil, fmt.Errorf("decoding sample: %w", err)
				}
				rs.Samples = append(rs.Samples, smp)
			}
			out = append(out, rs)
		}
	default:
		return nil, fmt.Errorf("query %s: unexpected result type %q", q.Get("query"), body.Data.ResultType)
	}
	sort.Slice(out, func(i, j int) bool { return labelsKey(out[i].Labels) < labelsKey(out[j].Labels) })
	return out, nil
}

// Query evaluates an instant query at t (Unix seconds).
func (s *Server) Query(ctx context.Context, query string, t int64) ([]RawSeries, error) {
	return s.promResult(ctx, "/api/v1/query", url.Values{"query": {query}, "time": {strconv.FormatInt(t, 10)}})
}

// QueryRange evaluates a range query over [start, end] at step seconds.
func (s *Server) QueryRange(ctx context.Context, query string, start, end, step int64) ([]RawSeries, error) {
	return s.promResult(ctx, "/api/v1/query_range", url.Values{"query": {query},
		"start": {strconv.FormatInt(start, 10)}, "end": {strconv.FormatInt(end, 10)}, "step": {strconv.FormatInt(step, 10)}})
}
