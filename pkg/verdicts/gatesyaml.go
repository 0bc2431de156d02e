package verdicts

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// checkGatesYAML reads a gates file's structure with its positions, so a
// mistake is told by line: malformed YAML, a field that is no gate field
// (with the gate named and the nearest known field), a value of the wrong
// kind. It returns nil when the structure is sound; the values are then
// read and checked by ParseGates.
func checkGatesYAML(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: %w", ErrGates, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: line %d: want a mapping with a gates list", ErrGates, root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "gates" {
			return unknownField(k, "the file", []string{"gates"})
		}
		if v.Kind != yaml.SequenceNode {
			return fmt.Errorf("%w: line %d: gates is not a list", ErrGates, v.Line)
		}
		for n, g := range v.Content {
			if err := checkGateNode(n+1, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkGateNode checks gate n of the list: a mapping of gate fields, each
// value of its field's kind.
func checkGateNode(n int, g *yaml.Node) error {
	if g.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: line %d: gate %d is not a mapping of gate fields", ErrGates, g.Line, n)
	}
	name := fmt.Sprintf("gate %d", n)
	for i := 0; i+1 < len(g.Content); i += 2 {
		if g.Content[i].Value == "key" {
			name = fmt.Sprintf("gate %d (%s)", n, g.Content[i+1].Value)
		}
	}
	fields := gateFields()
	for i := 0; i+1 < len(g.Content); i += 2 {
		k := g.Content[i]
		if !slices.Contains(fields, k.Value) {
			return unknownField(k, name, fields)
		}
	}
	var probe gateProbe
	if err := g.Decode(&probe); err != nil {
		// yaml.v3 words a type error over several lines: one line here.
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: %s: %s", ErrGates, name, strings.Join(te.Errors, "; "))
		}
		return fmt.Errorf("%w: %s: %w", ErrGates, name, err)
	}
	return nil
}

// gateProbe has the kinds of the numeric gate fields, for yaml.v3's typed
// errors (which carry the line). allow_null is left to the strict reader:
// YAML 1.1 spellings such as "yes" are booleans there and not in yaml.v3.
type gateProbe struct {
	Min              *float64 `yaml:"min"`
	Max              *float64 `yaml:"max"`
	MaxRegressionPct *float64 `yaml:"max_regression_pct"`
}

// unknownField is the error of a field k that is not one of known, in
// where, with the nearest known field.
func unknownField(k *yaml.Node, where string, known []string) error {
	hint := ""
	if near := nearest(k.Value, known); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Errorf("%w: line %d: %s: unknown field %q%s; known: %s", ErrGates, k.Line, where, k.Value, hint, strings.Join(known, ", "))
}

// gateFields are the fields of a gate in a gates file (Gate's JSON names).
func gateFields() []string {
	var out []string
	t := reflect.TypeFor[Gate]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// nearest is the known name closest to s by edit distance, when it is
// within a third of the longer name (else "": no sensible guess).
func nearest(s string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		d := editDistance(s, k)
		if d*3 <= max(len(s), len(k)) && (bestD < 0 || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
