package artifact

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/substrate/density/pkg/harvest"
)

// PSISeries is psi_series.json (export.md): per scope and PSI resource the
// distribution bands and top series of the run, so a stored run keeps its
// PSI panels after Prometheus's retention.
type PSISeries struct {
	StepS     int64 // seconds between points after thinning
	Node, Pod PSIScope
}

// PSIScope is the node or pod scope of PSISeries.
type PSIScope struct {
	CPU, Mem, IO harvest.PSIBandSet
}

// psiResourceKeys are a scope's keys in file order: harvest's resource keys.
func psiResourceKeys() []string {
	var keys []string
	for _, r := range harvest.PSIResources() {
		keys = append(keys, r.Key)
	}
	return keys
}

// psiBandKeys are the band keys in file order: harvest's band names (the
// datasource's too).
func psiBandKeys() []string {
	var keys []string
	for _, b := range harvest.PSIBandList() {
		keys = append(keys, b.Name)
	}
	return keys
}

func (s *PSIScope) resources() [3]*harvest.PSIBandSet {
	return [3]*harvest.PSIBandSet{&s.CPU, &s.Mem, &s.IO}
}

// BandSets are the six band sets in file order: node, then pod, each
// cpu, mem, io.
func (d *PSISeries) BandSets() [6]*harvest.PSIBandSet {
	return [6]*harvest.PSIBandSet{&d.Node.CPU, &d.Node.Mem, &d.Node.IO, &d.Pod.CPU, &d.Pod.Mem, &d.Pod.IO}
}

func psiBandSlices(b *harvest.PSIBandSet) [5]*[]*float64 {
	return [5]*[]*float64{&b.Min, &b.P50, &b.P90, &b.P99, &b.Max}
}

// NewPSISeries computes psi_series.json from a harvest whose PSI blocks kept
// their series (Params.SeriesPoints ≥ 0) over the run window [start, end]:
// node series named by instance, pod series by pod, on one grid for all six
// (harvest.PSIBandStep over every resource's series step). The bands are
// the ones the harvest folded per 10 s timestamp from every sample
// (PSIResource.Bands), so kept series thinned to fit their budget do not
// change them; a result without folded bands (one built by hand) has its
// bands computed from its series.
func NewPSISeries(r *harvest.Result, start, end int64) *PSISeries {
	var steps []int64
	for _, b := range []*harvest.PSI{&r.NodePSI, &r.PodPSI} {
		for _, res := range harvest.PSIResources() {
			if rs := b.Resource(res.Key); rs.Series != nil {
				steps = append(steps, rs.SeriesStep)
			}
		}
	}
	d := &PSISeries{StepS: harvest.PSIBandStep(start, end, steps...)}
	for _, sc := range []struct {
		src *harvest.PSI
		dst *PSIScope
		by  string
	}{{&r.NodePSI, &d.Node, "instance"}, {&r.PodPSI, &d.Pod, "pod"}} {
		for i, res := range harvest.PSIResources() {
			rs := sc.src.Resource(res.Key)
			if rs.Bands != nil && rs.Series != nil {
				*sc.dst.resources()[i] = rs.Bands.BandSet(rs.Series, sc.by, d.StepS)
			} else {
				*sc.dst.resources()[i] = harvest.PSIBands(rs.Series, sc.by, start, end, d.StepS)
			}
		}
	}
	return d
}

// Object is the document as an ordered object, keys in the file's order.
func (d *PSISeries) Object() Object {
	keys := psiResourceKeys()
	scope := func(s *PSIScope) Object {
		o := make(Object, 0, 3)
		for i, b := range s.resources() {
			o = append(o, Field{keys[i], psiBandSetObject(b)})
		}
		return o
	}
	return Object{{"step_s", d.StepS}, {"node", scope(&d.Node)}, {"pod", scope(&d.Pod)}}
}

func psiBandSetObject(b *harvest.PSIBandSet) Object {
	keys := psiBandKeys()
	bs := make(Object, 0, len(keys))
	for i, p := range psiBandSlices(b) {
		bs = append(bs, Field{keys[i], *p})
	}
	top := make([]any, len(b.Top))
	for i, s := range b.Top {
		top[i] = Object{{"name", s.Name}, {"peak", s.Peak}, {"values", s.Values}}
	}
	return Object{{"series", b.Series}, {"timestamps", b.Timestamps}, {"bands", bs}, {"top", top}}
}

// PSISeriesJSON is the bytes of psi_series.json: Python's
// json.dumps(indent=2) plus a trailing newline.
func PSISeriesJSON(d *PSISeries) ([]byte, error) {
	b, err := MarshalIndent(d.Object())
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ErrPSISeries wraps every ReadPSISeries failure.
var ErrPSISeries = errors.New("invalid psi_series.json")

// ReadPSISeries parses psi_series.json strictly: exactly the keys the writer
// writes (in any order), integers where it writes integers, numbers or null
// in the value arrays, every array as long as its timestamps, ascending
// timestamps. Errors name the path of the offending value.
func ReadPSISeries(data []byte) (*PSISeries, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPSISeries, err)
	}
	var d PSISeries
	if err := readPSISeries(v, &d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPSISeries, err)
	}
	return &d, nil
}

