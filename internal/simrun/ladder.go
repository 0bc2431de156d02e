package simrun

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LogsFile is the run's log, holding the ladder lines of a ladder run.
const LogsFile = "logs.txt"

// Ladder families (boomer's exporter, postgres_exporter) and the
// operations of the ladder scenario.
const (
	FamLocustRequests = "locust_requests_total"
	FamLocustClient   = "locust_request_duration_milliseconds"
	FamLocustServer   = "locust_server_duration_milliseconds"
	FamPGBackends     = "pg_stat_database_numbackends"
	FamPGCommits      = "pg_stat_database_xact_commit"
	FamPGActivity     = "pg_stat_activity_count"

	LadderResumeOp = "ResumeActorCold"
	LadderPauseOp  = "SuspendActorAsync"
	LadderStatusOp = "GetActorStatus" // fails in one step only, no successes
)

// LatencyBounds are the load generator's histogram bounds (ms).
var LatencyBounds = []float64{5, 10, 25, 50, 100, 250, 500, 1000, 2500, math.Inf(1)}

// LadderStepSpec is one load step. TargetRPS nil writes `unchanged`.
// Achieved is the resume rate the load generator really reaches (per
// second, over both processes); the pause rate is 0.8 × it.
type LadderStepSpec struct {
	Users       int
	TargetRPS   *float64
	DurMs       int64   // step length; the last step of a ladder without completion has none
	Achieved    float64 // resume successes per second
	ResumeFailS float64 // resume failures per second
	PauseFailS  float64 // pause failures per second
	StatusFailS float64 // GetActorStatus failures per second
	LatencyMS   float64 // median client latency
}

// LadderSpec is the ladder of a scenario: steps start at StartMs after
// the run start; Complete writes `Ladder complete` after the last step.
// Process 1 of the two load-generator processes restarts at RestartS
// (seconds after the run start) and is down for RestartDownS.
type LadderSpec struct {
	StartMs          int64
	Steps            []LadderStepSpec
	Complete         bool
	RestartS         int64
	RestartDownS     int64
	LoadgenProcesses int
}

// LadderTruth is what the export must write for the ladder: each row's
// measurements as text (nil = null), in key order, and the notices' count
// of skipped steps.
type LadderTruth struct {
	Rows    []LadderRow
	Summary []KV
	Skipped []int64 // step numbers skipped
}

// LadderRow is one expected ladder_step row.
type LadderRow struct {
	Metric string
	Values []KV
}

// KV is one measurement.
type KV struct {
	Key   string
	Value *string
}

// ladderComponents are the three workloads with cAdvisor series.
var ladderComponents = []struct{ key, ns, container, pod string }{
	{"ateapi", "ate-system", "ate-api-server", "ate-api-server-7d9f8-abcde"},
	{"postgres", "ate-system", "postgres", "postgres-0"},
	{"fake_atelet", "ate-system", "fake-atelet", "fake-atelet-5c6b7-fghij"},
}

// ladderScrapeS is the scrape interval of every ladder target.
const ladderScrapeS = 10

// stepAt is the index of the step holding real second t (-1 before the
// ladder, the last step after it).
func (l *LadderSpec) stepAt(runStart, t int64) int {
	ms := (t - runStart) * 1000
	if ms < l.StartMs {
		return -1
	}
	at := l.StartMs
	for i, s := range l.Steps {
		if i == len(l.Steps)-1 || ms < at+s.DurMs {
			return i
		}
		at += s.DurMs
	}
	return len(l.Steps) - 1
}

func ladderTimes(from, to, phase int64) []int64 {
	var out []int64
	t := from - ((from%ladderScrapeS)+ladderScrapeS)%ladderScrapeS + phase
	for ; t <= to; t += ladderScrapeS {
		if t >= from {
			out = append(out, t)
		}
	}
	return out
}

// perSecond is the events in second t of a constant rate r (a
// deterministic staircase with the exact long-run rate).
func perSecond(r float64, t int64) float64 {
	return math.Floor(float64(t+1)*r) - math.Floor(float64(t)*r)
}

