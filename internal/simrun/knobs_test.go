package simrun

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	workerPodRe = regexp.MustCompile(`^benchmark-ateom.*$`)
	podCgroupRe = regexp.MustCompile(`^.*[/-]pod[^/]+(\.slice)?$`)
)

// liveTotals is the pool total (sum of states) of the process that is
// really live, per exported timestamp, from the exported series.
func liveTotals(tr *Truth, pool string) map[int64]float64 {
	out := map[int64]float64{}
	for _, ws := range tr.WorkerStates {
		if ws.Pool == pool && !ws.Frozen && tr.LiveProcess(ws.T) == ws.Process {
			out[ws.T] = ws.Idle + ws.Partial + ws.AtCapacity
		}
	}
	return out
}

func hasSeries(tr *Truth, name string, pred func(map[string]string) bool) bool {
	for _, e := range tr.Series(name, nil) {
		if pred(e.Labels) {
			return true
		}
	}
	return false
}

// drops reports whether a series' non-NaN values ever decrease.
func drops(e ExportedSeries) bool {
	prev := math.Inf(-1)
	for _, s := range e.Samples {
		if math.IsNaN(s.V) {
			continue
		}
		if s.V < prev {
			return true
		}
		prev = s.V
	}
	return false
}

func nodeOf(tr *Truth, atelet string) string {
	for _, n := range tr.Nodes {
		if n.Atelet == atelet {
			return n.Instance
		}
	}
	return ""
}

type knob struct {
	name  string
	check func(t *testing.T, tr *Truth, dir string)
}

func commonKnobs() []knob {
	return []knob{
		{"ramp and teardown", func(t *testing.T, tr *Truth, _ string) {
			if tr.UsersAt(tr.Start) != 0 || tr.UsersAt(tr.End) != 0 || tr.PeakUsers <= 0 {
				t.Errorf("users at start %v, end %v, peak %v", tr.UsersAt(tr.Start), tr.UsersAt(tr.End), tr.PeakUsers)
			}
		}},
		{"worker pod cgroups and distractors", func(t *testing.T, tr *Truth, _ string) {
			fam := PressureFamily("cpu", "waiting")
			podLevel := hasSeries(tr, fam, func(l map[string]string) bool {
				return workerPodRe.MatchString(l["pod"]) && l["container"] == "" && podCgroupRe.MatchString(l["id"])
			})
			pause := hasSeries(tr, fam, func(l map[string]string) bool {
				return workerPodRe.MatchString(l["pod"]) && l["container"] == "" && strings.HasSuffix(l["id"], ".scope") || (workerPodRe.MatchString(l["pod"]) && l["container"] == "" && !podCgroupRe.MatchString(l["id"]))
			})
			ctr := hasSeries(tr, fam, func(l map[string]string) bool {
				return workerPodRe.MatchString(l["pod"]) && l["container"] == WorkerContainer
			})
			other := hasSeries(tr, fam, func(l map[string]string) bool {
				return l["namespace"] == WorkerNamespace && l["pod"] != "" && !workerPodRe.MatchString(l["pod"])
			})
			if !podLevel || !pause || !ctr || !other {
				t.Errorf("pod-level %v, pause %v, container-level %v, non-worker pod %v", podLevel, pause, ctr, other)
			}
			if len(tr.Series(PressureFamily("cpu", "stalled"), nil)) == 0 {
				t.Error("no _stalled_ distractor")
			}
		}},
		{"system node without workers", func(t *testing.T, tr *Truth, _ string) {
			var sys string
			for _, n := range tr.Nodes {
				if !n.Worker {
					sys = n.Instance
				}
			}
			if len(tr.Series(PressureFamily("cpu", "waiting"), map[string]string{"instance": sys, "container": "node", "id": "/"})) != 1 {
				t.Errorf("system node %s has no node-level PSI series", sys)
			}
			if hasSeries(tr, FamWorkingSet, func(l map[string]string) bool { return l["instance"] == sys && workerPodRe.MatchString(l["pod"]) }) {
				t.Error("a worker pod runs on the system node")
			}
			if len(tr.Series(FamOOM, map[string]string{"instance": sys, "id": "/"})) != 1 {
				t.Error("system node has no global OOM series")
			}
		}},
		{"locust and cadvisor families", func(t *testing.T, tr *Truth, _ string) {
			for _, f := range []string{FamUsers, FamCPUUsage, FamWorkingSet, FamOOM, PressureFamily("memory", "waiting"), PressureFamily("io", "waiting")} {
				if len(tr.Series(f, nil)) == 0 {
					t.Errorf("family %s missing", f)
				}
			}
		}},
	}
}

