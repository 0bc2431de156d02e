package promql_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/promql"
)

// memTransport answers in memory, so benchmarks measure this package
// (request building, the v1 decoding, conversion) rather than loopback TCP.
type memTransport func(r *http.Request) string

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return m.withStatus(http.StatusOK, r)
}

func (m memTransport) withStatus(status int, r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.ParseForm()
	}
	body := countAnswer
	if !strings.HasPrefix(r.Form.Get("query"), "count(") { // a long read's series count
		body = m(r)
	}
	return &http.Response{
		StatusCode:    status,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}, nil
}

// countAnswer is what the benchmarks' Prometheus answers to the series
// count a read longer than an hour sends first.
const countAnswer = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"500"]}]}}`

// memClient reads m; its series budget lets a 500-series answer of 720
// points go out whole, so the decode benchmarks time one answer.
func memClient(b *testing.B, m memTransport) *promql.Client {
	b.Helper()
	c, err := promql.New(promql.Config{URL: "http://prometheus.invalid:9090", HTTPClient: &http.Client{Transport: m}, MaxSeriesPoints: 10_000_000})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// bigMatrix renders a matrix answer of series x points with realistic
// labels and values.
func bigMatrix(series, points int) string {
	var buf bytes.Buffer
	buf.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for s := range series {
		if s > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"metric":{"__name__":"container_memory_working_set_bytes","container":"ateom","instance":"10.0.%d.%d:10250","namespace":"benchmark-workloads","pod":"benchmark-ateom-%05d"},"values":[`, s/250, s%250, s)
		for p := range points {
			if p > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("[")
			buf.WriteString(strconv.Itoa(1700000000 + 10*p))
			buf.WriteString(`,"`)
			buf.WriteString(strconv.FormatFloat(1.5e9+float64(s*1000+p)*4096.25, 'f', -1, 64))
			buf.WriteString(`"]`)
		}
		buf.WriteString("]}")
	}
	buf.WriteString("]}}")
	return buf.String()
}