// ladderCPU writes the three components' CPU counters (inside the CPU
// family).
func (g *gen) ladderCPU() {
	for ci, c := range ladderComponents {
		times := ladderTimes(g.telFrom, g.telTo, 7)
		val, last := 1000.0*float64(ci+1), g.telFrom
		samples := make([]Sample, 0, len(times))
		for _, t := range times {
			for s := last; s < t; s++ {
				val += g.componentCores(ci, s)
			}
			last = t
			samples = append(samples, Sample{t, val})
		}
		g.o.series(FamCPUUsage, componentLabels(c.ns, c.container, c.pod), samples)
	}
}

func componentLabels(ns, container, pod string) []Label {
	return []Label{{"job", "kubernetes-cadvisor"}, {"instance", "control-0"}, {"namespace", ns}, {"pod", pod},
		{"container", container}, {"id", "/kubepods/burstable/pod-" + pod + "/" + container}}
}

// componentCores is the CPU use of component ci in second s.
func (g *gen) componentCores(ci int, s int64) float64 {
	l := g.w.sc.Ladder
	i := l.stepAt(g.w.sc.Start, s)
	rps := 0.0
	if i >= 0 {
		rps = l.Steps[i].Achieved
	}
	base := []float64{0.25, 0.4, 0.1}[ci]
	gain := []float64{0.012, 0.02, 0.004}[ci]
	r := rngFor(g.w.sc.Seed, "ladder-cpu", ci, s)
	return base + gain*rps*(1+0.05*r.NormFloat64())
}

// ladderMemory writes the three components' working sets (inside the
// working-set family).
func (g *gen) ladderMemory() {
	l := g.w.sc.Ladder
	for ci, c := range ladderComponents {
		var samples []Sample
		for _, t := range ladderTimes(g.telFrom, g.telTo, 7) {
			i := l.stepAt(g.w.sc.Start, t)
			users := 0.0
			if i >= 0 {
				users = float64(l.Steps[i].Users)
			}
			r := rngFor(g.w.sc.Seed, "ladder-mem", ci, t)
			gb := []float64{0.6, 1.5, 0.2}[ci] + []float64{0.01, 0.02, 0.003}[ci]*users
			samples = append(samples, Sample{t, math.Round(gb * (1 + 0.01*r.NormFloat64()) * (1 << 30))})
		}
		g.o.series(FamWorkingSet, componentLabels(c.ns, c.container, c.pod), samples)
	}
}

// loadgenUp says whether process p is up (exporting) at second t.
func (g *gen) loadgenUp(p int, t int64) bool {
	l := g.w.sc.Ladder
	r0 := g.w.sc.Start + l.RestartS
	return !(p == 1 && t >= r0 && t < r0+l.RestartDownS)
}

// loadgenEpoch is the start of process p's current life at t.
func (g *gen) loadgenEpoch(p int, t int64) int64 {
	l := g.w.sc.Ladder
	if p == 1 && t >= g.w.sc.Start+l.RestartS {
		return g.w.sc.Start + l.RestartS + l.RestartDownS
	}
	return math.MinInt64
}

// opRate is the per-process rate of op/status in second s.
func (g *gen) opRate(op, status string, s int64) float64 {
	l := g.w.sc.Ladder
	i := l.stepAt(g.w.sc.Start, s)
	if i < 0 || s >= g.w.end {
		return 0
	}
	st := l.Steps[i]
	n := float64(l.LoadgenProcesses)
	switch {
	case op == LadderResumeOp && status == "success":
		return st.Achieved / n
	case op == LadderPauseOp && status == "success":
		return 0.8 * st.Achieved / n
	case op == LadderResumeOp:
		return st.ResumeFailS / n
	case op == LadderPauseOp:
		return st.PauseFailS / n
	case op == LadderStatusOp && status == "failure":
		return st.StatusFailS / n
	}
	return 0
}

