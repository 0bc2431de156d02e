package dashboardtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// checkIncludes: src/plugin.json lists every dashboard (so the build
// bundles it and the datasource's Dashboards tab offers it) and nothing
// else; the dashboards have one home (no copy under src/).
func checkIncludes(t *testing.T, dashes []dashFile) {
	raw, err := os.ReadFile(filepath.Join(dashRepo, "src", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Includes []struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"includes"`
	}
	if err := json.Unmarshal(raw, &pj); err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, in := range pj.Includes {
		if in.Type == "dashboard" {
			listed[in.Path] = in.Name
		}
	}
	for _, f := range dashes {
		p := "dashboards/" + f.file
		name, ok := listed[p]
		if !ok {
			t.Errorf("src/plugin.json includes lack %s", p)
		} else if name != f.doc.Title {
			t.Errorf("src/plugin.json names %s %q, the dashboard is titled %q", p, name, f.doc.Title)
		}
		delete(listed, p)
	}
	for p := range listed {
		t.Errorf("src/plugin.json includes %s, which is not in dashboards/", p)
	}
	if m, _ := filepath.Glob(filepath.Join(dashRepo, "src", "dashboards", "*.json")); len(m) > 0 {
		t.Errorf("dashboards copied under src/: %v (keep one copy, in dashboards/)", m)
	}
}

// checkProviderAndCompose: the dashboards provider reads the directory
// docker-compose mounts dashboards/ at, and the results store of the
// provisioned datasource is the volume demo-init fills.
func checkProviderAndCompose(t *testing.T, prov map[string]provDatasource) {
	raw, err := os.ReadFile(filepath.Join(dashRepo, "provisioning", "dashboards", "dashboards.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var pf struct {
		APIVersion int `json:"apiVersion"`
		Providers  []struct {
			Name                  string `json:"name"`
			OrgID                 int    `json:"orgId"`
			Folder                string `json:"folder"`
			FolderUID             string `json:"folderUid"`
			Type                  string `json:"type"`
			DisableDeletion       bool   `json:"disableDeletion"`
			AllowUIUpdates        bool   `json:"allowUiUpdates"`
			UpdateIntervalSeconds int    `json:"updateIntervalSeconds"`
			Options               struct {
				Path                      string `json:"path"`
				FoldersFromFilesStructure bool   `json:"foldersFromFilesStructure"`
			} `json:"options"`
		} `json:"providers"`
	}
	if err := yaml.UnmarshalStrict(raw, &pf); err != nil {
		t.Fatalf("provisioning/dashboards/dashboards.yml: %v", err)
	}
	if len(pf.Providers) != 1 || pf.Providers[0].Type != "file" {
		t.Fatalf("want one file provider, got %+v", pf.Providers)
	}
	providerPath := pf.Providers[0].Options.Path

	raw, err = os.ReadFile(filepath.Join(dashRepo, "docker-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image   string   `json:"image"`
			Volumes []string `json:"volumes"`
			Command any      `json:"command"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	mounts := func(svc string) map[string]string { // container path -> source
		out := map[string]string{}
		for _, v := range compose.Services[svc].Volumes {
			parts := strings.Split(v, ":")
			if len(parts) >= 2 {
				out[parts[1]] = parts[0]
			}
		}
		return out
	}
	g := mounts("grafana")
	if g[providerPath] != "./dashboards" {
		t.Errorf("docker-compose grafana mounts %q at the provider path %s, want ./dashboards", g[providerPath], providerPath)
	}
	store, _ := prov["substrate-density"].JSONData["resultsStore"].(string)
	storePath := strings.TrimPrefix(store, "file://")
	if src := g[storePath]; src == "" || mounts("demo-init")["/results"] != src {
		t.Errorf("the results store %s is not the volume demo-init fills (grafana: %q, demo-init /results: %q)", store, src, mounts("demo-init")["/results"])
	}
	if mounts("prometheus")["/prometheus"] == "" || mounts("prometheus")["/prometheus"] != mounts("demo-init")["/prometheus"] {
		t.Errorf("prometheus does not serve the volume demo-init backfills")
	}
	if !strings.Contains(fmt.Sprint(compose.Services["prometheus"].Command), "retention.time=100y") {
		t.Errorf("prometheus must keep the 2024 demo blocks (--storage.tsdb.retention.time=100y)")
	}
	if u := prov["substrate-density"].URL; u != "http://prometheus:9090" || prov["prometheus"].URL != u {
		t.Errorf("datasource urls %q / %q, want the compose prometheus service", u, prov["prometheus"].URL)
	}
}
