package simrun

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Locust operations: Type, Name, requests per user per second, failure
// probability, median response time (ms), log-normal spread.
var locustOps = []struct {
	typ, name   string
	perUser     float64
	fail        float64
	median, sig float64
}{
	{"grpc", "ResumeActorFirstResume", 1.0 / 900, 0.018, 840, 0.55},
	{"fs", "DurDirWrite", 0.45, 0.0021, 34, 0.7},
	{"GET", "HTTPGet", 0.18, 0.0085, 11.5, 0.45},
}

var pctCols = []struct {
	col string
	z   float64 // standard-normal quantile
}{
	{"50%", 0}, {"66%", 0.412}, {"75%", 0.674}, {"80%", 0.842}, {"90%", 1.2816}, {"95%", 1.6449},
	{"98%", 2.0537}, {"99%", 2.3263}, {"99.9%", 3.0902}, {"99.99%", 3.719}, {"100%", 4.2},
}

type opAcc struct {
	req, fail       int64
	sumMS, min, max float64
}

func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Trunc(v) == v && math.Abs(v) < 1e16 {
		s += ".0"
	}
	return s
}

// writeLocust writes stats_history.csv (unless the scenario omits it) and
// stats.csv, and fills t.Users and t.Stats.
func writeLocust(w *world, dir string, t *Truth) error {
	sc := w.sc
	r := rngFor(sc.Seed, "locust")
	acc := make([]opAcc, len(locustOps)+1)
	for i := range acc {
		acc[i].min = math.Inf(1)
	}
	var hist *csv.Writer
	var hf *os.File
	if !sc.NoHistory {
		var err error
		hf, err = os.Create(filepath.Join(dir, "stats_history.csv")) // #nosec G304 -- reads a path the operator or the test harness named
		if err != nil {
			return fmt.Errorf("creating stats_history.csv: %w", err)
		}
		defer hf.Close()
		hist = csv.NewWriter(bufio.NewWriterSize(hf, 1<<20))
		head := []string{"Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s"}
		for _, p := range pctCols {
			head = append(head, p.col)
		}
		head = append(head, "Total Request Count", "Total Failure Count", "Total Median Response Time",
			"Total Average Response Time", "Total Min Response Time", "Total Max Response Time", "Total Average Content Size")
		_ = hist.Write(head) // csv.Writer keeps the first error for Flush
	}
	pctRow := func(median, sig float64, n int64) []string {
		out := make([]string, len(pctCols))
		prev := 0
		for i, p := range pctCols {
			if n == 0 {
				out[i] = "N/A"
				continue
			}
			v := int(math.Round(median * math.Exp(sig*p.z) * lognormal(r, 0.05)))
			prev = max(prev, v) // percentiles never decrease
			out[i] = strconv.Itoa(prev)
		}
		return out
	}
	prevUsers := 0
	for ts := w.start; ts <= w.end; ts++ {
		u := w.usersAt(ts)
		t.Users = append(t.Users, UserSample{T: ts, Users: float64(u)})
		var rows [][]string
		var secReq, secFail int64
		for i, op := range locustOps {
			lambda := float64(u) * op.perUser
			if i == 0 && u > prevUsers {
				lambda += float64(u - prevUsers)
			}
			n := int64(poisson(r, lambda))
			f := int64(poisson(r, float64(n)*op.fail))
			if f > n {
				f = n
			}
			a := &acc[i]
			for k := int64(0); k < n && k < 50; k++ { // response-time extremes from a bounded draw
				v := op.median * lognormal(r, op.sig)
				a.min, a.max = math.Min(a.min, v), math.Max(a.max, v)
			}
			a.req += n
			a.fail += f
			a.sumMS += float64(n) * op.median * math.Exp(op.sig*op.sig/2)
			secReq += n
			secFail += f
			if hist != nil {
				rows = append(rows, histRow(ts, u, op.typ, op.name, n, f, a, op.median, pctRow(op.median, op.sig, a.req)))
			}
		}
		ag := &acc[len(locustOps)]
		ag.req += secReq
		ag.fail += secFail
		if hist != nil {
			sum := 0.0
			for i := range locustOps {
				sum += acc[i].sumMS
			}
			ag.sumMS = sum
			for i := range locustOps {
				ag.min, ag.max = math.Min(ag.min, acc[i].min), math.Max(ag.max, acc[i].max)
			}
			rows = append(rows, histRow(ts, u, "", "Aggregated", secReq, secFail, ag, 30, pctRow(30, 1.6, ag.req)))
			for _, row := range rows {
				_ = hist.Write(row)
			}
		}
		prevUsers = u
	}
	if hist != nil {
		hist.Flush()
		if err := hist.Error(); err != nil {
			return fmt.Errorf("writing stats_history.csv: %w", err)
		}
		if err := hf.Close(); err != nil {
			return fmt.Errorf("closing stats_history.csv: %w", err)
		}
	}

	f, err := os.Create(filepath.Join(dir, "stats.csv")) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return fmt.Errorf("creating stats.csv: %w", err)
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	head := []string{"Type", "Name", "Request Count", "Failure Count", "Median Response Time", "Average Response Time",
		"Min Response Time", "Max Response Time", "Average Content Size", "Requests/s", "Failures/s"}
	for _, p := range pctCols {
		head = append(head, p.col)
	}
	_ = cw.Write(head) // csv.Writer keeps the first error for Flush
	dur := float64(w.end - w.start)
	var total opAcc
	total.min = math.Inf(1)
	for i, op := range locustOps {
		a := acc[i]
		t.Stats = append(t.Stats, OpStats{Type: op.typ, Name: op.name, Requests: a.req, Failures: a.fail})
		_ = cw.Write(statsRow(op.typ, op.name, a, dur, op.median, pctRow(op.median, op.sig, a.req)))
		total.req += a.req
		total.fail += a.fail
		total.sumMS += a.sumMS
		total.min, total.max = math.Min(total.min, a.min), math.Max(total.max, a.max)
	}
	t.Stats = append(t.Stats, OpStats{Name: "Aggregated", Requests: total.req, Failures: total.fail})
	_ = cw.Write(statsRow("", "Aggregated", total, dur, 30, pctRow(30, 1.6, total.req)))
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing stats.csv: %w", err)
	}
	return f.Close()
}

