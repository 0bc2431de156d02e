package dashboardtest

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

type provDatasource struct {
	Name           string            `json:"name"`
	UID            string            `json:"uid"`
	Type           string            `json:"type"`
	Access         string            `json:"access"`
	OrgID          int               `json:"orgId"`
	URL            string            `json:"url"`
	IsDefault      bool              `json:"isDefault"`
	Editable       bool              `json:"editable"`
	JSONData       map[string]any    `json:"jsonData"`
	SecureJSONData map[string]string `json:"secureJsonData"`
}

// loadProvisioning reads provisioning/datasources/*.yml strictly (field
// names of Grafana's provisioning format that these files use).
func loadProvisioning(t *testing.T) map[string]provDatasource {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dashRepo, "provisioning", "datasources", "*.y*ml"))
	if len(paths) == 0 {
		t.Fatal("no provisioning/datasources/*.yml")
	}
	out := map[string]provDatasource{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			APIVersion  int              `json:"apiVersion"`
			Datasources []provDatasource `json:"datasources"`
		}
		if err := yaml.UnmarshalStrict(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, d := range f.Datasources {
			if d.UID == "" {
				t.Errorf("%s: datasource %q has no uid (dashboards reference uids)", p, d.Name)
			}
			if _, dup := out[d.UID]; dup {
				t.Errorf("%s: duplicate datasource uid %q", p, d.UID)
			}
			out[d.UID] = d
		}
	}
	return out
}
