package simrun

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
)

// PhaseLogDir is the directory (under the run directory) of the pod logs
// written with Scenario.PhaseLogs.
const PhaseLogDir = "pod-logs"

// PodLog is one pod's log as the Kubernetes API would serve it: the
// current container log and, for a restarted container, the previous one.
// Paths are relative to the run directory; Previous is empty when the
// container never restarted.
type PodLog struct {
	Namespace, Pod, Container string
	Current, Previous         string
	Restarts                  int
	// Unreadable: the API answers 500 for this pod's log (its file is not
	// written either: the records are lost in both sources).
	Unreadable bool
}

// PhaseRow is one expected phase_* row: metric and measurements in order.
type PhaseRow struct {
	Metric       string
	Measurements [][2]string
}

// PhaseTruth is what the simulator knows of the phase breakdown: the logs
// it wrote and the exact rows an export must produce from them, computed
// from the durations it drew (not by the engine package).
type PhaseTruth struct {
	Logs []PodLog
	Rows []PhaseRow
	// Values are the successful records' phase values in seconds per row
	// (same order as Rows), for cross-checks against Python.
	Values [][]float64
	// Summary counts.
	Records, AteletCheckpoint, AteletRestore int
	PodsRead, PodsFailed                     int
	// Failed is the number of failed operations written (both layers);
	// Late the records written after the run's end + lag (dropped).
	Failed, Late int
}

// simRecord is one record the simulator writes, kept for the truth.
type simRecord struct {
	layer, op              string
	us                     int64
	uid, name, scope, kind string
	class                  string // atelet: the pod's class; ateom: inherited
	failed                 bool
	phases                 []simPhase
	pod                    int // worker pod index (ateom) or node (atelet)
	partner                *simRecord
	dropped, lost          bool
	line                   string
}

type simPhase struct {
	name string
	v    float64
}

// phaseOrder is the spec's report order of the phases the simulator writes.
var phaseOrder = []string{
	"volume_mount", "sandbox_assets", "download", "ateom_restore", "prep",
	"pause_restore", "app_restore", "tap", "vmm_launch", "vm_restore", "resume",
	"pause", "checkpoint", "snapshot", "durable_dir", "rootfs_upper", "ateom_checkpoint",
	"teardown", "persist", "unattributed", "total",
}

func phaseRank(name string) int { return slices.Index(phaseOrder, name) }

