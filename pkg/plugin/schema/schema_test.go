package schema

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	sdkapi "github.com/grafana/grafana-plugin-sdk-go/experimental/apis/datasource/v0alpha1"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/pluginschema"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/schemabuilder"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var update = flag.Bool("update", false, "rewrite the committed schema under src/schema/")

const (
	pluginID   = "substrate-density-datasource"
	apiVersion = "v0alpha1"
	// schemaDir is src/schema/ seen from this package.
	schemaDir = "../../../src/schema"
)

// build describes the query types and the settings with schemabuilder.
func build(t *testing.T) *schemabuilder.Builder {
	t.Helper()
	b, err := schemabuilder.NewSchemaBuilder(schemabuilder.BuilderOptions{
		PluginID: []string{pluginID},
		ScanCode: []schemabuilder.CodePaths{{BasePackage: "github.com/substrate/density/pkg/plugin/schema", CodePath: "./"}},
		Enums:    append(Enums(), reflect.TypeFor[KubernetesAccess]()),
	})
	if err != nil {
		t.Fatal(err)
	}
	examples := queryExamples()
	var infos []schemabuilder.QueryTypeInfo
	for _, qt := range QueryTypes() {
		infos = append(infos, schemabuilder.QueryTypeInfo{
			Description:    qt.Description,
			Discriminators: sdkapi.NewDiscriminators("queryType", string(qt.Type)),
			GoType:         qt.GoType,
			Examples:       examples[qt.Type],
		})
	}
	if err := b.AddQueries(infos); err != nil {
		t.Fatal(err)
	}
	if err := b.ConfigureSettings(settingsSchema(t, b), settingsExamples()); err != nil {
		t.Fatal(err)
	}
	return b
}

// settingsSchema is the instance settings: the standard url and basic-auth
// keys, jsonData reflected from JSONData, and the secure keys by name.
func settingsSchema(t *testing.T, b *schemabuilder.Builder) *pluginschema.Settings {
	t.Helper()
	js := b.Reflector().ReflectFromType(reflect.TypeFor[JSONData]())
	js.Version = ""
	raw, err := json.Marshal(js)
	if err != nil {
		t.Fatal(err)
	}
	var jsonData spec.Schema
	if err := json.Unmarshal(raw, &jsonData); err != nil {
		t.Fatal(err)
	}
	s := &spec.Schema{}
	s.Type = spec.StringOrArray{"object"}
	s.Description = "A Substrate Density datasource: the datasource url is the Prometheus URL"
	s.Properties = map[string]spec.Schema{
		"url":           *spec.StringProperty().WithDescription("Prometheus base URL without /api/v1 (http or https)"),
		"basicAuth":     *spec.BoolProperty().WithDescription("Send basic auth to Prometheus (basicAuthUser and the secure basicAuthPassword)"),
		"basicAuthUser": *spec.StringProperty().WithDescription("Basic-auth user"),
		"jsonData":      jsonData,
	}
	var secure []pluginschema.SecureValueInfo
	for _, v := range SecureValues() {
		secure = append(secure, pluginschema.SecureValueInfo{Key: v.Key, Description: v.Description})
	}
	return &pluginschema.Settings{Spec: s, SecureValues: secure}
}

func settingsExamples() *pluginschema.SettingsExamples {
	return &pluginschema.SettingsExamples{Examples: map[string]*spec3.Example{
		"prometheus and store": {ExampleProps: spec3.ExampleProps{
			Description: "Prometheus with a tenant header, a results store and Explore links",
			Value: map[string]any{
				"url": "http://prometheus:9090",
				"jsonData": map[string]any{
					"resultsStore":         "gs://bucket/density",
					"httpHeaderName1":      "X-Scope-OrgID",
					"exploreDatasourceUid": "prometheus",
				},
			},
		}},
	}}
}

func queryExamples() map[QueryType][]sdkapi.QueryExample {
	ex := func(name string, v any) sdkapi.QueryExample {
		return sdkapi.QueryExample{Name: name, SaveModel: sdkapi.AsUnstructured(v)}
	}
	return map[QueryType][]sdkapi.QueryExample{
		QueryTypePSI: {ex("node CPU stall of the latest run", PSIQuery{RunFilter: RunFilter{Run: RunRef{"latest"}}, Scope: ScopeNode, Resource: ResourceCPU})},
		QueryTypeSummary: {ex("packing p50 of the newest nightly, for an alert rule", SummaryQuery{
			RunFilter:      RunFilter{Run: RunRef{"latest"}, TestName: "nightly"},
			NumericOptions: NumericOptions{Format: FormatNumeric, Keys: StringOrList{"cluster_packing_p50"}},
		})},
		QueryTypeGates: {ex("gates of the newest nightly, for an alert rule", GatesQuery{
			RunFilter:      RunFilter{Run: RunRef{"latest"}, TestName: "nightly"},
			NumericOptions: NumericOptions{Format: FormatNumeric},
			Baseline:       "latest",
		})},
		QueryTypeFreshness: {ex("hours since each test's newest run", FreshnessQuery{})},
	}
}

// TestQuerySchema regenerates the schema and fails when it differs from the
// committed src/schema/ (go test ./pkg/plugin/schema -run TestQuerySchema
// -update rewrites it; the SDK reports what it rewrote on that run).
func TestQuerySchema(t *testing.T) {
	b := build(t)
	if *update {
		b.UpdateProviderFiles(t, apiVersion, schemaDir)
		return
	}
	// Regenerate into a copy so an ordinary run never rewrites the tree.
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(schemaDir)); err != nil {
		t.Fatalf("copying the committed schema: %v", err)
	}
	b.UpdateProviderFiles(t, apiVersion, tmp)
	err := fs.WalkDir(os.DirFS(tmp), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		got, err := os.ReadFile(filepath.Join(tmp, p))
		if err != nil {
			return err
		}
		want, err := os.ReadFile(filepath.Join(schemaDir, p))
		if err != nil {
			t.Errorf("src/schema/%s is not committed: run go test ./pkg/plugin/schema -run TestQuerySchema -update", p)
			return nil
		}
		if string(got) != string(want) {
			t.Errorf("src/schema/%s differs from the Go description: run go test ./pkg/plugin/schema -run TestQuerySchema -update", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
