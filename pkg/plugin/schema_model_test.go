package plugin

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/plugin/schema"
)

// committedQueryTypes reads the query types and their keys from the
// committed schema (src/schema/, generated from pkg/plugin/schema).
func committedQueryTypes(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile("../../src/schema/v0alpha1/query.types.json")
	if err != nil {
		t.Fatal(err)
	}
	var defs struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     struct {
				Schema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"schema"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &defs); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, it := range defs.Items {
		keys := []string{}
		for k := range it.Spec.Schema.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out[it.Metadata.Name] = keys
	}
	return out
}

// TestQuerySchemaMatchesParser pins the parser's query model to the schema:
// every served query type is described, and the keys the parser reads are
// exactly the keys the schema's types name (plus queryType).
func TestQuerySchemaMatchesParser(t *testing.T) {
	described := committedQueryTypes(t)
	var names []string
	for _, qt := range schema.QueryTypes() {
		names = append(names, string(qt.Type))
	}
	served := QueryTypes()
	for _, q := range served {
		if _, ok := described[q]; !ok {
			t.Errorf("query type %q is served but not in the schema", q)
		}
	}
	for _, n := range names {
		if !slices.Contains(served, n) {
			t.Errorf("query type %q is in the schema but not served", n)
		}
	}
	if len(described) != len(names) {
		t.Errorf("the committed schema has %d query types, pkg/plugin/schema %d: regenerate it", len(described), len(names))
	}

	want := map[string]bool{"queryType": true}
	for _, keys := range described {
		for _, k := range keys {
			want[k] = true
		}
	}
	// queryModel and the phases options (parsed by their handler).
	got := map[string]bool{}
	for _, rt := range []reflect.Type{reflect.TypeFor[queryModel](), reflect.TypeFor[phaseOptions]()} {
		for i := range rt.NumField() {
			tag := rt.Field(i).Tag.Get("json")
			if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
				got[name] = true
			}
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("the parser reads %q, which no query type of the schema names", k)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("the schema names %q, which the parser does not read", k)
		}
	}
}