func secs(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// writePhaseLogs writes the timing breakdown records of every checkpoint
// and restore the simulator models (from the run start − 60 s on) into pod
// log files and fills t.Phases.
func writePhaseLogs(w *world, dir string, t *Truth) error {
	sc := w.sc
	if sc.NoAteMetrics {
		return nil
	}
	cutoff := (sc.End() + sc.LagS) * 1_000_000
	from := float64(sc.Start - 60)
	// Pods the API lists at export time: every atelet, and the worker pods
	// still alive at the end.
	alive := func(i int) bool { return w.pods[i].died == never || w.pods[i].died > sc.End()+sc.PostS }
	// The unreadable pod: the last live gVisor worker (the microVM pods are
	// few).
	var lastWorker = -1
	for i := 0; i < w.nWorker; i++ {
		if alive(i) && !w.pods[i].microVM {
			lastWorker = i
		}
	}
	var recs []*simRecord
	pt0 := &PhaseTruth{}
	for n := range sc.NodePods {
		r := rngFor(sc.Seed, "phaselogs", n)
		for k, e := range w.nodeEvents(n) {
			if e.t < from {
				continue
			}
			p := &w.pods[e.pod]
			class := ClassOf(p.microVM)
			us := int64(math.Round(e.t * 1e6))
			uid := fmt.Sprintf("%s-%d-%d", p.uid[:8], n, k)
			kind := "latest"
			if r.Float64() < 0.2 {
				kind = "golden"
			}
			scope := "full"
			if e.incr {
				scope = "data"
			}
			failed := r.Float64() < 0.03
			a := &simRecord{layer: "atelet", uid: uid, name: fmt.Sprintf("sb-%d-%d", n, k), scope: scope, kind: kind,
				class: class, failed: failed, us: us, pod: n}
			o := &simRecord{layer: "ateom", uid: uid, scope: scope, failed: failed, pod: e.pod}
			a.partner, o.partner = o, a
			total := secs(e.total)
			if e.checkpoint {
				a.op, o.op = "checkpoint", "checkpoint"
				persist := secs(e.phase)
				assets := secs(0.005 + 0.015*r.Float64())
				inner := secs((total - persist) * (0.6 + 0.3*r.Float64()))
				a.phases = []simPhase{{"sandbox_assets", assets}, {"ateom_checkpoint", inner}, {"persist", persist}, {"total", total}}
				o.us = us - int64(math.Round((persist+0.1*r.Float64())*1e6))
				ot := secs(inner * (0.95 + 0.04*r.Float64()))
				if p.microVM {
					f := func(lo, hi float64) float64 { return secs(ot * (lo + (hi-lo)*r.Float64())) }
					o.phases = []simPhase{{"prep", f(0.02, 0.05)}, {"pause", f(0.01, 0.03)}, {"snapshot", f(0.3, 0.6)},
						{"durable_dir", f(0.1, 0.5)}, {"rootfs_upper", f(0.05, 0.4)}, {"teardown", f(0.02, 0.06)}, {"total", ot}}
				} else {
					o.phases = []simPhase{{"pause", secs(ot * 0.1)}, {"checkpoint", secs(ot * (0.7 + 0.25*r.Float64()))}, {"total", ot}}
				}
			} else {
				a.op, o.op = "restore", "restore"
				inner := secs(total * (0.2 + 0.3*r.Float64()))
				a.phases = []simPhase{{"download", secs(e.phase)}, {"ateom_restore", inner}, {"total", total}}
				if r.Float64() < 0.7 {
					a.phases = append([]simPhase{{"volume_mount", secs(0.01 + 0.02*r.Float64())}}, a.phases...)
				}
				o.us = us - int64(math.Round(0.2*r.Float64()*1e6))
				ot := secs(inner * (0.9 + 0.09*r.Float64()))
				f := func(lo, hi float64) float64 { return secs(ot * (lo + (hi-lo)*r.Float64())) }
				if p.microVM {
					o.phases = []simPhase{{"tap", f(0.01, 0.03)}, {"vmm_launch", f(0.1, 0.2)}, {"vm_restore", f(0.4, 0.6)}, {"resume", f(0.01, 0.05)}, {"total", ot}}
				} else {
					o.phases = []simPhase{{"pause_restore", f(0.2, 0.4)}, {"app_restore", f(0.4, 0.5)}, {"total", ot}}
				}
			}
			a.dropped = a.us > cutoff
			o.dropped = o.us > cutoff
			o.lost = !alive(e.pod) || e.pod == lastWorker
			recs = append(recs, o, a)
		}
	}

	// Records of the next run, after the end + lag: an export must drop
	// them.
	for i := range 3 {
		us := cutoff + int64(i+1)*1_000_000
		a := &simRecord{layer: "atelet", op: "restore", uid: fmt.Sprintf("next-run-%d", i), scope: "full", kind: "latest",
			class: "gvisor", us: us, pod: 0, dropped: true, phases: []simPhase{{"ateom_restore", 0.5}, {"total", 1}}}
		a.partner = &simRecord{dropped: true}
		recs = append(recs, a)
		pt0.Late++
	}

	// Lines, per pod.
	logDir := filepath.Join(dir, PhaseLogDir)
	if err := os.MkdirAll(logDir, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		return fmt.Errorf("creating %s: %w", logDir, err)
	}
	pt := pt0
	ateletLines := make([][]*simRecord, len(sc.NodePods))
	workerLines := make([][]*simRecord, w.nWorker)
	for _, rc := range recs {
		rc.line = rc.format()
		if rc.layer == "atelet" {
			ateletLines[rc.pod] = append(ateletLines[rc.pod], rc)
		} else {
			workerLines[rc.pod] = append(workerLines[rc.pod], rc)
		}
	}
	write := func(name string, rs []*simRecord, prefix func(*simRecord) string) error {
		f, err := os.Create(filepath.Join(logDir, name)) // #nosec G304 -- reads a path the operator or the test harness named
		if err != nil {
			return err
		}
		bw := bufio.NewWriter(f)
		for i, rc := range rs {
			if i%7 == 0 {
				fmt.Fprintf(bw, "I%s  reconcile done\n", time.UnixMicro(rc.us).UTC().Format("0102 15:04:05.000000"))
				fmt.Fprintf(bw, `{"time":%q,"level":"INFO","msg":"sandbox state changed","ate.actor.uid":%q}`+"\n",
					time.UnixMicro(rc.us).UTC().Format("2006-01-02T15:04:05.000000Z07:00"), rc.uid)
			}
			bw.WriteString(prefix(rc) + rc.line + "\n")
		}
		if err := bw.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	for n := range sc.NodePods {
		node := w.nodes[n]
		base := AteletNamespace + "_" + node.ateletPod + "_" + AteletContainer
		lg := PodLog{Namespace: AteletNamespace, Pod: node.ateletPod, Container: AteletContainer, Current: filepath.Join(PhaseLogDir, base+".log")}
		rs := ateletLines[n]
		noPrefix := func(*simRecord) string { return "" }
		if n == 0 && len(rs) > 1 {
			// The first atelet restarted mid-run: its earlier records are
			// in the previous container log.
			mid := len(rs) / 2
			lg.Previous, lg.Restarts = filepath.Join(PhaseLogDir, base+".previous.log"), 1
			if err := write(base+".previous.log", rs[:mid], noPrefix); err != nil {
				return err
			}
			rs = rs[mid:]
		}
		if err := write(base+".log", rs, noPrefix); err != nil {
			return err
		}
		pt.Logs = append(pt.Logs, lg)
	}
	for i := 0; i < w.nWorker; i++ {
		if !alive(i) {
			continue
		}
		p := w.pods[i]
		base := p.ns + "_" + p.name + "_" + p.container
		lg := PodLog{Namespace: p.ns, Pod: p.name, Container: p.container, Current: filepath.Join(PhaseLogDir, base+".log"), Unreadable: i == lastWorker}
		pt.Logs = append(pt.Logs, lg)
		if lg.Unreadable {
			continue
		}
		stamp := func(rc *simRecord) string {
			return time.UnixMicro(rc.us).UTC().Format("2006-01-02T15:04:05.000000000Z") + " "
		}
		if err := write(base+".log", workerLines[i], stamp); err != nil {
			return err
		}
	}
	for _, l := range pt.Logs {
		if l.Unreadable {
			pt.PodsFailed++
		} else {
			pt.PodsRead++
		}
	}

	// The truth: the records an export keeps, paired by construction.
	type key struct{ layer, op, class, kind, scope, phase string }
	vals := map[key][]float64{}
	for _, rc := range recs {
		if rc.dropped || (rc.layer == "ateom" && rc.lost) {
			continue
		}
		pt.Records++
		if rc.layer == "atelet" {
			if rc.op == "checkpoint" {
				pt.AteletCheckpoint++
			} else {
				pt.AteletRestore++
			}
		}
		if rc.failed {
			pt.Failed++
			continue
		}
		class, kind := rc.class, rc.kind
		if rc.layer == "ateom" {
			class, kind = "", ""
			if a := rc.partner; !a.dropped {
				class, kind = a.class, a.kind
			}
		}
		phases := slices.Clone(rc.phases)
		if u, ok := rc.unattributed(class); ok {
			phases = append(phases, simPhase{"unattributed", u})
		}
		for _, p := range phases {
			k := key{rc.layer, rc.op, orDash(class), orDash(kind), orDash(rc.scope), p.name}
			vals[k] = append(vals[k], p.v)
		}
	}
	keys := make([]key, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.layer, b.layer), cmp.Compare(a.op, b.op), cmp.Compare(a.class, b.class),
			cmp.Compare(a.kind, b.kind), cmp.Compare(a.scope, b.scope), cmp.Compare(phaseRank(a.phase), phaseRank(b.phase)))
	})
	for _, k := range keys {
		v := vals[k]
		slices.Sort(v)
		name := func(s string) string {
			if s == "-" {
				return "none"
			}
			return s
		}
		ms := func(x float64) string { return artifact.FormatFloat(x * 1000) }
		pt.Rows = append(pt.Rows, PhaseRow{
			Metric: strings.Join([]string{"phase", k.layer, k.op, name(k.class), name(k.kind), name(k.scope), k.phase}, "_"),
			Measurements: [][2]string{
				{"layer", k.layer}, {"op", k.op}, {"class", name(k.class)}, {"kind", name(k.kind)}, {"scope", name(k.scope)},
				{"phase", k.phase}, {"count", strconv.Itoa(len(v))},
				{"p50_ms", ms(inclusiveQuantile(v, 50))}, {"p90_ms", ms(inclusiveQuantile(v, 90))},
				{"p95_ms", ms(inclusiveQuantile(v, 95))}, {"max_ms", ms(v[len(v)-1])},
			},
		})
		pt.Values = append(pt.Values, v)
	}
	t.Phases = pt
	return nil
}

