package frontier_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"testing"

	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// pyReference is cluster-facts.md's trial_summary written directly in
// Python from the spec text, as the original tool would compute it. It
// reads a list of cases on stdin and prints, per case, the measurements as
// [key, value] pairs.
const pyReference = `
import json, re, sys

def snake(n):
    s = re.sub(r'(.)([A-Z][a-z]+)', r'\1_\2', n)
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', s).lower()
    return re.sub(r'[^a-z0-9]+', '_', s).strip('_')

def joined(vs):
    return ",".join(str(v) for v in vs) if vs else None

out = []
for c in json.load(sys.stdin):
    f = c["facts"]
    m = {}
    m["machine_type"] = joined(f["machine_type"])
    m["node_count"] = None if f["node_count"] is None else str(f["node_count"])
    m["allocatable_cores"] = None if f["cores"] is None else str(float(f["cores"]))
    m["allocatable_ram_gb"] = None if f["ram"] is None else str(float(f["ram"]))
    m["worker_pod_count"] = None if f["pods"] is None else str(f["pods"])
    m["kubernetes_version"] = joined(f["versions"])
    m["worker_actor_capacity"] = joined(f["capacity"])
    m["worker_memory_limit_gb"] = joined([float(x) for x in f["memory"]] if f["memory"] else None)
    m["sandbox_class"] = joined(f["sandbox"])
    m["run_start"] = str(c["start"])
    m["run_end"] = str(c["end"])
    md = {}
    if c["env"].strip():
        md.update(json.loads(c["env"]))
    if c["flag"].strip():
        md.update(json.loads(c["flag"]))
    for k, v in md.items():
        if v is None:
            continue
        m["metadata_" + k] = v if isinstance(v, str) else json.dumps(v)

    per_user = c["per_user"] or 1
    observed = [u for u in c["observed"] or [] if u > 0]
    peak = max(observed) if observed else (c["users"] or None)
    peak_actors = None if peak is None else peak * per_user
    ratios = []
    if observed and f["pods"]:
        ratios = sorted(round(u * per_user / f["pods"], 4) for u in observed)
    def pct(q):
        if not ratios:
            return None
        return round(ratios[min(int(len(ratios) * q), len(ratios) - 1)], 2)
    p50, p90, p99 = pct(0.5), pct(0.9), pct(0.99)
    m["multi_actor_worker"] = None if p50 is None else ("true" if p50 > 1 else "false")
    for key, d in (("actors_per_node", f["node_count"]), ("actors_per_vcpu", f["cores"]), ("actors_per_gb_ram", f["ram"])):
        m[key] = None if (peak_actors is None or not d) else str(round(peak_actors / d, 2))
    m["actors_per_pod_p50"] = None if p50 is None else str(p50)
    m["actors_per_pod_p90"] = None if p90 is None else str(p90)
    m["actors_per_pod_p99"] = None if p99 is None else str(p99)

    fr = {}
    try:
        for name, req, fail in c["stats"] or []:
            if not name:
                continue
            req, fail = int(req), int(fail)
            key = "aggregate_failure_ratio" if name == "Aggregated" else snake(name) + "_failure_ratio"
            fr[key] = round(fail / req, 4) if req else None
    except ValueError:
        fr = {"aggregate_failure_ratio": None}
    if "aggregate_failure_ratio" in fr:
        m["aggregate_failure_ratio"] = None if fr["aggregate_failure_ratio"] is None else str(fr["aggregate_failure_ratio"])
    for k, v in fr.items():
        if k != "aggregate_failure_ratio":
            m[k] = None if v is None else str(v)
    out.append([[k, v] for k, v in m.items()])
print(json.dumps(out))
`

type pyFacts struct {
	MachineType []string  `json:"machine_type"`
	NodeCount   *int      `json:"node_count"`
	Cores       *float64  `json:"cores"`
	RAM         *float64  `json:"ram"`
	Pods        *int      `json:"pods"`
	Versions    []string  `json:"versions"`
	Capacity    []int64   `json:"capacity"`
	Memory      []float64 `json:"memory"`
	Sandbox     []string  `json:"sandbox"`
}

type pyCase struct {
	Facts    pyFacts     `json:"facts"`
	Start    int64       `json:"start"`
	End      int64       `json:"end"`
	Env      string      `json:"env"`
	Flag     string      `json:"flag"`
	PerUser  float64     `json:"per_user"`
	Users    float64     `json:"users"`
	Observed []float64   `json:"observed"`
	Stats    [][3]string `json:"stats"`
}

