package frontier_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/substrate/density/pkg/frontier"
)

func TestParseMetadata(t *testing.T) {
	tests := []struct {
		name      string
		env, flag string
		want      frontier.Metadata
	}{
		{"types", "", `{"s": "x y", "i": 3, "f": 3.0, "o": {"a":1}, "l": [1,"é",null], "t": true, "n": null, "e": ""}`,
			frontier.Metadata{{"s", "x y"}, {"i", "3"}, {"f", "3.0"}, {"o", `{"a": 1}`}, {"l", `[1, "\u00e9", null]`}, {"t", "true"}, {"e", ""}}},
		{"numbers as Python's json round trip", "", `{"a": 1.50, "b": 1e5, "c": -0, "d": 123456789012345678901234, "e": 1E-7}`,
			frontier.Metadata{{"a", "1.5"}, {"b", "100000.0"}, {"c", "0"}, {"d", "123456789012345678901234"}, {"e", "1e-07"}}},
		{"env keys first, flag wins in place, new flag keys after", `{"a": "env", "b": 2, "c": 3}`, `{"d": 4, "a": "flag"}`,
			frontier.Metadata{{"a", "flag"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}},
		{"flag null removes an env key", `{"a": 1, "b": 2}`, `{"a": null}`, frontier.Metadata{{"b", "2"}}},
		{"repeated key: first position, last value", `{"a": 1, "b": 2, "a": 3}`, "", frontier.Metadata{{"a", "3"}, {"b", "2"}}},
		{"empty sources", "  ", "", nil},
		{"html and unicode kept as Python writes them", "", `{"h": "<a&b>", "o": {"k": "<é>"}}`,
			frontier.Metadata{{"h", "<a&b>"}, {"o", `{"k": "<\u00e9>"}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := frontier.ParseMetadata(tt.env, tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParseMetadataUsageErrors(t *testing.T) {
	tests := []struct {
		name, env, flag, source string
	}{
		{"array flag", "", `[1, 2]`, frontier.MetadataFlag},
		{"string flag", "", `"x"`, frontier.MetadataFlag},
		{"number flag", "", `3`, frontier.MetadataFlag},
		{"null flag", "", `null`, frontier.MetadataFlag},
		{"invalid flag", "", `{"a": }`, frontier.MetadataFlag},
		{"trailing data", "", `{"a": 1} {}`, frontier.MetadataFlag},
		{"NaN literal", "", `{"a": NaN}`, frontier.MetadataFlag},
		{"env not an object", `[]`, `{"a": 1}`, frontier.MetadataEnv},
		{"env invalid", `{`, "", frontier.MetadataEnv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, err := frontier.ParseMetadata(tt.env, tt.flag)
			var me *frontier.MetadataError
			if !errors.As(err, &me) || me.Source != tt.source || md != nil {
				t.Fatalf("got %v, %v; want a MetadataError from %s", md, err, tt.source)
			}
		})
	}
}