func readPSISeries(v any, d *PSISeries) error {
	o, err := psiExactObject(v, "", "step_s", "node", "pod")
	if err != nil {
		return err
	}
	step, ok := o[0].(int64)
	if !ok || step <= 0 {
		return fmt.Errorf("step_s: want a positive integer, got %s", psiDescribe(o[0]))
	}
	d.StepS = step
	keys := psiResourceKeys()
	for i, sc := range []*PSIScope{&d.Node, &d.Pod} {
		name := []string{"node", "pod"}[i]
		so, err := psiExactObject(o[1+i], name, keys...)
		if err != nil {
			return err
		}
		for j, dst := range sc.resources() {
			if err := readPSIBandSet(so[j], name+"."+keys[j], dst); err != nil {
				return err
			}
		}
	}
	return nil
}

func readPSIBandSet(v any, path string, b *harvest.PSIBandSet) error {
	o, err := psiExactObject(v, path, "series", "timestamps", "bands", "top")
	if err != nil {
		return err
	}
	switch n := o[0].(type) {
	case nil:
	case int64:
		if n < 0 {
			return fmt.Errorf("%s.series: want a count or null, got %d", path, n)
		}
		c := int(n)
		b.Series = &c
	default:
		return fmt.Errorf("%s.series: want a count or null, got %s", path, psiDescribe(o[0]))
	}

	ts, ok := o[1].([]any)
	if !ok {
		return fmt.Errorf("%s.timestamps: want an array, got %s", path, psiDescribe(o[1]))
	}
	b.Timestamps = make([]int64, len(ts))
	for i, x := range ts {
		t, ok := x.(int64)
		if !ok {
			return fmt.Errorf("%s.timestamps[%d]: want Unix seconds, got %s", path, i, psiDescribe(x))
		}
		if i > 0 && t <= b.Timestamps[i-1] {
			return fmt.Errorf("%s.timestamps[%d]: %d does not follow %d", path, i, t, b.Timestamps[i-1])
		}
		b.Timestamps[i] = t
	}
	n := len(ts)

	bandKeys := psiBandKeys()
	bo, err := psiExactObject(o[2], path+".bands", bandKeys...)
	if err != nil {
		return err
	}
	for i, dst := range psiBandSlices(b) {
		if *dst, err = readPSIValues(bo[i], path+".bands."+bandKeys[i], n); err != nil {
			return err
		}
	}

	top, ok := o[3].([]any)
	if !ok {
		return fmt.Errorf("%s.top: want an array, got %s", path, psiDescribe(o[3]))
	}
	b.Top = make([]harvest.PSITop, len(top))
	for i, x := range top {
		p := fmt.Sprintf("%s.top[%d]", path, i)
		to, err := psiExactObject(x, p, "name", "peak", "values")
		if err != nil {
			return err
		}
		name, ok := to[0].(string)
		if !ok {
			return fmt.Errorf("%s.name: want a string, got %s", p, psiDescribe(to[0]))
		}
		peak, ok := psiNumber(to[1])
		if !ok {
			return fmt.Errorf("%s.peak: want a number, got %s", p, psiDescribe(to[1]))
		}
		values, err := readPSIValues(to[2], p+".values", n)
		if err != nil {
			return err
		}
		b.Top[i] = harvest.PSITop{Name: name, Peak: peak, Values: values}
	}
	return nil
}

// readPSIValues reads an array of n numbers or nulls.
func readPSIValues(v any, path string, n int) ([]*float64, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array, got %s", path, psiDescribe(v))
	}
	if len(a) != n {
		return nil, fmt.Errorf("%s: %d values for %d timestamps", path, len(a), n)
	}
	out := make([]*float64, n)
	for i, x := range a {
		if x == nil {
			continue
		}
		f, ok := psiNumber(x)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: want a number or null, got %s", path, i, psiDescribe(x))
		}
		out[i] = &f
	}
	return out, nil
}

// psiNumber is a decoded JSON number as a float (an integer literal too).
func psiNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// psiExactObject returns the values of an object that has exactly keys, in
// keys' order.
func psiExactObject(v any, path string, keys ...string) ([]any, error) {
	at := path
	if at == "" {
		at = "the document"
	}
	o, ok := v.(Object)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %s", at, psiDescribe(v))
	}
	for _, k := range o.Keys() {
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("%s: unknown key %q (want %s)", at, k, strings.Join(keys, ", "))
		}
	}
	out := make([]any, len(keys))
	for i, k := range keys {
		x, ok := o.Get(k)
		if !ok {
			return nil, fmt.Errorf("%s: missing key %q", at, k)
		}
		out[i] = x
	}
	return out, nil
}

// psiDescribe names a decoded value's JSON type for an error.
func psiDescribe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return fmt.Sprintf("the string %q", x)
	case int64, Number:
		return fmt.Sprintf("the integer %v", x)
	case float64:
		return "the number " + FormatFloat(x)
	case []any:
		return "an array"
	case Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
