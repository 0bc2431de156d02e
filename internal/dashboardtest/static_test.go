package dashboardtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	sdkdashboard "github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/substrate/density/pkg/plugin"
)

func TestDashboardsStatic(t *testing.T) {
	dashes := loadDashboards(t)
	prov := loadProvisioning(t)
	uids := map[string]dashDoc{}
	for _, f := range dashes {
		uids[f.doc.UID] = f.doc
	}

	for _, f := range dashes {
		d := f.doc
		t.Run(f.file, func(t *testing.T) {
			if d.UID == "" || d.Title == "" {
				t.Errorf("uid %q title %q: both are required (links and provisioning use the uid)", d.UID, d.Title)
			}
			// Grafana 12 writes schemaVersion 41/42; an older one would be
			// migrated on every load.
			if d.SchemaVersion < 41 {
				t.Errorf("schemaVersion %d, want >= 41 (Grafana 12)", d.SchemaVersion)
			}

			defined := map[string]bool{}
			for _, v := range d.Templating.List {
				if defined[v.Name] {
					t.Errorf("variable %q defined twice", v.Name)
				}
				defined[v.Name] = true
			}
			// Every $reference anywhere in the dashboard is a variable of
			// this dashboard or a Grafana built-in.
			var doc any
			if err := json.Unmarshal(f.raw, &doc); err != nil {
				t.Fatal(err)
			}
			jsonStrings(doc, func(s string) {
				for _, name := range varRefs(s) {
					if !defined[name] && !slices.Contains(builtinVars, name) {
						t.Errorf("%q references $%s, which is not a variable of this dashboard", s, name)
					}
				}
			})

			dsVar := checkDatasourceVariable(t, d, prov)
			checkRef := func(where string, ref *dashRef) {
				t.Helper()
				if ref == nil {
					t.Errorf("%s: no datasource reference (the default datasource is not pinned)", where)
					return
				}
				uid := ref.UID
				if uid == "${"+dsVar+"}" || uid == "$"+dsVar {
					uid = "substrate-density"
					if v, ok := d.variable(dsVar); ok {
						uid = currentValues(t, v)[0]
					}
				}
				p, ok := prov[uid]
				if !ok {
					t.Errorf("%s: datasource uid %q (from %q) is not provisioned", where, uid, ref.UID)
					return
				}
				if ref.Type != p.Type {
					t.Errorf("%s: datasource type %q, provisioned %q is %q", where, ref.Type, uid, p.Type)
				}
			}

			for _, v := range d.Templating.List {
				if v.Type != "query" {
					continue
				}
				checkRef("variable "+v.Name, v.DS)
				if _, err := decodeVariableQuery(v.Query); err != nil {
					t.Errorf("variable %s: query %s: %v", v.Name, v.Query, err)
				}
			}
			for _, a := range d.Annotations.List {
				if a.BuiltIn == 1 {
					continue
				}
				checkRef("annotation "+a.Name, a.DS)
				q, err := decodeDensityQuery(a.Target)
				if err == nil {
					err = q.validate()
				}
				if err != nil {
					t.Errorf("annotation %s: %v", a.Name, err)
				} else if q.QueryType != plugin.QueryAnnotations {
					t.Errorf("annotation %s: queryType %q, want annotations", a.Name, q.QueryType)
				}
			}

			ids := map[int]string{}
			occupied := map[[2]int]string{} // grid cell -> panel
			for _, p := range d.flat() {
				where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
				if p.ID <= 0 {
					t.Errorf("%s: panel ids must be set (stable ids keep links and the smoke log meaningful)", where)
				}
				if other, dup := ids[p.ID]; dup {
					t.Errorf("%s: id also used by %q", where, other)
				}
				ids[p.ID] = p.Title
				g := p.GridPos
				if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
					t.Errorf("%s: gridPos %+v outside the 24-column grid", where, g)
				}
				for x := g.X; x < g.X+g.W; x++ {
					for y := g.Y; y < g.Y+g.H; y++ {
						c := [2]int{x, y}
						if o, ok := occupied[c]; ok {
							t.Errorf("%s overlaps %s at (%d,%d)", where, o, x, y)
						}
						occupied[c] = where
					}
				}
				if p.Type == "row" || p.Type == "text" {
					if len(p.Targets) > 0 {
						t.Errorf("%s: a %s panel has queries", where, p.Type)
					}
					continue
				}
				checkRef(where, p.DS)
				if len(p.Targets) == 0 {
					t.Errorf("%s: no queries", where)
				}
				refIDs := map[string]bool{}
				for _, raw := range p.Targets {
					q, err := decodeDensityQuery(raw)
					if err == nil {
						err = q.validate()
					}
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					if refIDs[q.RefID] {
						t.Errorf("%s: duplicate refId %s", where, q.RefID)
					}
					refIDs[q.RefID] = true
					checkRef(where+" "+q.RefID, q.Datasource)
				}
				checkPanelConfig(t, where, p, uids)
			}
		})
	}

	t.Run("plugin.json includes", func(t *testing.T) { checkIncludes(t, dashes) })
	t.Run("provisioning provider and compose", func(t *testing.T) { checkProviderAndCompose(t, prov) })
}