// ladderLoadgen writes the request counters and latency histograms of the
// load-generator processes.
func (g *gen) ladderLoadgen() {
	l := g.w.sc.Ladder
	w := g.w
	times := ladderTimes(w.start, w.end+30, 3)
	procLabels := func(p int) []Label {
		return []Label{{"job", "locust-boomer"}, {"instance", fmt.Sprintf("loadgen-%d:9646", p)}}
	}
	g.o.family(strings.TrimSuffix(FamLocustRequests, "_total"), "counter")
	for _, op := range []string{LadderResumeOp, LadderPauseOp, LadderStatusOp} {
		for _, status := range []string{"success", "failure"} {
			for p := 0; p < l.LoadgenProcesses; p++ {
				var samples []Sample
				val, born, epoch := 0.0, false, int64(math.MinInt64)
				last := w.start
				for _, t := range times {
					if !g.loadgenUp(p, t) {
						continue
					}
					if e := g.loadgenEpoch(p, t); e != epoch {
						epoch, val, born, last = e, 0, false, max(e, w.start)
					}
					for s := last; s < t; s++ {
						val += perSecond(g.opRate(op, status, s), s)
					}
					last = t
					// The exporter creates a series on its first event.
					if val > 0 {
						born = true
					}
					if born {
						samples = append(samples, Sample{t, val})
					}
				}
				ls := append(procLabels(p), Label{"name", op}, Label{"status", status}, Label{"method", "grpc"})
				g.o.series(FamLocustRequests, ls, samples)
			}
		}
	}
	for hi, fam := range []string{FamLocustClient, FamLocustServer} {
		g.o.family(fam, "histogram")
		for _, op := range []string{LadderResumeOp, LadderPauseOp} {
			for p := 0; p < l.LoadgenProcesses; p++ {
				var pts []histPoint
				counts := make([]float64, len(LatencyBounds))
				sum := 0.0
				epoch, last := int64(math.MinInt64), w.start
				for _, t := range times {
					if !g.loadgenUp(p, t) {
						continue
					}
					if e := g.loadgenEpoch(p, t); e != epoch {
						epoch, last, sum = e, max(e, w.start), 0
						counts = make([]float64, len(LatencyBounds))
					}
					for s := last; s < t; s++ {
						n := int(perSecond(g.opRate(op, "success", s), s))
						if n == 0 {
							continue
						}
						i := l.stepAt(w.sc.Start, s)
						med := l.Steps[i].LatencyMS
						if op == LadderPauseOp {
							med *= 0.4
						}
						if hi == 1 {
							med *= 0.7 // the server's own elapsed time
						}
						r := rngFor(w.sc.Seed, "latency", fam, op, p, s)
						for k := 0; k < n; k++ {
							v := med * lognormal(r, 0.45)
							sum += v
							for b, ub := range LatencyBounds {
								if v <= ub {
									counts[b]++
								}
							}
						}
					}
					last = t
					pts = append(pts, histPoint{t: t, counts: append([]float64(nil), counts...), sum: sum})
				}
				g.o.histogram(fam, append(procLabels(p), Label{"name", op}), LatencyBounds, pts)
			}
		}
	}
}

