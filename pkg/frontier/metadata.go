package frontier

import (
	"fmt"
	"strings"

	"github.com/substrate/density/pkg/artifact"
)

// Metadata is the merged metadata: keys in first-seen order (environment
// keys first), each value the text stored in metadata_<key>. Keys whose
// merged value is null are absent.
type Metadata []KV

// KV is one metadata entry.
type KV struct {
	Key, Value string
}

// Sources of metadata, as named in MetadataError.
const (
	MetadataEnv  = "BENCHMARK_METADATA"
	MetadataFlag = "--metadata"
)

// MetadataError is a usage error: a metadata source is not one JSON object.
type MetadataError struct {
	Source string // MetadataEnv or MetadataFlag
	Err    error
}

func (e *MetadataError) Error() string {
	return fmt.Sprintf("%s must be a JSON object: %v", e.Source, e.Err)
}

func (e *MetadataError) Unwrap() error { return e.Err }

// ParseMetadata merges the --metadata object (flag) over the
// BENCHMARK_METADATA object (env), as Python's {**env, **flag}: keys in
// first-seen order with environment keys first, flag values winning, and
// null values then skipped (a flag null removes an environment key).
// Values: a string is stored as it is; anything else as the text Python's
// json.dumps writes for what json.loads read (`3` → "3", `3.0` → "3.0",
// `{"a":1}` → `{"a": 1}`, `true` → "true"; note that json.loads makes
// `1.50` the float 1.5, so it is stored as "1.5", and `1e5` as "100000.0").
// Inside an object a repeated key keeps its first position and last value.
//
// An empty (or all-whitespace) source is absent. Anything but a JSON object
// — invalid JSON, an array, a string, NaN/Infinity literals, trailing data
// — is a *MetadataError.
func ParseMetadata(env, flag string) (Metadata, error) {
	var merged artifact.Object
	for _, src := range []struct{ name, text string }{{MetadataEnv, env}, {MetadataFlag, flag}} {
		if strings.TrimSpace(src.text) == "" {
			continue
		}
		v, err := artifact.Decode([]byte(src.text))
		if err != nil {
			return nil, &MetadataError{Source: src.name, Err: err}
		}
		obj, ok := v.(artifact.Object)
		if !ok {
			return nil, &MetadataError{Source: src.name, Err: fmt.Errorf("got %s", jsonKind(v))}
		}
		for _, f := range obj {
			merged.Set(f.Key, f.Value)
		}
	}
	var md Metadata
	for _, f := range merged {
		switch v := f.Value.(type) {
		case nil:
			continue
		case string:
			md = append(md, KV{f.Key, v})
		default:
			text, err := artifact.Marshal(v)
			if err != nil { // Decode only yields encodable values
				return nil, &MetadataError{Source: "metadata", Err: fmt.Errorf("key %q: %w", f.Key, err)}
			}
			md = append(md, KV{f.Key, string(text)})
		}
	}
	return md, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}