func ateKnobs() []knob {
	return []knob{
		{"snapshot files and phases", func(t *testing.T, tr *Truth, _ string) {
			files := map[string]bool{}
			for _, e := range tr.Series(FamSnapshotSize+"_count", nil) {
				files[e.Labels["file_name"]] = true
			}
			if !files["pages.img"] || !files["memory-ranges"] || !(files["checkpoint.img"] || files["vmstate"]) {
				t.Errorf("file names %v", files)
			}
			for fam, other := range map[string]string{FamRestore: "download", FamCheckpoint: "upload"} {
				if len(tr.Series(fam+"_count", map[string]string{"ate_snapshot_phase": "total"})) == 0 ||
					len(tr.Series(fam+"_count", map[string]string{"ate_snapshot_phase": other})) == 0 {
					t.Errorf("%s lacks the total or %s phase", fam, other)
				}
			}
		}},
		{"atelet lag", func(t *testing.T, tr *Truth, _ string) {
			if tr.Shift != tr.LagS/2 || len(tr.SampledActors) == 0 {
				t.Fatalf("shift %d lag %d, %d samples", tr.Shift, tr.LagS, len(tr.SampledActors))
			}
			for _, s := range tr.SampledActors {
				node := ""
				for _, n := range tr.Nodes {
					if n.Atelet == s.Atelet {
						node = n.Instance
					}
				}
				if s.T-s.RealT != tr.Shift || float64(tr.Actors(node, s.RealT)) != s.Value {
					t.Fatalf("sample %+v: actors at real time %d are %d", s, s.RealT, tr.Actors(node, s.RealT))
				}
			}
		}},
		{"observations between bucket bounds", func(t *testing.T, tr *Truth, _ string) {
			onBound := 0
			for _, o := range tr.Observations {
				bounds := DurationBounds
				if o.Family == FamSnapshotSize {
					bounds = SizeBounds
				}
				for _, b := range bounds {
					if o.Value == b {
						onBound++
					}
				}
			}
			if onBound > 0 || len(tr.Observations) < 500 {
				t.Errorf("%d observations, %d exactly on a bound", len(tr.Observations), onBound)
			}
		}},
		{"histogram counts equal the observations", func(t *testing.T, tr *Truth, _ string) {
			want := map[string]float64{}
			for _, o := range tr.Observations {
				if o.Lost {
					continue
				}
				k := o.Family + "|" + o.Atelet + "|" + o.Label + "|" + o.Kind
				want[k]++
			}
			got := map[string]float64{}
			for _, fam := range []string{FamSnapshotSize, FamRestore, FamCheckpoint} {
				for _, e := range tr.Series(fam+"_count", nil) {
					label := e.Labels["file_name"] + e.Labels["ate_snapshot_phase"]
					k := fam + "|" + e.Labels["exported_instance"] + "|" + label + "|" + e.Labels["ate_snapshot_kind"]
					g, _, _ := e.Growth(e.Samples[0].T-1, e.Samples[len(e.Samples)-1].T)
					got[k] += g
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d histograms, %d observed label sets", len(got), len(want))
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: counted %v, observed %v", k, got[k], w)
				}
			}
		}},
		{"worker states follow the pods", func(t *testing.T, tr *Truth, _ string) {
			for _, ws := range tr.WorkerStates {
				if ws.Pool != PoolName || ws.Frozen {
					continue
				}
				alive := 0
				for _, p := range tr.Pods {
					if p.Worker && ws.T >= p.Born && (p.Died == 0 || ws.T < p.Died) {
						alive++
					}
				}
				if float64(alive) != ws.Idle+ws.Partial+ws.AtCapacity {
					t.Fatalf("at %d: %d live worker pods, states sum to %v", ws.T, alive, ws.Idle+ws.Partial+ws.AtCapacity)
				}
			}
			partial, full := false, false
			for _, ws := range tr.WorkerStates {
				partial = partial || ws.Partial > 0
				full = full || ws.AtCapacity > 0
			}
			if !partial || !full {
				t.Errorf("pool never partial (%v) or never full (%v)", partial, full)
			}
		}},
	}
}