func avgMS(a *opAcc) string {
	if a.req == 0 {
		return "0.0"
	}
	return pyFloat(math.Round(a.sumMS/float64(a.req)*1000) / 1000)
}

func minMax(a *opAcc) (string, string) {
	if a.req == 0 || math.IsInf(a.min, 0) {
		return "0", "0"
	}
	return strconv.Itoa(int(math.Floor(a.min))), strconv.Itoa(int(math.Ceil(a.max)))
}

func histRow(ts int64, users int, typ, name string, n, f int64, a *opAcc, median float64, pcts []string) []string {
	mn, mx := minMax(a)
	med := "0"
	if a.req > 0 {
		med = strconv.Itoa(int(math.Round(median)))
	}
	row := []string{strconv.FormatInt(ts, 10), strconv.Itoa(users), typ, name, pyFloat(float64(n)), pyFloat(float64(f))}
	row = append(row, pcts...)
	return append(row, strconv.FormatInt(a.req, 10), strconv.FormatInt(a.fail, 10), med, avgMS(a), mn, mx, "0.0")
}

func statsRow(typ, name string, a opAcc, dur, median float64, pcts []string) []string {
	mn, mx := minMax(&a)
	med := "0"
	if a.req > 0 {
		med = strconv.Itoa(int(math.Round(median)))
	}
	row := []string{typ, name, strconv.FormatInt(a.req, 10), strconv.FormatInt(a.fail, 10), med, avgMS(&a), mn, mx, "0.0",
		pyFloat(math.Round(float64(a.req)/dur*1e4) / 1e4), pyFloat(math.Round(float64(a.fail)/dur*1e4) / 1e4)}
	return append(row, pcts...)
}

// RunInfo is the content of run.json.
type RunInfo struct {
	TestName string `json:"test_name"`
	Tag      string `json:"tag"`
	StartTS  int64  `json:"start_ts"`
	EndTS    int64  `json:"end_ts"`
	Scenario string `json:"scenario"`
	LagS     int64  `json:"lag_s"`
}

func writeRunJSON(sc Scenario, dir string) error {
	b, err := json.MarshalIndent(RunInfo{TestName: sc.TestName, Tag: sc.Tag, StartTS: sc.Start, EndTS: sc.End(), Scenario: sc.Name, LagS: sc.LagS}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding run.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), append(b, '\n'), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return fmt.Errorf("writing run.json: %w", err)
	}
	return nil
}