// ClassOf is the sandbox class of a worker pod.
func ClassOf(microVM bool) string {
	if microVM {
		return "microvm"
	}
	return "gvisor"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (rc *simRecord) get(name string) float64 {
	for _, p := range rc.phases {
		if p.name == name {
			return p.v
		}
	}
	return 0
}

// unattributed is the spec's residual for the record's class.
func (rc *simRecord) unattributed(class string) (float64, bool) {
	if rc.op != "checkpoint" {
		return 0, false
	}
	total := rc.get("total")
	switch {
	case rc.layer == "atelet":
		return total - (rc.get("sandbox_assets") + rc.get("ateom_checkpoint") + rc.get("persist")), true
	case class == "microvm":
		return total - (rc.get("prep") + rc.get("pause") + math.Max(math.Max(rc.get("snapshot"), rc.get("durable_dir")), rc.get("rootfs_upper")) + rc.get("teardown")), true
	case class == "gvisor":
		return total - (rc.get("pause") + rc.get("checkpoint")), true
	}
	return 0, false
}

// inclusiveQuantile is Python's statistics.quantiles(method="inclusive")
// at pct over sorted values (N = 1: the value).
func inclusiveQuantile(x []float64, pct int) float64 {
	if len(x) == 1 {
		return x[0]
	}
	m := len(x) - 1
	j, d := pct*m/100, pct*m%100
	return (float64(x[j]*float64(100-d)) + float64(x[j+1]*float64(d))) / 100
}

// format is the record's JSON line.
func (rc *simRecord) format() string {
	var b strings.Builder
	msg := "Restore timing breakdown"
	if rc.op == "checkpoint" {
		msg = "Checkpoint timing breakdown"
	}
	fmt.Fprintf(&b, `{"time":%q,"level":"INFO","msg":%q,"ate.actor.uid":%q`,
		time.UnixMicro(rc.us).UTC().Format("2006-01-02T15:04:05.000000Z07:00"), msg, rc.uid)
	if rc.name != "" {
		fmt.Fprintf(&b, `,"ate.actor.name":%q`, rc.name)
	}
	fmt.Fprintf(&b, `,"ate.snapshot.scope":%q`, rc.scope)
	prefix := "ateom.actor."
	if rc.layer == "atelet" {
		fmt.Fprintf(&b, `,"ate.snapshot.kind":%q,"ate.sandbox.class":%q`, rc.kind, rc.class)
		prefix = "ate.actor."
	}
	if rc.failed {
		b.WriteString(`,"error.type":"DeadlineExceeded"`)
	}
	for _, p := range rc.phases {
		fmt.Fprintf(&b, `,"%s%s.duration.%s":%s`, prefix, rc.op, p.name, strconv.FormatFloat(p.v, 'g', -1, 64))
	}
	b.WriteString("}")
	return b.String()
}
