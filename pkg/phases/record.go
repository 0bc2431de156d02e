// Package phases turns the suspend/resume timing breakdown records of the
// atelet and of the worker's runtime (ateom) into per-phase percentiles
// (phase-breakdown.md): tolerant streaming parsing of log files, pairing of
// the two layers, the unattributed residual, grouping, percentiles and the
// stats.jsonl rows. It knows nothing of Kubernetes or Grafana: every input
// is an io.Reader.
package phases

import "strings"

// Layers and operations of a record.
const (
	LayerAtelet = "atelet"
	LayerAteom  = "ateom"

	OpRestore    = "restore"
	OpCheckpoint = "checkpoint"
)

// Messages of the timing breakdown records (both layers use both).
const (
	MsgRestore    = "Restore timing breakdown"
	MsgCheckpoint = "Checkpoint timing breakdown"
)

// Phase names the arithmetic refers to.
const (
	PhaseTotal           = "total"
	PhaseUnattributed    = "unattributed"
	PhaseAteomRestore    = "ateom_restore"
	PhaseAteomCheckpoint = "ateom_checkpoint"
	PhasePersist         = "persist"
	PhaseSandboxAssets   = "sandbox_assets"
)

// Sandbox classes with an unattributed rule for the ateom checkpoint.
const (
	ClassMicroVM = "microvm"
	ClassGVisor  = "gvisor"
)

// prefix is one duration-key prefix and the layer and op it stands for.
type prefix struct {
	key, layer, op string
}

// prefixes are tried in this order; the first with at least one numeric
// phase wins.
var prefixes = [...]prefix{
	{"ate.actor.restore.duration.", LayerAtelet, OpRestore},
	{"ate.actor.checkpoint.duration.", LayerAtelet, OpCheckpoint},
	{"ateom.actor.restore.duration.", LayerAteom, OpRestore},
	{"ateom.actor.checkpoint.duration.", LayerAteom, OpCheckpoint},
}

// knownPhases is the report order; unknown phases sort after these, by name.
var knownPhases = [...]string{
	"volume_mount", "manifest_fetch", "sandbox_assets", "download", "oci_unpack",
	"ateom_restore", "prep", "egress_prepare", "net_setup", "bundles", "upper_join", "lowers",
	"pause_rootfs", "pause_create", "pause_restore", "app_rootfs", "app_create",
	"app_restore", "tap", "vmm_launch", "vm_restore", "resume", "wakeup_probe", "activate",
	"pause", "checkpoint", "snapshot", "durable_dir", "rootfs_upper", "ateom_checkpoint",
	"teardown", "persist", "unattributed", "total",
}

var knownIndex = func() map[string]int {
	m := make(map[string]int, len(knownPhases))
	for i, p := range knownPhases {
		m[p] = i
	}
	return m
}()

// ComparePhases orders phase names: known phases in report order, then
// unknown ones by name.
func ComparePhases(a, b string) int {
	ia, oka := knownIndex[a]
	ib, okb := knownIndex[b]
	switch {
	case oka && okb:
		return ia - ib
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// Phase is one measured phase of a record, in seconds.
type Phase struct {
	Name    string
	Seconds float64
}

// Record is one timing breakdown record of one operation and layer.
type Record struct {
	Layer, Op string
	// Time is the record's time in integer microseconds since the epoch;
	// valid only when HasTime (a record without a time counts but never
	// pairs).
	Time    int64
	HasTime bool

	UID, Name, Atespace            string
	TemplateName, TemplateAtespace string
	Scope, Kind, Class             string
	// Failed: the record has the key error.type (counted, never in
	// percentiles).
	Failed bool
	// Phases in input order; a phase that never ran is absent.
	Phases []Phase
	// Source names where the record was read (a pod or a file), for people.
	Source string
	// Pair is the index of the record of the other layer it was paired with
	// (set by Analyze), -1 when unpaired.
	Pair int
}

// Get returns the value of a phase.
func (r *Record) Get(name string) (float64, bool) {
	for _, p := range r.Phases {
		if p.Name == name {
			return p.Seconds, true
		}
	}
	return 0, false
}

// value is Get with 0 for a missing phase (the residual's rule).
func (r *Record) value(name string) float64 {
	v, _ := r.Get(name)
	return v
}

func (r *Record) set(name string, v float64) {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			r.Phases[i].Seconds = v
			return
		}
	}
	r.Phases = append(r.Phases, Phase{name, v})
}