func TestScenarioKnobs(t *testing.T) {
	table := map[string][]knob{
		"steady": append(append(commonKnobs(), ateKnobs()...),
			knob{"40-60 minutes", func(t *testing.T, tr *Truth, _ string) {
				if d := tr.End - tr.Start; d < 2400 || d > 3600 {
					t.Errorf("duration %d s", d)
				}
			}},
			knob{"dip below 90% inside the steady window", func(t *testing.T, tr *Truth, _ string) {
				dip := false
				for ts := tr.SteadyStart; ts <= tr.SteadyEnd; ts++ {
					dip = dip || tr.UsersAt(ts) < 0.9*tr.PeakUsers
				}
				if !dip {
					t.Error("no dip")
				}
			}},
			knob{"OOM kills charged", func(t *testing.T, tr *Truth, _ string) {
				kinds := map[string]bool{}
				for _, k := range tr.OOMKills {
					kinds[k.Kind] = true
					s := tr.Series(FamOOM, map[string]string{"instance": k.Instance, "id": k.ID})
					if len(s) != 1 {
						t.Fatalf("kill %+v: %d series", k, len(s))
					}
					before, _ := s[0].At(k.T-1, DefaultLookback)
					after := s[0].Samples[len(s[0].Samples)-1].V
					if after < before+1 {
						t.Errorf("kill %+v not counted: %v -> %v", k, before, after)
					}
				}
				if !kinds["node"] || !kinds["pod"] || !kinds["container"] {
					t.Errorf("kill kinds %v", kinds)
				}
			}},
			knob{"ateapi via the collector", func(t *testing.T, tr *Truth, _ string) {
				p := tr.AteapiProcesses
				if len(p) != 1 || p[0].ExportedInstance == "" || len(tr.Series(FamWorkers, map[string]string{"exported_instance": p[0].Key, "instance": tr.Collectors[0]})) != 3 {
					t.Errorf("processes %+v", p)
				}
			}},
		),
		"redeploy": append(append(commonKnobs(), ateKnobs()...),
			knob{"frozen re-export of the exited ateapi", func(t *testing.T, tr *Truth, _ string) {
				if len(tr.AteapiProcesses) != 2 {
					t.Fatalf("%d ateapi processes", len(tr.AteapiProcesses))
				}
				old, cur := tr.AteapiProcesses[0], tr.AteapiProcesses[1]
				if old.ExportedInstance == cur.ExportedInstance || old.Exit == 0 || old.FrozenUntil-old.Exit < 180 {
					t.Fatalf("processes %+v", tr.AteapiProcesses)
				}
				for _, e := range tr.Series(FamWorkers, map[string]string{"exported_instance": old.ExportedInstance}) {
					lastLive, n := math.NaN(), 0
					for _, s := range e.Samples {
						switch {
						case s.T < old.Exit:
							lastLive = s.V
						case s.V != lastLive:
							t.Fatalf("%s changes after exit at %d", e.Key(), s.T)
						default:
							n++
						}
					}
					if last := e.Samples[len(e.Samples)-1].T; n < 12 || last < old.Exit+180 {
						t.Errorf("%s: %d frozen samples, last %d s after exit", e.Key(), n, last-old.Exit)
					}
				}
				if tr.LiveProcess(old.Exit+1) != "" || tr.LiveProcess(cur.Start+1) != cur.Key || tr.LiveProcess(old.Exit-1) != old.Key {
					t.Error("LiveProcess does not follow the redeploy")
				}
			}},
			knob{"pool scales up and down", func(t *testing.T, tr *Truth, _ string) {
				tot := liveTotals(tr, PoolName)
				first, maxT, lastT := tot[tr.WorkerStates[0].T], 0.0, 0.0
				var lastTS int64
				for ts, v := range tot {
					maxT = math.Max(maxT, v)
					if ts > lastTS {
						lastTS, lastT = ts, v
					}
				}
				if !(maxT > first && lastT < maxT) {
					t.Errorf("totals first %v max %v last %v", first, maxT, lastT)
				}
			}},
			knob{"unrelated pool", func(t *testing.T, tr *Truth, _ string) {
				if len(tr.Series(FamWorkers, map[string]string{"ate_workerpool_name": UnrelatedPool})) == 0 {
					t.Error("no unrelated pool")
				}
			}},
		),
		"ladder": append(append(commonKnobs(), ateKnobs()...),
			knob{"steady window is the top step", func(t *testing.T, tr *Truth, _ string) {
				if tr.PeakUsers != 180 || tr.UsersAt(tr.SteadyStart) < 162 || tr.SteadyStart-tr.Start < 1200 {
					t.Errorf("window [%d, %d] s after start, peak %v", tr.SteadyStart-tr.Start, tr.SteadyEnd-tr.Start, tr.PeakUsers)
				}
				if tr.Shift != 45 {
					t.Errorf("shift %d", tr.Shift)
				}
			}},
			knob{"atelet restart resets counters", func(t *testing.T, tr *Truth, _ string) {
				if len(tr.Restarts) != 1 {
					t.Fatal("no restart")
				}
				n := 0
				for _, e := range tr.Series(FamCheckpoint+"_count", map[string]string{"exported_instance": tr.Restarts[0].Atelet}) {
					if drops(e) {
						n++
					}
				}
				if n == 0 {
					t.Error("no counter reset")
				}
				if A, B := tr.SteadyStart+tr.Shift, tr.SteadyEnd+tr.Shift; tr.Restarts[0].At+tr.Shift <= A || tr.Restarts[0].At+tr.Shift > B {
					t.Error("restart outside the window")
				}
			}},
			knob{"series born inside the window", func(t *testing.T, tr *Truth, _ string) {
				A, B := tr.SteadyStart+tr.Shift, tr.SteadyEnd+tr.Shift
				born := false
				for _, e := range tr.Series(FamSnapshotSize+"_count", map[string]string{"file_name": "memory-ranges"}) {
					born = born || (e.Samples[0].T > A && e.Samples[0].T <= B)
				}
				if !born {
					t.Error("no memory-ranges series born inside the window")
				}
			}},
			knob{"scrape gap", func(t *testing.T, tr *Truth, _ string) {
				gap := mustScenario("ladder").ScrapeGap
				from, to := tr.Start+gap.FromS, tr.Start+gap.ToS
				spans := 0
				for _, e := range tr.Exported {
					if len(e.Range(from, to-1)) > 0 {
						t.Fatalf("%s has samples inside the gap", e.Key())
					}
					if len(e.Range(from-30, from)) > 0 && len(e.Range(to, to+30)) > 0 {
						spans++
					}
				}
				if spans == 0 {
					t.Error("no series spans the gap")
				}
			}},
			knob{"zero workers", func(t *testing.T, tr *Truth, _ string) {
				zero := false
				for ts, v := range liveTotals(tr, PoolName) {
					zero = zero || (v == 0 && ts >= tr.Start && ts <= tr.End)
				}
				if !zero {
					t.Error("the pool never has zero workers inside the run")
				}
			}},
			knob{"duplicate collector replica", func(t *testing.T, tr *Truth, _ string) {
				dup := 0
				for _, n := range tr.Nodes {
					if n.Atelet != "" && len(tr.Series(FamSampledActors, map[string]string{"exported_instance": n.Atelet})) == 2 {
						dup++
					}
				}
				if dup != 1 || len(tr.Collectors) != 2 {
					t.Errorf("%d atelets exported twice, collectors %v", dup, tr.Collectors)
				}
			}},
			knob{"atelet stops exporting at zero actors mid-run", func(t *testing.T, tr *Truth, _ string) {
				stopped := false
				for _, e := range tr.Series(FamSampledActors, map[string]string{"instance": tr.Collectors[0]}) {
					for i, s := range e.Samples {
						mid := s.T > tr.Start+600 && s.T < tr.End-600
						quiet := i == len(e.Samples)-1 || e.Samples[i+1].T-s.T > 4*tr.ScrapeS
						if math.IsNaN(s.V) && mid && quiet && tr.Actors(nodeOf(tr, e.Labels["exported_instance"]), s.T-tr.Shift) == 0 {
							stopped = true
						}
					}
				}
				if !stopped {
					t.Error("no atelet went quiet mid-run")
				}
			}},
			knob{"worker pod deleted and replaced", func(t *testing.T, tr *Truth, _ string) {
				var gone *PodInfo
				for i, p := range tr.Pods {
					if p.Worker && p.Died > tr.Start && p.Died < tr.End {
						gone = &tr.Pods[i]
					}
				}
				if gone == nil {
					t.Fatal("no worker pod died mid-run")
				}
				for _, e := range tr.Series(FamCPUUsage, map[string]string{"pod": gone.Name}) {
					if e.Samples[len(e.Samples)-1].T >= gone.Died {
						t.Errorf("%s exported after the pod died", e.Key())
					}
				}
				replaced := false
				for _, p := range tr.Pods {
					replaced = replaced || (p.Worker && p.Node == gone.Node && p.Born > gone.Died)
				}
				if !replaced {
					t.Error("deleted pod not replaced")
				}
			}},
			knob{"ateapi scraped directly", func(t *testing.T, tr *Truth, _ string) {
				p := tr.AteapiProcesses
				if len(p) != 1 || p[0].ExportedInstance != "" || len(tr.Series(FamWorkers, map[string]string{"instance": p[0].Key, "exported_instance": ""})) != 3 {
					t.Errorf("processes %+v", p)
				}
			}},
			knob{"cgroupfs naming", func(t *testing.T, tr *Truth, _ string) {
				if !hasSeries(tr, FamWorkingSet, func(l map[string]string) bool { return strings.HasPrefix(l["id"], "/kubepods/pod") }) {
					t.Error("no cgroupfs pod ids")
				}
			}},
		),
		"no-atelet": append(commonKnobs(),
			knob{"no atelet or ateapi metrics", func(t *testing.T, tr *Truth, _ string) {
				for _, n := range tr.Names() {
					if strings.HasPrefix(n, "ate_") || strings.HasPrefix(n, "atelet_") {
						t.Errorf("family %s present", n)
					}
				}
				if hasSeries(tr, FamWorkingSet, func(l map[string]string) bool { return l["namespace"] == AteletNamespace }) {
					t.Error("atelet pods present")
				}
			}},
		),
		"no-history": append(commonKnobs(),
			knob{"no stats_history.csv", func(t *testing.T, tr *Truth, dir string) {
				if _, err := os.Stat(filepath.Join(dir, HistoryFile)); !os.IsNotExist(err) {
					t.Errorf("stats_history.csv exists (%v)", err)
				}
				if _, err := os.Stat(filepath.Join(dir, StatsFile)); err != nil {
					t.Error(err)
				}
			}},
		),
		"demo": append(append(commonKnobs(), ateKnobs()...),
			knob{"an hour with every family", func(t *testing.T, tr *Truth, _ string) {
				if d := tr.End - tr.Start; d < 3300 || d > 3900 {
					t.Errorf("duration %d", d)
				}
				if len(tr.Names()) != 20 {
					t.Errorf("families %v", tr.Names())
				}
				if len(tr.Restarts) != 1 || len(tr.AteapiProcesses) != 2 || len(tr.Collectors) != 2 {
					t.Error("demo lacks a restart, a redeploy or a duplicate replica")
				}
			}},
		),
	}
	for name, knobs := range table {
		t.Run(name, func(t *testing.T) {
			tr, dir := generated(t, name)
			for _, k := range knobs {
				t.Run(k.name, func(t *testing.T) { k.check(t, tr, dir) })
			}
		})
	}
}