func randomCase(r *rand.Rand) pyCase {
	maybe := func() bool { return r.IntN(6) != 0 }
	var c pyCase
	if maybe() {
		n := r.IntN(40)
		c.Facts.NodeCount = ptr(n)
		c.Facts.Cores = ptr(percentile.Round(float64(n)*r.Float64()*64, 2))
	}
	if maybe() {
		c.Facts.RAM = ptr(percentile.Round(r.Float64()*2000, 2))
	}
	if maybe() {
		c.Facts.Pods = ptr(r.IntN(300))
	}
	if maybe() {
		c.Facts.MachineType = []string{"c3-standard-8", "n2-standard-4"}[:1+r.IntN(2)]
		c.Facts.Versions = []string{"v1.37.2"}
		c.Facts.Capacity = []int64{1, 50, 1000}[r.IntN(3):]
		c.Facts.Memory = []float64{0.5, 15.75, 16}[r.IntN(3):]
		c.Facts.Sandbox = []string{"gvisor", "microvm"}[r.IntN(2):]
	}
	c.Start = 1772366400 + int64(r.IntN(1e6))
	c.End = c.Start + int64(r.IntN(7200))
	envs := []string{"", `{"cluster": "lab", "n": 3, "r": 3.0}`, `{"a": {"b": [1, 2.50, "é", null]}, "t": true, "z": null}`, `{"x": 1e5, "y": -0, "big": 123456789012345678901234}`}
	flags := []string{"", `{"cluster": "prod"}`, `{"n": null, "new": "v"}`, `{"a": "flag", "q": [], "o": {}}`}
	c.Env, c.Flag = envs[r.IntN(len(envs))], flags[r.IntN(len(flags))]
	c.PerUser = []float64{0, 1, 2, 0.5, 3, 12.5}[r.IntN(6)]
	c.Users = []float64{0, 10, 250}[r.IntN(3)]
	for range r.IntN(30) {
		switch r.IntN(4) {
		case 0:
			c.Observed = append(c.Observed, float64(r.IntN(500)))
		case 1:
			c.Observed = append(c.Observed, float64(r.IntN(4000))/8)
		case 2:
			c.Observed = append(c.Observed, 0)
		default:
			c.Observed = append(c.Observed, float64(r.IntN(50)+1))
		}
	}
	names := []string{"ResumeActorFirstResume", "DurDirWrite", "HTTPGet", "/api/items?id", "Spawn Actor", "getItem", "Aggregated", "http get"}
	for range r.IntN(8) {
		req := fmt.Sprint(r.IntN(3) * r.IntN(5000))
		fail := fmt.Sprint(r.IntN(50))
		if r.IntN(25) == 0 {
			fail = "n/a"
		}
		c.Stats = append(c.Stats, [3]string{names[r.IntN(len(names))], req, fail})
	}
	return c
}

// TestMatchesPythonReference runs random inputs through TrialSummary and
// through the spec written in Python, and requires identical rows.
// python3 is required: a missing python3 fails the test, never skips.
func TestMatchesPythonReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is required for the reference comparison: %v", err)
	}
	r := rand.New(rand.NewPCG(4, 2026))
	cases := make([]pyCase, 400)
	for i := range cases {
		cases[i] = randomCase(r)
	}
	in, _ := json.Marshal(cases)
	cmd := exec.CommandContext(t.Context(), py, "-c", pyReference)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	var want [][][2]*string
	if err := json.Unmarshal(res, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		md, err := frontier.ParseMetadata(c.Env, c.Flag)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var stats []runs.OperationStats
		for j, s := range c.Stats {
			stats = append(stats, runs.OperationStats{Name: s[0], Requests: s[1], Failures: s[2], Line: j + 2})
		}
		m, _ := frontier.TrialSummary(frontier.Inputs{
			Facts: clusterfacts.Facts{
				MachineType: c.Facts.MachineType, NodeCount: c.Facts.NodeCount, AllocatableCores: c.Facts.Cores,
				AllocatableRAMGB: c.Facts.RAM, WorkerPodCount: c.Facts.Pods, KubernetesVersion: c.Facts.Versions,
				WorkerActorCapacity: c.Facts.Capacity, WorkerMemoryLimitGB: c.Facts.Memory, SandboxClass: c.Facts.Sandbox,
			},
			ObservedUsers: c.Observed, Users: c.Users, ActorsPerUser: c.PerUser,
			Stats: stats, Metadata: md, RunStart: c.Start, RunEnd: c.End,
		})
		got := make([][2]*string, len(m))
		for j, x := range m {
			got[j] = [2]*string{ptr(x.Key), x.Value}
		}
		if !reflect.DeepEqual(got, want[i]) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want[i])
			t.Fatalf("case %d differs from the Python reference\ninput %+v\n got %s\nwant %s", i, c, g, w)
		}
	}
}
