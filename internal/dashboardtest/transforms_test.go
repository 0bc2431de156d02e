package dashboardtest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// jsRegexp converts a Grafana (JavaScript) regexp "/…/flags" or a bare
// pattern to Go.
func jsRegexp(s string) (*regexp.Regexp, error) {
	if strings.HasPrefix(s, "/") {
		if i := strings.LastIndex(s, "/"); i > 0 {
			flags := s[i+1:]
			s = s[1:i]
			if strings.Contains(flags, "i") {
				s = "(?i)" + s
			}
		}
	}
	return regexp.Compile(s)
}

// displayName is Grafana's getFieldDisplayName for the cases the plugin's
// frames have: config displayName, then displayNameFromDS, a time field's
// own name, else (frame name when the frames' names differ +) field name
// (+ labels).
func displayName(f *data.Field, fr *data.Frame, all []*data.Frame) string {
	if f.Config != nil && f.Config.DisplayName != "" {
		return f.Config.DisplayName
	}
	if f.Config != nil && f.Config.DisplayNameFromDS != "" {
		return f.Config.DisplayNameFromDS
	}
	if isTimeField(f) && len(f.Labels) == 0 {
		if f.Name == "" {
			return "Time"
		}
		return f.Name
	}
	var parts []string
	for i := 1; i < len(all); i++ {
		if all[i].Name != all[i-1].Name && fr.Name != "" {
			parts = append(parts, fr.Name)
			break
		}
	}
	if f.Name != "" && f.Name != "Value" {
		parts = append(parts, f.Name)
	}
	if len(f.Labels) > 0 {
		parts = append(parts, f.Labels.String())
	}
	if len(parts) == 0 {
		return "Value"
	}
	return strings.Join(parts, " ")
}

func isTimeField(f *data.Field) bool { return f.Type().Time() }

func isNumberField(f *data.Field) bool { return f.Type().Numeric() }

// cellFloat reads a numeric cell (nil for null).
func cellFloat(f *data.Field, i int) *float64 {
	v, ok := f.ConcreteAt(i)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return nil
		}
		return &x
	case float32:
		y := float64(x)
		return &y
	case int64:
		y := float64(x)
		return &y
	case int32:
		y := float64(x)
		return &y
	case uint64:
		y := float64(x)
		return &y
	case int8, int16, uint8, uint16, uint32:
		y, _ := strconv.ParseFloat(fmt.Sprint(x), 64)
		return &y
	}
	return nil
}

// cellNull reports whether a cell of any type is null.
func cellNull(f *data.Field, i int) bool {
	_, ok := f.ConcreteAt(i)
	return !ok
}

// copyField copies a field with its config (transformations must not
// change the response's frames).
func copyField(f *data.Field) *data.Field {
	n := data.NewFieldFromFieldType(f.Type(), f.Len())
	n.Name = f.Name
	n.Labels = f.Labels.Copy()
	if f.Config != nil {
		cfg := *f.Config
		n.Config = &cfg
	}
	for i := 0; i < f.Len(); i++ {
		n.Set(i, f.CopyAt(i))
	}
	return n
}

func fieldMatches(names []string, pattern string, f *data.Field, fr *data.Frame, all []*data.Frame) (bool, error) {
	dn := displayName(f, fr, all)
	if slices.Contains(names, dn) {
		return true, nil
	}
	if pattern != "" {
		re, err := jsRegexp(pattern)
		if err != nil {
			return false, err
		}
		return re.MatchString(dn), nil
	}
	return false, nil
}