// checkDatasourceVariable finds the datasource variable (the dashboards'
// panels point at ${datasource}) and checks its default is provisioned.
func checkDatasourceVariable(t *testing.T, d dashDoc, prov map[string]provDatasource) string {
	t.Helper()
	for _, v := range d.Templating.List {
		if v.Type != "datasource" {
			continue
		}
		var pluginType string
		if err := json.Unmarshal(v.Query, &pluginType); err != nil || pluginType != dashPluginID {
			t.Errorf("datasource variable %s: query %s, want %q", v.Name, v.Query, dashPluginID)
		}
		cur := currentValues(t, v)
		if len(cur) != 1 || prov[cur[0]].Type != dashPluginID {
			t.Errorf("datasource variable %s: current %v is not a provisioned %s datasource", v.Name, cur, dashPluginID)
		}
		return v.Name
	}
	t.Errorf("no datasource variable: panels could only point at one fixed datasource")
	return ""
}

// currentValues is a variable's saved current value(s).
func currentValues(t *testing.T, v dashVar) []string {
	t.Helper()
	if len(v.Current) == 0 {
		return nil
	}
	var cur struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(v.Current, &cur); err != nil {
		t.Fatalf("variable %s current: %v", v.Name, err)
	}
	var s string
	if json.Unmarshal(cur.Value, &s) == nil {
		return []string{s}
	}
	var l []string
	if err := json.Unmarshal(cur.Value, &l); err != nil {
		t.Fatalf("variable %s current value %s: %v", v.Name, cur.Value, err)
	}
	return l
}

// grafanaUnits are the unit ids the dashboards may use (datasource.md
// "Frames" plus plain numbers); a typo would render raw numbers.
var grafanaUnits = []string{"", "none", "short", "percentunit", "percent", "gbytes", "mbytes", "MiBs", "s", "ms", "reqps"}

// knownTransforms are the transformations the smoke test emulates.
var knownTransforms = []string{"filterFieldsByName", "organize", "joinByField", "sortBy"}

// checkPanelConfig checks units, field-config strictness, transformations
// and data links of one panel.
func checkPanelConfig(t *testing.T, where string, p dashPanel, dashes map[string]dashDoc) {
	t.Helper()
	// The SDK decodes a panel's fieldConfig loosely; decode it strictly.
	var fcs sdkdashboard.FieldConfigSource
	if err := sdkError(fcs.UnmarshalJSONStrict(p.FieldConfig)); err != nil {
		t.Errorf("%s: fieldConfig: %v", where, err)
	}
	var fc dashFieldConfig
	if err := json.Unmarshal(p.FieldConfig, &fc); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if !slices.Contains(grafanaUnits, fc.Defaults.Unit) {
		t.Errorf("%s: unit %q is not one of %v", where, fc.Defaults.Unit, grafanaUnits)
	}
	for _, o := range fc.Overrides {
		if o.Matcher.ID != "byName" && o.Matcher.ID != "byRegexp" {
			t.Errorf("%s: override matcher %q (the smoke test knows byName and byRegexp)", where, o.Matcher.ID)
		}
		if o.Matcher.ID == "byRegexp" {
			if _, err := jsRegexp(o.Matcher.Options); err != nil {
				t.Errorf("%s: override regexp %q: %v", where, o.Matcher.Options, err)
			}
		}
		for _, prop := range o.Properties {
			switch prop.ID {
			case "unit":
				var u string
				_ = json.Unmarshal(prop.Value, &u)
				if !slices.Contains(grafanaUnits, u) {
					t.Errorf("%s: override unit %q", where, u)
				}
			case "links":
				var links []dashLink
				dec := json.NewDecoder(bytes.NewReader(prop.Value))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&links); err != nil {
					t.Errorf("%s: data links: %v", where, err)
				}
				for _, l := range links {
					checkLinkTarget(t, where, l.URL, dashes)
				}
			}
		}
	}
	if p.TimeFrom != "" {
		if _, err := time.ParseDuration(p.TimeFrom); err != nil {
			t.Errorf("%s: timeFrom %q is not a duration the smoke test reads: %v", where, p.TimeFrom, err)
		}
	}
	for _, tr := range p.Transformations {
		if !slices.Contains(knownTransforms, tr.ID) {
			t.Errorf("%s: transformation %q is not one the smoke test emulates (%v)", where, tr.ID, knownTransforms)
		}
	}
	if p.Type == "stat" || p.Type == "bargauge" {
		var o struct {
			ReduceOptions struct {
				Fields string `json:"fields"`
			} `json:"reduceOptions"`
		}
		_ = json.Unmarshal(p.Options, &o)
		if o.ReduceOptions.Fields != "" {
			if _, err := jsRegexp(o.ReduceOptions.Fields); err != nil {
				t.Errorf("%s: reduceOptions.fields %q: %v", where, o.ReduceOptions.Fields, err)
			}
		}
	}
}

// checkLinkTarget checks that a data link opens a provisioned dashboard
// with variables it has.
func checkLinkTarget(t *testing.T, where, raw string, dashes map[string]dashDoc) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Errorf("%s: link %q: %v", where, raw, err)
		return
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "d" {
		t.Errorf("%s: link %q is not a /d/<uid>/… dashboard link", where, raw)
		return
	}
	target, ok := dashes[parts[1]]
	if !ok {
		t.Errorf("%s: link %q opens dashboard uid %q, which is not in dashboards/", where, raw, parts[1])
		return
	}
	for k := range u.Query() {
		if name, ok := strings.CutPrefix(k, "var-"); ok {
			if _, ok := target.variable(name); !ok {
				t.Errorf("%s: link sets var-%s, which %q does not have", where, name, target.Title)
			}
		}
	}
}