// BenchmarkDecodeMatrix: one range answer of 500 series x 720 points (a 2 h
// run at 10 s over 500 worker pods), decoded to []Series.
func BenchmarkDecodeMatrix(b *testing.B) {
	body := bigMatrix(500, 720)
	c := memClient(b, func(*http.Request) string { return body })
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := c.Range(context.Background(), "q", 1700000000, 1700000000+7190, 10)
		if err != nil || len(got) != 500 || len(got[0].Samples) != 720 {
			b.Fatalf("%d series, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(500*720), "samples/op")
}

// BenchmarkDecodeMatrixSplit is the same answer fetched in 8 chunks (the
// join's cost on top of decoding).
func BenchmarkDecodeMatrixSplit(b *testing.B) {
	bodies := map[int64]string{}
	for start := int64(1700000000); start < 1700000000+7200; start += 900 {
		bodies[start] = shiftedMatrix(500, 90, start)
	}
	c, err := promql.New(promql.Config{URL: "http://prometheus.invalid:9090", MaxPoints: 90, MaxSeriesPoints: 10_000_000,
		HTTPClient: &http.Client{Transport: memTransport(func(r *http.Request) string {
			start, _ := strconv.ParseInt(r.Form.Get("start"), 10, 64)
			return bodies[start]
		})}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := c.Range(context.Background(), "q", 1700000000, 1700000000+7190, 10)
		if err != nil || len(got) != 500 || len(got[0].Samples) != 720 {
			b.Fatalf("%d series, %v", len(got), err)
		}
	}
}

// BenchmarkDecodeMatrixUnsplit is BenchmarkDecodeMatrixSplit's answer in one
// request, for the ratio.
func BenchmarkDecodeMatrixUnsplit(b *testing.B) {
	body := shiftedMatrix(500, 720, 1700000000)
	c := memClient(b, func(*http.Request) string { return body })
	b.ReportAllocs()
	for b.Loop() {
		got, err := c.Range(context.Background(), "q", 1700000000, 1700000000+7190, 10)
		if err != nil || len(got) != 500 || len(got[0].Samples) != 720 {
			b.Fatalf("%d series, %v", len(got), err)
		}
	}
}

func shiftedMatrix(series, points int, start int64) string {
	var buf bytes.Buffer
	buf.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for s := range series {
		if s > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"metric":{"__name__":"w","pod":"benchmark-ateom-%05d"},"values":[`, s)
		for p := range points {
			if p > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, `[%d,"%d"]`, start+int64(10*p), p)
		}
		buf.WriteString("]}")
	}
	buf.WriteString("]}}")
	return buf.String()
}

// growthBodies prepares the answers of a WindowGrowth over n series (one
// histogram family of 3 names x 20 buckets per atelet) where one atelet in
// 50 restarted.
func growthBodies(atelets int) (atA, atB, resetsByName map[string]string, raw string) {
	resetsByName = map[string]string{}
	les := []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "15", "20", "25", "30", "40", "45", "50", "60", "+Inf"}
	type ser struct {
		ls        map[string]string
		restarted bool
	}
	var all []ser
	for a := range atelets {
		inst := fmt.Sprintf("10.1.%d.%d:9090", a/250, a%250)
		base := map[string]string{"instance": inst, "job": "atelet", "ate_snapshot_phase": "total"}
		for _, le := range les {
			ls := map[string]string{"__name__": "ate_actor_restore_duration_seconds_bucket", "le": le}
			for k, v := range base {
				ls[k] = v
			}
			all = append(all, ser{ls, a%50 == 0})
		}
		for _, n := range []string{"ate_actor_restore_duration_seconds_sum", "ate_actor_restore_duration_seconds_count"} {
			ls := map[string]string{"__name__": n}
			for k, v := range base {
				ls[k] = v
			}
			all = append(all, ser{ls, a%50 == 0})
		}
	}
	var va, vb []promfake.Stream
	resets := map[string][]promfake.Stream{}
	var rawS []promfake.Stream
	for _, s := range all {
		va = append(va, promfake.Stream{Labels: s.ls, Points: []promfake.Point{{T: 1000, V: "100"}}})
		vb = append(vb, promfake.Stream{Labels: s.ls, Points: []promfake.Point{{T: 4600, V: "250"}}})
		noName := map[string]string{}
		for k, v := range s.ls {
			if k != "__name__" {
				noName[k] = v
			}
		}
		r := "0"
		if s.restarted {
			r = "1"
			var pts []promfake.Point
			for t := 700; t <= 4600; t += 15 {
				v := 100 + (t-700)/15
				if t > 3000 {
					v = (t - 3000) / 15
				}
				pts = append(pts, promfake.Point{T: float64(t), V: strconv.Itoa(v)})
			}
			rawS = append(rawS, promfake.Stream{Labels: s.ls, Points: pts})
		}
		resets[s.ls["__name__"]] = append(resets[s.ls["__name__"]], promfake.Stream{Labels: noName, Points: []promfake.Point{{T: 4600, V: r}}})
	}
	for n, st := range resets {
		resetsByName[n] = promfake.Success("vector", promfake.Vector(st...))
	}
	return map[string]string{"": promfake.Success("vector", promfake.Vector(va...))},
		map[string]string{"": promfake.Success("vector", promfake.Vector(vb...))},
		resetsByName, promfake.Success("matrix", promfake.Matrix(rawS...))
}

// BenchmarkWindowGrowth: one histogram family (20 buckets + _sum + _count)
// over 500 atelets = 11,000 series, 10 atelets restarted (220 candidates).
func BenchmarkWindowGrowth(b *testing.B) {
	atA, atB, resets, raw := growthBodies(500)
	c := memClient(b, func(r *http.Request) string {
		q := r.Form.Get("query")
		switch {
		case strings.HasPrefix(q, "resets("):
			for n, body := range resets {
				if strings.Contains(q, `__name__="`+n+`"`) {
					return body
				}
			}
			panic("unexpected resets query " + q)
		case strings.Contains(q, "["):
			return raw
		case r.Form.Get("time") == "1000":
			return atA[""]
		default:
			return atB[""]
		}
	})
	sel := `{__name__=~"ate_actor_restore_duration_seconds_(bucket|sum|count)", ate_snapshot_phase="total"}`
	b.ReportAllocs()
	for b.Loop() {
		g, err := c.WindowGrowth(context.Background(), sel, 1000, 4600)
		if err != nil {
			b.Fatal(err)
		}
		if len(g.Series) != 11000 || g.Restarted != 220 {
			b.Fatalf("%d series, %d restarted", len(g.Series), g.Restarted)
		}
	}
}