// ladderPostgres writes the postgres_exporter series.
func (g *gen) ladderPostgres() {
	l := g.w.sc.Ladder
	w := g.w
	times := ladderTimes(g.telFrom, g.telTo, 5)
	job := []Label{{"job", "postgres-exporter"}, {"instance", "postgres-exporter:9187"}}
	stepVal := func(t int64, f func(LadderStepSpec) float64) float64 {
		i := l.stepAt(w.sc.Start, t)
		if i < 0 || t >= w.end {
			return 0
		}
		return f(l.Steps[i])
	}
	g.o.family(FamPGBackends, "gauge")
	for di, db := range []string{"ate", "postgres"} {
		var samples []Sample
		for _, t := range times {
			v := 3.0
			if di == 0 {
				v = 5 + math.Round(stepVal(t, func(s LadderStepSpec) float64 { return float64(s.Users) / 2 }))
				v += float64(rngFor(w.sc.Seed, "pg-conn", t).IntN(3))
			}
			samples = append(samples, Sample{t, v})
		}
		g.o.series(FamPGBackends, append(append([]Label(nil), job...), Label{"datname", db}), samples)
	}
	g.o.family(FamPGCommits, "gauge") // postgres_exporter: a counter without _total
	for di, db := range []string{"ate", "postgres"} {
		var samples []Sample
		val, last := 5e6*float64(di+1), g.telFrom
		for _, t := range times {
			for s := last; s < t; s++ {
				if di == 0 {
					val += perSecond(2*stepVal(s, func(st LadderStepSpec) float64 { return st.Achieved })+1.5, s)
				} else {
					val += perSecond(0.2, s)
				}
			}
			last = t
			samples = append(samples, Sample{t, val})
		}
		g.o.series(FamPGCommits, append(append([]Label(nil), job...), Label{"datname", db}), samples)
	}
	g.o.family(FamPGActivity, "gauge")
	for _, wt := range []string{"Client", "IO", "LWLock", "Lock"} {
		var samples []Sample
		for _, t := range times {
			r := rngFor(w.sc.Seed, "pg-wait", wt, t)
			v := float64(r.IntN(3))
			if wt == "Lock" {
				v += math.Round(stepVal(t, func(s LadderStepSpec) float64 { return s.Achieved / 50 }))
			}
			samples = append(samples, Sample{t, v})
		}
		g.o.series(FamPGActivity, append(append([]Label(nil), job...), Label{"datname", "ate"}, Label{"state", "active"}, Label{"wait_event_type", wt}), samples)
	}
}

// writeLadderLog writes logs.txt: Locust noise and the ladder lines.
func writeLadderLog(sc Scenario, dir string) error {
	l := sc.Ladder
	var b strings.Builder
	stamp := func(ms int64) string {
		t := time.UnixMilli(sc.Start*1000 + ms).UTC()
		return t.Format("2006-01-02 15:04:05") + fmt.Sprintf(",%03d", t.Nanosecond()/1e6)
	}
	fmt.Fprintf(&b, "[locust] [%s] master-0/INFO/locust.main: Starting Locust 2.31.3\n", stamp(0))
	fmt.Fprintf(&b, "[locust] [%s] master-0/INFO/locust.runners: Ramping to 10 users at a rate of 10.00 per second\n", stamp(1200))
	at := l.StartMs
	for i, s := range l.Steps {
		target := "unchanged"
		if s.TargetRPS != nil {
			target = pyFloat(*s.TargetRPS)
		}
		fmt.Fprintf(&b, "[locust] [%s] master-0/INFO/locust.shape: Ladder step %d/%d: users=%d trace_probability=unchanged target_rps=%s\n",
			stamp(at), i+1, len(l.Steps), s.Users, target)
		fmt.Fprintf(&b, "[worker] [%s] worker-1/WARNING/root: %s failed: rpc error: code = Unavailable\n", stamp(at+2500), LadderResumeOp)
		at += s.DurMs
	}
	if l.Complete {
		fmt.Fprintf(&b, "[locust] [%s] master-0/INFO/locust.shape: Ladder complete after %ds\n", stamp(at), (at-l.StartMs)/1000)
	}
	fmt.Fprintf(&b, "[locust] [%s] master-0/INFO/locust.main: --run-time limit reached, shutting down\n", stamp((sc.Duration())*1000))
	path := filepath.Join(dir, LogsFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ---- truth: the rows the built-in profile must give, computed from the
// exported samples with the spec's rules (never through PromQL).

func round4Text(v float64) *string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 4, 64), 64)
	s := pyFloat(r)
	if r == 0 {
		s = "0.0"
	}
	return &s
}

func intTextP(v int64) *string { s := strconv.FormatInt(v, 10); return &s }

// seriesGrowth is the spec's restart-aware growth of one series over (a, b].
func seriesGrowth(e ExportedSeries, a, b int64) float64 {
	g, _, _ := e.Growth(a, b)
	return g
}

// inWindow says whether a series has a sample in [a-300, b] (what a
// window growth read lists).
func inWindow(e ExportedSeries, a, b int64) bool { return len(e.Range(a-300, b)) > 0 }

