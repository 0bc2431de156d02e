package dashboardtest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	sdkdashboard "github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// dashFile is one dashboard JSON file, decoded twice: strictly with the
// foundation SDK (the check) and loosely into dashDoc (to walk it).
type dashFile struct {
	file string
	raw  []byte
	doc  dashDoc
}

type dashDoc struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Time          struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Panels     []dashPanel `json:"panels"`
	Templating struct {
		List []dashVar `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []dashAnno `json:"list"`
	} `json:"annotations"`
}

type dashRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashPanel struct {
	ID      int      `json:"id"`
	Type    string   `json:"type"`
	Title   string   `json:"title"`
	DS      *dashRef `json:"datasource"`
	GridPos struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets         []json.RawMessage `json:"targets"`
	Transformations []dashTransform   `json:"transformations"`
	FieldConfig     json.RawMessage   `json:"fieldConfig"`
	Options         json.RawMessage   `json:"options"`
	Collapsed       bool              `json:"collapsed"`
	Panels          []dashPanel       `json:"panels"`
	// TimeFrom is the panel's relative time override ("3h": the last
	// three hours before now, whatever the dashboard range).
	TimeFrom string `json:"timeFrom"`
}

type dashTransform struct {
	ID      string          `json:"id"`
	Options json.RawMessage `json:"options"`
	Filter  *struct {
		ID      string `json:"id"`
		Options string `json:"options"`
	} `json:"filter"`
	Disabled bool `json:"disabled"`
}

type dashVar struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	DS         *dashRef        `json:"datasource"`
	Query      json.RawMessage `json:"query"`
	Current    json.RawMessage `json:"current"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
}

type dashAnno struct {
	Name    string          `json:"name"`
	BuiltIn int             `json:"builtIn"`
	DS      *dashRef        `json:"datasource"`
	Enable  bool            `json:"enable"`
	Target  json.RawMessage `json:"target"`
}

// dashFieldConfig is the part of a panel's fieldConfig the checks read.
type dashFieldConfig struct {
	Defaults struct {
		Unit string `json:"unit"`
	} `json:"defaults"`
	Overrides []struct {
		Matcher struct {
			ID      string `json:"id"`
			Options string `json:"options"`
		} `json:"matcher"`
		Properties []struct {
			ID    string          `json:"id"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	} `json:"overrides"`
}

type dashLink struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	TargetBlank bool   `json:"targetBlank"`
}

// flat lists every panel, those of collapsed rows included (rows too).
func (d dashDoc) flat() []dashPanel {
	var out []dashPanel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

func (d dashDoc) variable(name string) (dashVar, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return dashVar{}, false
}

// registerDensityQuery teaches the foundation SDK's runtime (a process-wide
// registry) this plugin's query model, so panel targets decode strictly.
var registerDensityQuery = sync.OnceFunc(func() {
	plugins.RegisterDefaultPlugins()
	decode := func(raw []byte) (variants.Dataquery, error) {
		q, err := decodeDensityQuery(raw)
		return q, err
	}
	cog.NewRuntime().RegisterDataqueryVariant(variants.DataqueryConfig{
		Identifier: dashPluginID, DataqueryUnmarshaler: decode, StrictDataqueryUnmarshaler: decode,
	})
})

func loadDashboards(t *testing.T) []dashFile {
	t.Helper()
	registerDensityQuery()
	paths, err := filepath.Glob(filepath.Join(dashRepo, "dashboards", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards/*.json found (%v)", err)
	}
	var out []dashFile
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := dashFile{file: filepath.Base(p), raw: raw}
		var d sdkdashboard.Dashboard
		if err := sdkError(d.UnmarshalJSONStrict(raw)); err != nil {
			t.Errorf("%s: not a strictly valid Grafana dashboard: %v", f.file, err)
		} else if err := sdkError(d.Validate()); err != nil {
			t.Errorf("%s: dashboard validation: %v", f.file, err)
		}
		if err := json.Unmarshal(raw, &f.doc); err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		out = append(out, f)
	}
	return out
}

// sdkError drops the empty cog.BuildErrors some generated decoders return
// for "no error" (a nil slice in a non-nil error interface).
func sdkError(err error) error {
	var be cog.BuildErrors
	if errors.As(err, &be) && len(be) == 0 {
		return nil
	}
	return err
}
