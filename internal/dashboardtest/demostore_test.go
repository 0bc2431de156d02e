package dashboardtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/substrate/density/internal/demo"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
)

// TestDashboardsOnDemoStore runs the queries of the run overview, the
// trend and the ladder dashboards through the plugin over gRPC against what `mage
// demoServe` and the compose stack serve: the demo run in Prometheus and
// the demo store (`mage demoStore`) as the results store. Every data panel
// must draw a non-null value: the overview over the demo run, the trend
// over the store's last month (its frontiers, change points and compare
// panels included), the ladder over the store's ladder run (its stored
// ladder rows).
func TestDashboardsOnDemoStore(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Prometheus with the demo run")
	}
	tmp := t.TempDir()
	runDir, storeDir := filepath.Join(tmp, "demo-run"), filepath.Join(tmp, "demo-store")
	var msg, errOut bytes.Buffer
	if code := demo.DemoStore(context.Background(), runDir, storeDir, &msg, &errOut); code != 0 {
		t.Fatalf("DemoStore: exit %d\n%s\n%s", code, msg.String(), errOut.String())
	}
	r, srv := promCache.Prometheus(t, demo.Scenario)
	tr := r.Truth
	now := time.Now()

	prov := loadProvisioning(t)
	s := provisionedSettings(t, prov, 2, srv.URL, storeDir)
	e := &smokeEnv{truth: tr, now: now, runID: runs.StoreRunID(tr.TestName, tr.Start, tr.Tag), client: pluginClient,
		pc: backend.PluginContext{OrgID: 1, PluginID: dashPluginID, DataSourceInstanceSettings: s}}

	var log []string
	for _, f := range loadDashboards(t) {
		d := f.doc
		var from, to int64
		switch d.UID {
		case "density-run-overview":
			from, to = tr.Start-600, tr.End+600
		case "density-runs-over-time":
			from, to = now.Add(-31*24*time.Hour).Unix(), now.Unix()
		case "density-ladder":
			ladder := ladderRun(t, storeDir)
			from, to = ladder.Start-600, ladder.End+600
		default:
			t.Fatalf("dashboard %s: no range for the demo store", d.UID)
		}
		vars, _ := e.resolveVariables(t, d, from, to)
		vars["__url_time_range"] = []string{fmt.Sprintf("from=%d&to=%d", from*1000, to*1000)}
		for _, pn := range d.flat() {
			if pn.Type == "row" || pn.Type == "text" {
				continue
			}
			var targets []densityQuery
			for _, raw := range pn.Targets {
				q, err := decodeDensityQuery(raw)
				if err != nil {
					t.Fatal(err)
				}
				targets = append(targets, q)
			}
			pfrom, pto := from, to
			if pn.TimeFrom != "" {
				if dur, err := time.ParseDuration(pn.TimeFrom); err == nil {
					pto = now.Unix()
					pfrom = pto - int64(dur.Seconds())
				}
			}
			frames, _, err := e.query(t, targets, vars, pfrom, pto)
			if err != nil {
				t.Errorf("%s #%d %q: %v", d.UID, pn.ID, pn.Title, err)
				continue
			}
			if frames, err = applyTransforms(frames, pn.Transformations); err != nil {
				t.Errorf("%s #%d %q: transformations: %v", d.UID, pn.ID, pn.Title, err)
				continue
			}
			rows, values := 0, 0
			for _, fr := range frames {
				rows += fr.Rows()
				for _, fd := range fr.Fields {
					for i := 0; i < fd.Len(); i++ {
						if !cellNull(fd, i) && !isTimeField(fd) {
							values++
						}
					}
				}
			}
			log = append(log, fmt.Sprintf("%-22s #%-2d %-50q %d frame(s), %d row(s), %d value(s)", d.UID, pn.ID, pn.Title, len(frames), rows, values))
			if values == 0 {
				t.Errorf("%s #%d %q (%s) is empty on the demo store: %s", d.UID, pn.ID, pn.Title, pn.Type, describeFrames(frames))
			}
		}
	}
	t.Logf("dashboards on the demo store:\n%s", strings.Join(log, "\n"))
}

// ladderRun is the metadata of the demo store's ladder run: the one run with
// a logs.txt.
func ladderRun(t *testing.T, storeDir string) artifact.ServerMetadata {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(storeDir, "runs", "*", "run_date=*", "run_ts=*", "run_tag=*", runs.FileLogs))
	if err != nil || len(logs) != 1 {
		t.Fatalf("the demo store has %d runs with %s (%v), want one ladder run", len(logs), runs.FileLogs, err)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(logs[0]), runs.FileServerSummary))
	if err != nil {
		t.Fatal(err)
	}
	s, err := artifact.ReadServerSummary(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.Meta
}
