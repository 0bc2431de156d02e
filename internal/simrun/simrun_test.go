package simrun

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	genRoot string
	genMu   sync.Mutex
	gens    = map[string]*Truth{}
)

func TestMain(m *testing.M) {
	var err error
	genRoot, err = os.MkdirTemp("", "simrun-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(genRoot)
	os.Exit(code)
}

// generated returns a scenario generated once per test binary.
func generated(t testing.TB, name string) (*Truth, string) {
	t.Helper()
	genMu.Lock()
	defer genMu.Unlock()
	dir := filepath.Join(genRoot, name)
	if tr, ok := gens[name]; ok {
		return tr, dir
	}
	sc, ok := ByName(name)
	if !ok {
		t.Fatalf("no scenario %q", name)
	}
	tr, err := Generate(sc, dir)
	if err != nil {
		t.Fatalf("generating %s: %v", name, err)
	}
	gens[name] = tr
	return tr, dir
}

func smallScenarios() []string {
	var out []string
	for _, s := range Scenarios() {
		if !s.Lean {
			out = append(out, s.Name)
		}
	}
	return out
}

func TestScenarioNames(t *testing.T) {
	want := []string{"demo", "ladder", "ladder-steps", "large", "no-atelet", "no-history", "redeploy", "steady"}
	var got []string
	for _, s := range Scenarios() {
		got = append(got, s.Name)
		if err := s.validate(); err != nil {
			t.Errorf("scenario %s invalid: %v", s.Name, err)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("scenarios %v, want %v", got, want)
	}
	if _, ok := ByName("nope"); ok {
		t.Error("ByName found a scenario that does not exist")
	}
	t.Logf("%d scenarios", len(got))
}

func TestValidateRejects(t *testing.T) {
	ok, _ := ByName("steady")
	cases := map[string]func(s *Scenario){
		"no load":           func(s *Scenario) { s.Load = nil },
		"zero scrape":       func(s *Scenario) { s.ScrapeS = 0 },
		"no nodes":          func(s *Scenario) { s.NodePods = nil },
		"capacity":          func(s *Scenario) { s.PodCapacity = 0 },
		"direct redeploy":   func(s *Scenario) { s.AteapiDirect, s.Redeploy = true, &Redeploy{AtS: 10, DownS: 1, FrozenS: 5} },
		"restart node":      func(s *Scenario) { s.AteletRestart = &AteletRestart{Node: 9} },
		"oom kind":          func(s *Scenario) { s.OOMs = []OOMSpec{{Kind: "disk"}} },
		"negative duration": func(s *Scenario) { s.Load = []LoadPhase{{DurS: -5, To: 3}} },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			s := ok
			s.OOMs = nil
			mut(&s)
			if _, err := Generate(s, t.TempDir()); err == nil {
				t.Fatal("Generate accepted an invalid scenario")
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	for _, name := range []string{"steady", "ladder"} {
		t.Run(name, func(t *testing.T) {
			sc, _ := ByName(name)
			_, dirA := generated(t, name)
			dirB := t.TempDir()
			if _, err := Generate(sc, dirB); err != nil {
				t.Fatal(err)
			}
			files := []string{OMFile, StatsFile, RunFile, HistoryFile}
			for _, f := range files {
				a, errA := os.ReadFile(filepath.Join(dirA, f))
				b, errB := os.ReadFile(filepath.Join(dirB, f))
				if errA != nil || errB != nil {
					t.Fatalf("reading %s: %v %v", f, errA, errB)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs between two runs with the same seed", f)
				}
			}
			sc.Seed++
			dirC := t.TempDir()
			if _, err := Generate(sc, dirC); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(filepath.Join(dirA, OMFile))
			c, _ := os.ReadFile(filepath.Join(dirC, OMFile))
			if bytes.Equal(a, c) {
				t.Error("another seed wrote the same metrics")
			}
		})
	}
}

// splitSample splits `name{labels} value ts` into [line, name, {labels},
// value, ts] (a regexp is too slow under -race for a million lines).
func splitSample(line string) []string {
	j := strings.LastIndexByte(line, ' ')
	if j < 0 {
		return nil
	}
	i := strings.LastIndexByte(line[:j], ' ')
	if i < 0 {
		return nil
	}
	head := line[:i]
	name, labels := head, ""
	if k := strings.IndexByte(head, '{'); k >= 0 {
		if !strings.HasSuffix(head, "}") {
			return nil
		}
		name, labels = head[:k], head[k:]
	}
	if name == "" || strings.ContainsAny(name, " {}\"") {
		return nil
	}
	return []string{line, name, labels, line[i+1 : j], line[j+1:]}
}

// TestOpenMetricsStructure checks the file the way the OpenMetrics format
// requires: # TYPE before a family's samples, families contiguous, each
// series strictly time-ordered, integer-second timestamps, # EOF last; and
// that the file holds exactly the exported truth.
func TestOpenMetricsStructure(t *testing.T) {
	for _, name := range smallScenarios() {
		t.Run(name, func(t *testing.T) {
			tr, dir := generated(t, name)
			f, err := os.Open(filepath.Join(dir, OMFile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			families := map[string]string{}
			var fam, typ, last string
			lastTS := map[string]int64{}
			samples, lines := 0, 0
			for sc.Scan() {
				line := sc.Text()
				lines++
				if last == "# EOF" {
					t.Fatalf("line after # EOF: %q", line)
				}
				last = line
				if strings.HasPrefix(line, "# TYPE ") {
					parts := strings.Fields(line)
					if _, dup := families[parts[2]]; dup {
						t.Fatalf("family %s is not contiguous", parts[2])
					}
					fam, typ = parts[2], parts[3]
					families[fam] = typ
					continue
				}
				if line == "# EOF" {
					continue
				}
				m := splitSample(line)
				if m == nil {
					t.Fatalf("malformed line %d: %q", lines, line)
				}
				var okName bool
				switch typ {
				case "counter":
					okName = m[1] == fam+"_total"
				case "gauge":
					okName = m[1] == fam
				case "histogram":
					okName = m[1] == fam+"_bucket" || m[1] == fam+"_sum" || m[1] == fam+"_count"
				}
				if !okName {
					t.Fatalf("sample %s outside its family %s (%s)", m[1], fam, typ)
				}
				ts, err := strconv.ParseInt(m[4], 10, 64)
				if err != nil {
					t.Fatalf("timestamp %q is not whole seconds", m[4])
				}
				if _, err := strconv.ParseFloat(m[3], 64); err != nil {
					t.Fatalf("value %q: %v", m[3], err)
				}
				key := m[1] + m[2]
				if p, ok := lastTS[key]; ok && ts <= p {
					t.Fatalf("series %s not time-ordered at %d", key, ts)
				}
				lastTS[key] = ts
				samples++
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if last != "# EOF" {
				t.Fatalf("file does not end with # EOF")
			}
			want := 0
			for _, e := range tr.Exported {
				want += len(e.Samples)
			}
			if samples != want || len(lastTS) != len(tr.Exported) {
				t.Fatalf("file holds %d samples in %d series, truth %d in %d", samples, len(lastTS), want, len(tr.Exported))
			}
			t.Logf("%s: %d families, %d series, %d samples, %d bytes", name, len(families), len(lastTS), samples, tr.OMBytes)
		})
	}
}

var promtoolSamples = regexp.MustCompile(`(?m)^[0-9A-Z]{26}\s+\d+\s+\d+\s+\S+\s+(\d+)\s+`)

// TestPromtoolAccepts backfills every scenario with the real promtool and
// checks that no sample was dropped (out-of-order samples would be).
func TestPromtoolAccepts(t *testing.T) {
	// promtest.PromtoolBin's lookup (promtest imports simrun).
	promtool := os.Getenv("PROMTOOL_BIN")
	if promtool == "" {
		var err error
		if promtool, err = exec.LookPath("promtool"); err != nil {
			t.Fatalf("promtool is required: apt-get install -y --no-install-recommends prometheus, or set PROMTOOL_BIN (%v)", err)
		}
	}
	for _, name := range smallScenarios() {
		t.Run(name, func(t *testing.T) {
			tr, dir := generated(t, name)
			out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", filepath.Join(dir, OMFile), t.TempDir()).CombinedOutput()
			if err != nil {
				t.Fatalf("promtool rejected %s: %v\n%s", name, err, out)
			}
			got := 0
			for _, m := range promtoolSamples.FindAllStringSubmatch(string(out), -1) {
				n, _ := strconv.Atoi(m[1])
				got += n
			}
			want := 0
			for _, e := range tr.Exported {
				want += len(e.Samples)
			}
			if got != want {
				t.Fatalf("promtool stored %d samples, %d written\n%s", got, want, out)
			}
		})
	}
}

// readHistory is an independent reader of stats_history.csv applying the
// spec's sample rule (runs.md), not pkg/runs.
func readHistory(t *testing.T, path string) []UserSample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	field := func(row []string, name string) (string, bool) {
		i, ok := col[name]
		if !ok || i >= len(row) {
			return "", false
		}
		return strings.TrimSpace(row[i]), true
	}
	var out []UserSample
	for _, row := range rows[1:] {
		name, _ := field(row, "Name")
		if name != "" && name != "Aggregated" && name != "Total" {
			continue
		}
		ts, ok1 := field(row, "Timestamp")
		uc, ok2 := field(row, "User Count")
		if !ok1 || !ok2 {
			continue
		}
		ti, err1 := strconv.ParseInt(ts, 10, 64)
		u, err2 := strconv.ParseFloat(uc, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, UserSample{T: ti, Users: u})
	}
	return out
}

func TestSteadyWindowFromCSV(t *testing.T) {
	for _, name := range smallScenarios() {
		t.Run(name, func(t *testing.T) {
			tr, dir := generated(t, name)
			path := filepath.Join(dir, HistoryFile)
			if _, err := os.Stat(path); err != nil {
				if name == "no-history" {
					return
				}
				t.Fatalf("stats_history.csv missing: %v", err)
			}
			samples := readHistory(t, path)
			if len(samples) != len(tr.Users) {
				t.Fatalf("%d aggregated rows, truth has %d user samples", len(samples), len(tr.Users))
			}
			for i := range samples {
				if samples[i] != tr.Users[i] {
					t.Fatalf("row %d: %+v, truth %+v", i, samples[i], tr.Users[i])
				}
			}
			// The rule, written out again from runs.md.
			peak := 0.0
			for _, s := range samples {
				peak = math.Max(peak, s.Users)
			}
			var first, last int64 = -1, -1
			for _, s := range samples {
				if s.Users >= 0.9*peak {
					if first < 0 {
						first = s.T
					}
					last = s.T
				}
			}
			ss, se := tr.Start, tr.End
			if peak > 0 && first >= tr.Start && first <= tr.End {
				ss, se = first, min(max(last, first), tr.End)
			}
			if ss != tr.SteadyStart || se != tr.SteadyEnd || peak != tr.PeakUsers {
				t.Fatalf("CSV gives [%d, %d] peak %v; truth [%d, %d] peak %v", ss, se, peak, tr.SteadyStart, tr.SteadyEnd, tr.PeakUsers)
			}
			if ss <= tr.Start || se >= tr.End {
				t.Errorf("steady window [%d, %d] should lie strictly inside the run [%d, %d]", ss, se, tr.Start, tr.End)
			}
		})
	}
}

func TestStatsCSVMatchesTruth(t *testing.T) {
	tr, dir := generated(t, "steady")
	f, err := os.Open(filepath.Join(dir, StatsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(tr.Stats)+1 {
		t.Fatalf("%d rows, truth has %d operations", len(rows)-1, len(tr.Stats))
	}
	var sumReq, sumFail int64
	for i, op := range tr.Stats {
		row := rows[i+1]
		req, _ := strconv.ParseInt(row[2], 10, 64)
		fail, _ := strconv.ParseInt(row[3], 10, 64)
		if row[1] != op.Name || req != op.Requests || fail != op.Failures {
			t.Errorf("row %v, truth %+v", row[:4], op)
		}
		if op.Name != "Aggregated" {
			sumReq += op.Requests
			sumFail += op.Failures
			if op.Requests == 0 || op.Failures == 0 {
				t.Errorf("%s: %d requests, %d failures; want both > 0", op.Name, op.Requests, op.Failures)
			}
		}
	}
	agg := tr.Stats[len(tr.Stats)-1]
	if agg.Requests != sumReq || agg.Failures != sumFail {
		t.Errorf("Aggregated %+v, sum of operations %d/%d", agg, sumReq, sumFail)
	}
	var ri RunInfo
	b, _ := os.ReadFile(filepath.Join(dir, RunFile))
	if err := json.Unmarshal(b, &ri); err != nil {
		t.Fatal(err)
	}
	if ri.StartTS != tr.Start || ri.EndTS != tr.End || ri.Scenario != "steady" || ri.LagS != tr.LagS {
		t.Errorf("run.json %+v does not match the truth", ri)
	}
}

func TestSteadyWindowRule(t *testing.T) {
	s := func(pairs ...float64) []UserSample {
		var out []UserSample
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, UserSample{T: int64(pairs[i]), Users: pairs[i+1]})
		}
		return out
	}
	cases := []struct {
		name         string
		in           []UserSample
		start, end   int64
		wantS, wantE int64
		wantPeak     float64
	}{
		{"no samples", nil, 100, 200, 100, 200, 0},
		{"peak zero", s(100, 0, 101, 0), 100, 200, 100, 200, 0},
		{"dip does not split", s(100, 10, 110, 100, 120, 50, 130, 95, 140, 20), 100, 200, 110, 130, 100},
		{"single instant", s(100, 10, 150, 100, 160, 10), 100, 200, 150, 150, 100},
		{"start outside run", s(90, 100, 150, 95), 100, 200, 100, 200, 100},
		{"end clamped", s(150, 100, 250, 100), 100, 200, 150, 200, 100},
		{"threshold inclusive", s(100, 90, 110, 100, 120, 90, 130, 89.9), 100, 200, 100, 120, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ss, se, p := SteadyWindow(c.in, c.start, c.end)
			if ss != c.wantS || se != c.wantE || p != c.wantPeak {
				t.Fatalf("got [%d, %d] peak %v, want [%d, %d] peak %v", ss, se, p, c.wantS, c.wantE, c.wantPeak)
			}
		})
	}
}
