package dashboardtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// expectedNull lists, per dashboard uid and panel id, the displayed
// fields that are null on the demo run and why: it has no Kubernetes
// cluster behind it (datasource kubernetesAccess off, export
// --no-cluster-facts), so cluster facts, the frontiers built on them and
// the Kubernetes OOM counts are not measured; the simulator writes no
// status.json, so the Locust exit code is unknown. Every other displayed
// field must have data. "*" means every field of the panel.
var expectedNull = map[string]map[int][]string{
	"density-run-overview": {
		2: {"actors per node"}, 3: {"actors per vcpu"}, 4: {"actors per gb ram"},
		5: {"actors per pod p50"}, 6: {"actors per pod p99"}, 7: {"multi actor worker"},
		9:  {"Locust exit code"},
		38: {"Worker restarts", "OOM-killed worker pods", "Evicted pods", "Worker pods lost"},
		39: {"*"},
	},
	"density-runs-over-time": {
		2: {"actors per node"}, 3: {"actors per vcpu"}, 4: {"actors per gb ram"},
		5:  {"actors per pod p50", "actors per pod p90", "actors per pod p99"},
		14: {"Actors / node", "Actors / vCPU", "Actors / GiB", "Actors / pod p50", "Actors / pod p90", "Actors / pod p99", "Multi-actor worker", "Locust exit code"},
		15: {"Actors / node"},
	},
}

// kubeNull are the expected nulls that must come with a notice saying why
// (Kubernetes facts); the exit code has no notice.
var kubeNullExempt = []string{"Locust exit code"}

// panelResult is one line of the smoke log.
type panelResult struct {
	dash, title, kind string
	id                int
	frames, rows      int
	fields            int
	nulls             []string
	err               string
}

func (r panelResult) String() string {
	status := "ok"
	if r.err != "" {
		status = "FAIL: " + r.err
	}
	nulls := ""
	if len(r.nulls) > 0 {
		nulls = fmt.Sprintf("; null as expected: %s", strings.Join(r.nulls, ", "))
	}
	return fmt.Sprintf("%-22s #%-2d %-52q %-10s → %d frame(s), %d row(s), %d field(s)%s; %s",
		r.dash, r.id, r.title, r.kind, r.frames, r.rows, r.fields, nulls, status)
}

// smokeScenario is the simulated run a dashboard is smoke-tested on when
// it is not the demo run.
var smokeScenario = map[string]string{"density-ladder": "ladder-steps"}

func TestDashboardsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Prometheus with the demo run")
	}
	dashes := loadDashboards(t)
	prov := loadProvisioning(t)
	envs := map[string]*smokeEnv{}
	uids := map[string]dashDoc{}
	for _, f := range dashes {
		uids[f.doc.UID] = f.doc
	}

	var results []panelResult
	for _, f := range dashes {
		d := f.doc
		scenario := smokeScenario[d.UID]
		if scenario == "" {
			scenario = "demo"
		}
		e := envs[scenario]
		if e == nil {
			e = newSmokeEnv(t, prov, scenario)
			envs[scenario] = e
		}
		// The dashboard range: the demo run for the overview; a week
		// around it for the trend (a nightly range holding the run).
		from, to := e.truth.Start-600, e.truth.End+600
		if d.UID == "density-runs-over-time" {
			from, to = e.truth.Start-7*86400, e.truth.End+86400
		}
		vars, varLog := e.resolveVariables(t, d, from, to)
		for _, l := range varLog {
			t.Logf("%s: %s", d.UID, l)
		}
		if got := vars["run"]; !slices.Contains(got, e.runID) {
			t.Errorf("%s: $run resolved to %v, want the demo run %s", d.UID, got, e.runID)
		}
		vars["__url_time_range"] = []string{fmt.Sprintf("from=%d&to=%d", from*1000, to*1000)}

		t.Run(d.UID+"/annotations", func(t *testing.T) { e.checkAnnotations(t, d, vars, from, to) })

		for _, p := range d.flat() {
			if p.Type == "row" || p.Type == "text" {
				continue
			}
			res := panelResult{dash: d.UID, id: p.ID, title: p.Title, kind: p.Type, err: "not run (-run filter)"}
			t.Run(fmt.Sprintf("%s/%d %s", d.UID, p.ID, p.Title), func(t *testing.T) {
				res.err = ""
				defer func() {
					if t.Failed() && res.err == "" {
						res.err = "see test log"
					}
				}()
				e.smokePanel(t, &res, d, p, vars, from, to, uids)
			})
			results = append(results, res)
		}
	}

	var b strings.Builder
	counts := map[string]int{}
	for _, r := range results {
		counts[r.dash]++
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	t.Logf("dashboard smoke results (%v data panels):\n%s", counts, b.String())
}