// applyTransforms applies a panel's transformations to its frames the way
// Grafana's transformers do (matching fields by display name).
func applyTransforms(frames []*data.Frame, trs []dashTransform) ([]*data.Frame, error) {
	for _, tr := range trs {
		if tr.Disabled {
			continue
		}
		applies := func(fr *data.Frame) bool {
			return tr.Filter == nil || (tr.Filter.ID == "byRefId" && fr.RefID == tr.Filter.Options)
		}
		if tr.Filter != nil && tr.Filter.ID != "byRefId" {
			return nil, fmt.Errorf("transformation %s: frame filter %q", tr.ID, tr.Filter.ID)
		}
		var next []*data.Frame
		switch tr.ID {
		case "filterFieldsByName":
			var o struct {
				Include *struct {
					Names   []string `json:"names"`
					Pattern string   `json:"pattern"`
				} `json:"include"`
				Exclude *struct {
					Names   []string `json:"names"`
					Pattern string   `json:"pattern"`
				} `json:"exclude"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			for _, fr := range frames {
				if !applies(fr) {
					next = append(next, fr)
					continue
				}
				var kept []*data.Field
				for _, f := range fr.Fields {
					keep := true
					if o.Include != nil {
						m, err := fieldMatches(o.Include.Names, o.Include.Pattern, f, fr, frames)
						if err != nil {
							return nil, err
						}
						keep = m
					}
					if o.Exclude != nil {
						m, err := fieldMatches(o.Exclude.Names, o.Exclude.Pattern, f, fr, frames)
						if err != nil {
							return nil, err
						}
						keep = keep && !m
					}
					if keep {
						kept = append(kept, f)
					}
				}
				// Grafana drops a frame left without fields.
				if len(kept) > 0 {
					n := data.NewFrame(fr.Name, kept...)
					n.RefID, n.Meta = fr.RefID, fr.Meta
					next = append(next, n)
				}
			}
		case "organize":
			var o struct {
				ExcludeByName map[string]bool   `json:"excludeByName"`
				IndexByName   map[string]int    `json:"indexByName"`
				RenameByName  map[string]string `json:"renameByName"`
				IncludeByName map[string]bool   `json:"includeByName"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			for _, fr := range frames {
				if !applies(fr) {
					next = append(next, fr)
					continue
				}
				type named struct {
					f    *data.Field
					name string
				}
				var kept []named
				for _, f := range fr.Fields {
					dn := displayName(f, fr, frames)
					if o.ExcludeByName[dn] || (len(o.IncludeByName) > 0 && !o.IncludeByName[dn]) {
						continue
					}
					kept = append(kept, named{f, dn})
				}
				if len(o.IndexByName) > 0 {
					sort.SliceStable(kept, func(i, j int) bool {
						a, okA := o.IndexByName[kept[i].name]
						b, okB := o.IndexByName[kept[j].name]
						if !okA {
							a = math.MaxInt
						}
						if !okB {
							b = math.MaxInt
						}
						return a < b
					})
				}
				var fields []*data.Field
				for _, k := range kept {
					f := k.f
					if r := o.RenameByName[k.name]; r != "" {
						f = copyField(f)
						if f.Config == nil {
							f.Config = &data.FieldConfig{}
						}
						f.Config.DisplayName = r
					}
					fields = append(fields, f)
				}
				next = append(next, withFields(fr, fields))
			}
		case "sortBy":
			var o struct {
				Sort []struct {
					Field string `json:"field"`
					Desc  bool   `json:"desc"`
				} `json:"sort"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			if len(o.Sort) != 1 {
				return nil, fmt.Errorf("sortBy: want one sort field")
			}
			for _, fr := range frames {
				var key *data.Field
				for _, f := range fr.Fields {
					if displayName(f, fr, frames) == o.Sort[0].Field {
						key = f
					}
				}
				if key == nil || !applies(fr) {
					next = append(next, fr)
					continue
				}
				idx := make([]int, fr.Rows())
				for i := range idx {
					idx[i] = i
				}
				less := func(a, b int) bool {
					if isTimeField(key) {
						ta, _ := key.ConcreteAt(a)
						tb, _ := key.ConcreteAt(b)
						x, _ := ta.(time.Time)
						y, _ := tb.(time.Time)
						return x.Before(y)
					}
					x, y := cellFloat(key, a), cellFloat(key, b)
					return x != nil && (y == nil || *x < *y)
				}
				sort.SliceStable(idx, func(i, j int) bool {
					if o.Sort[0].Desc {
						return less(idx[j], idx[i])
					}
					return less(idx[i], idx[j])
				})
				var fields []*data.Field
				for _, f := range fr.Fields {
					n := copyField(f)
					for i, src := range idx {
						n.Set(i, f.CopyAt(src))
					}
					fields = append(fields, n)
				}
				next = append(next, withFields(fr, fields))
			}
		case "joinByField":
			var o struct {
				ByField string `json:"byField"`
				Mode    string `json:"mode"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				return nil, err
			}
			if o.Mode != "outer" {
				return nil, fmt.Errorf("joinByField mode %q (the smoke test emulates outer)", o.Mode)
			}
			j, err := outerJoin(frames, o.ByField)
			if err != nil {
				return nil, err
			}
			next = []*data.Frame{j}
		default:
			return nil, fmt.Errorf("transformation %q is not emulated", tr.ID)
		}
		frames = next
	}
	return frames, nil
}

// outerJoin is Grafana's outer join on the field with the given display
// name: one row per distinct key (sorted), the key field first, then every
// other field of every frame with the frame's name as its `name` label.
func outerJoin(frames []*data.Frame, by string) (*data.Frame, error) {
	type src struct {
		fr  *data.Frame
		key *data.Field
	}
	var srcs []src
	var keys []string
	seen := map[string]bool{}
	for _, fr := range frames {
		var key *data.Field
		for _, f := range fr.Fields {
			if displayName(f, fr, frames) == by {
				key = f
				break
			}
		}
		if key == nil {
			return nil, fmt.Errorf("joinByField: frame %q has no field %q", fr.Name, by)
		}
		srcs = append(srcs, src{fr, key})
		for i := 0; i < key.Len(); i++ {
			k := fmt.Sprint(key.CopyAt(i))
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	row := map[string]int{}
	for i, k := range keys {
		row[k] = i
	}
	first := srcs[0].key
	keyField := data.NewFieldFromFieldType(first.Type(), len(keys))
	keyField.Name = first.Name
	if first.Config != nil {
		cfg := *first.Config
		keyField.Config = &cfg
	}
	fields := []*data.Field{keyField}
	filled := make([]bool, len(keys))
	for _, s := range srcs {
		for i := 0; i < s.key.Len(); i++ {
			r := row[fmt.Sprint(s.key.CopyAt(i))]
			if !filled[r] {
				keyField.Set(r, s.key.CopyAt(i))
				filled[r] = true
			}
		}
		for _, f := range s.fr.Fields {
			if f == s.key {
				continue
			}
			t := f.Type()
			if !t.Nullable() {
				t = t.NullableType()
			}
			n := data.NewFieldFromFieldType(t, len(keys))
			n.Name = f.Name
			n.Labels = f.Labels.Copy()
			if n.Labels == nil {
				n.Labels = data.Labels{}
			}
			if _, ok := n.Labels["name"]; !ok && s.fr.Name != "" {
				n.Labels["name"] = s.fr.Name
			}
			if f.Config != nil {
				cfg := *f.Config
				n.Config = &cfg
			}
			for i := 0; i < f.Len(); i++ {
				v, ok := f.ConcreteAt(i)
				if !ok {
					continue
				}
				n.SetConcrete(row[fmt.Sprint(s.key.CopyAt(i))], v)
			}
			fields = append(fields, n)
		}
	}
	return data.NewFrame("joined", fields...), nil
}

// graphable is Grafana's timeseries panel input: the frames with a time
// field and at least one number field (others are ignored).
func graphable(frames []*data.Frame) []*data.Frame {
	var out []*data.Frame
	for _, fr := range frames {
		hasTime, hasNum := false, false
		for _, f := range fr.Fields {
			hasTime = hasTime || isTimeField(f)
			hasNum = hasNum || isNumberField(f)
		}
		if hasTime && hasNum {
			out = append(out, fr)
		}
	}
	return out
}

// withFields is a frame like fr (name, refId, meta) holding fields.
func withFields(fr *data.Frame, fields []*data.Field) *data.Frame {
	n := data.NewFrame(fr.Name, fields...)
	n.RefID, n.Meta = fr.RefID, fr.Meta
	return n
}