// ladderTruth computes the expected rows from the exported series.
func ladderTruth(sc Scenario, exported []ExportedSeries) *LadderTruth {
	l := sc.Ladder
	byName := map[string][]ExportedSeries{}
	for _, e := range exported {
		byName[e.Name] = append(byName[e.Name], e)
	}
	match := func(name string, m map[string]string) []ExportedSeries {
		var out []ExportedSeries
	next:
		for _, e := range byName[name] {
			for k, v := range m {
				if e.Labels[k] != v {
					continue next
				}
			}
			out = append(out, e)
		}
		return out
	}
	lt := &LadderTruth{}
	at := l.StartMs
	var target *float64
	type qual struct {
		step       int64
		rps, tgt   float64
		succ, fail float64
		paced      bool
	}
	var quals []qual
	for i, st := range l.Steps {
		startMs := sc.Start*1000 + at
		at += st.DurMs
		endMs := sc.Start*1000 + at
		if st.TargetRPS != nil {
			v := *st.TargetRPS
			target = &v
		}
		n := int64(i + 1)
		last := i == len(l.Steps)-1
		if last && !l.Complete {
			lt.Skipped = append(lt.Skipped, n)
			continue
		}
		a := (startMs + 30000 + 999) / 1000
		b := (endMs - 5000) / 1000
		if b <= a {
			lt.Skipped = append(lt.Skipped, n)
			continue
		}
		W := float64(b - a)
		var kv []KV
		add := func(k string, v *string) { kv = append(kv, KV{k, v}) }
		var tgtText *string
		if target != nil {
			tgtText = round4Text(*target)
		}
		add("step", intTextP(n))
		add("steps", intTextP(int64(len(l.Steps))))
		add("users", intTextP(int64(st.Users)))
		add("target_rps", tgtText)
		add("window_start", intTextP(a))
		add("window_end", intTextP(b))
		add("window_s", intTextP(b-a))
		growth := func(ss []ExportedSeries) (float64, bool) {
			sum, seen := 0.0, false
			for _, e := range ss {
				if inWindow(e, a, b) {
					seen = true
					sum += seriesGrowth(e, a, b)
				}
			}
			return sum, seen
		}
		succ := map[string]float64{}
		for _, op := range []string{LadderResumeOp, LadderPauseOp} {
			g, ok := growth(match(FamLocustRequests, map[string]string{"name": op, "status": "success"}))
			if !ok {
				panic("ladder truth: no success series")
			}
			succ[op] = g
		}
		add("resume_requests", intTextP(int64(succ[LadderResumeOp])))
		add("pause_requests", intTextP(int64(succ[LadderPauseOp])))
		add("resume_rps", round4Text(succ[LadderResumeOp]/W))
		add("pause_rps", round4Text(succ[LadderPauseOp]/W))
		fails := map[string]float64{LadderResumeOp: 0, LadderPauseOp: 0}
		for _, e := range match(FamLocustRequests, map[string]string{"status": "failure"}) {
			if inWindow(e, a, b) {
				fails[e.Labels["name"]] += seriesGrowth(e, a, b)
			}
		}
		var fk []string
		fkv := map[string]float64{}
		for op, v := range fails {
			k := "failures_" + snakeOp(op)
			fk = append(fk, k)
			fkv[k] = v
		}
		sort.Strings(fk)
		for _, k := range fk {
			add(k, intTextP(int64(fkv[k])))
		}
		for _, op := range []struct{ key, name string }{{"resume", LadderResumeOp}, {"pause", LadderPauseOp}} {
			for _, h := range []struct{ infix, fam string }{{"", FamLocustClient}, {"_server", FamLocustServer}} {
				byLE := map[float64]float64{}
				for _, e := range match(h.fam+"_bucket", map[string]string{"name": op.name}) {
					if inWindow(e, a, b) {
						le, _ := strconv.ParseFloat(strings.Replace(e.Labels["le"], "+Inf", "Inf", 1), 64)
						byLE[le] += seriesGrowth(e, a, b)
					}
				}
				var buckets []Bucket
				for le, n := range byLE {
					buckets = append(buckets, Bucket{UpperBound: le, Count: n})
				}
				for _, q := range []string{"50", "90", "99"} {
					qq, _ := strconv.ParseFloat("0."+q, 64)
					v := HistogramQuantile(qq, buckets)
					var t *string
					if !math.IsNaN(v) {
						t = round4Text(v)
					}
					add(op.key+h.infix+"_p"+q+"_ms", t)
				}
			}
		}
		evals := func(f func(t int64) (float64, bool)) []float64 {
			var out []float64
			for t := a; t <= b; t += 10 {
				if v, ok := f(t); ok {
					out = append(out, v)
				}
			}
			return out
		}
		meanMax := func(vs []float64) (mean, mx *string) {
			if len(vs) == 0 {
				return nil, nil
			}
			s, m := 0.0, math.Inf(-1)
			for _, v := range vs {
				s += v
				m = math.Max(m, v)
			}
			return round4Text(s / float64(len(vs))), round4Text(m)
		}
		sumAt := func(ss []ExportedSeries, scale float64) func(t int64) (float64, bool) {
			return func(t int64) (float64, bool) {
				s, ok := 0.0, false
				for _, e := range ss {
					if v, has := e.At(t, 300); has && !math.IsNaN(v) {
						s += v
						ok = true
					}
				}
				return s / scale, ok
			}
		}
		for _, c := range ladderComponents {
			sel := map[string]string{"namespace": c.ns, "container": c.container}
			cpu := match(FamCPUUsage, sel)
			mean, mx := meanMax(evals(func(t int64) (float64, bool) {
				s, ok := 0.0, false
				for _, e := range cpu {
					if r, has := e.Rate(t, 60); has {
						s += r
						ok = true
					}
				}
				return s, ok
			}))
			add(c.key+"_cpu_cores_avg", mean)
			add(c.key+"_cpu_cores_max", mx)
			_, mem := meanMax(evals(sumAt(match(FamWorkingSet, sel), 1<<30)))
			add(c.key+"_memory_gb_max", mem)
		}
		conn, _ := meanMax(evals(sumAt(byName[FamPGBackends], 1)))
		add("postgres_connections_avg", conn)
		commits, _ := growth(byName[FamPGCommits])
		add("postgres_commits_per_s", round4Text(commits/W))
		var waits []ExportedSeries
		for _, e := range byName[FamPGActivity] {
			if wt := e.Labels["wait_event_type"]; wt == "Lock" || wt == "LWLock" || wt == "IO" {
				waits = append(waits, e)
			}
		}
		wmean, _ := meanMax(evals(sumAt(waits, 1)))
		add("postgres_waits_avg", wmean)
		lt.Rows = append(lt.Rows, LadderRow{Metric: fmt.Sprintf("ladder_step_%03d", n), Values: kv})
		q := qual{step: n, rps: succ[LadderResumeOp] / W, succ: succ[LadderResumeOp], fail: fails[LadderResumeOp]}
		if target != nil && *target > 0 {
			q.paced, q.tgt = true, *target
		}
		quals = append(quals, q)
	}
	var best *qual
	var short *int64
	for i := range quals {
		q := &quals[i]
		if !q.paced {
			continue
		}
		if q.rps < 0.95*q.tgt {
			if short == nil {
				short = &q.step
			}
			continue
		}
		if q.fail/(q.succ+q.fail) <= 0.01 && (best == nil || q.rps > best.rps) {
			best = q
		}
	}
	sum := []KV{{"steps", intTextP(int64(len(lt.Rows)))}, {"steps_skipped", intTextP(int64(len(lt.Skipped)))}}
	if best != nil {
		sum = append(sum, KV{"max_sustained_rps", round4Text(best.rps)}, KV{"knee_step", intTextP(best.step)})
	} else {
		sum = append(sum, KV{"max_sustained_rps", nil}, KV{"knee_step", nil})
	}
	var shortText *string
	if short != nil {
		shortText = intTextP(*short)
	}
	lt.Summary = append(sum, KV{"first_short_step", shortText})
	return lt
}

// snakeOp is the camel-to-snake rule for the three operation names.
func snakeOp(op string) string {
	var b strings.Builder
	for i, r := range op {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
