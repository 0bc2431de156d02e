package promql

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// finite is false for NaN and ±Inf, the values answers drop.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// answer is one decoded /api/v1/query or /api/v1/query_range body.
type answer struct {
	status     string
	errorType  string
	errorMsg   string
	warnings   []string
	resultType string // "matrix", "vector" or "scalar"
	hasData    bool
	series     []Series
}

// decodeAnswer decodes a Prometheus API answer in one pass over the body,
// straight into []Series: no RawMessage, no model.Matrix, no second parse.
//
// Why not encoding/json's Decoder token API: measured on
// BenchmarkDecodeMatrix it allocates per token (5 M allocations for 360 k
// samples) and was 1.7x slower than the v1.API path it was to replace, and
// encoding/json/v2's jsontext needs GOEXPERIMENT in Go 1.26. The answer's
// grammar is small, so this is a validating scanner for exactly it (any
// other value is skipped, still validated).
//
// The contract is the one Prometheus's HTTP API writes: keys exactly as
// Prometheus spells them (case-sensitive), a "status" of "success" or
// "error", and for "success" a "data" object with "resultType" and
// "result". Keys may come in any order ("data" before or after "status",
// "result" before or after "resultType"); unknown keys are skipped. A body
// without "status", with another status, with a "success" but no "data",
// with a key that matches a known one only case-insensitively (encoding/
// json, and so client_golang, would take "Data" for "data"), or with a
// vector sample that has no "value" (client_golang reads it as the value 0
// at time 0) is not a Prometheus answer: an error naming what was wrong, which the harvest turns
// into nulls and a notice, never a number. Within that contract it decodes
// like client_golang's v1.API: values as strings ("NaN", "+Inf", "-Inf",
// numbers), timestamps parsed like model.Time and truncated to seconds like
// Time.Unix. A body that is not valid JSON gets encoding/json's own message
// (e.g. "unexpected end of JSON input", "invalid character '<' looking for
// beginning of value"). NaN/±Inf samples and native-histogram points are
// dropped (a vector sample with a histogram reads as "no value").
func decodeAnswer(body []byte) (*answer, error) {
	p := &scanner{b: body, intern: map[string]string{}}
	a := &answer{}
	err := p.envelope(a)
	if err == nil {
		p.ws()
		if p.i != len(p.b) {
			err = errSyntax
		}
	}
	if err == nil {
		err = a.check()
	}
	if err != nil {
		// A syntax error anywhere wins over a shape error, as it did when
		// Unmarshal validated the whole body first; take its message.
		var discard struct{}
		if jerr := json.Unmarshal(body, &discard); jerr != nil {
			return nil, jerr
		}
		return nil, err
	}
	return a, nil
}

func (p *scanner) envelope(a *answer) error {
	return p.members(func(k string) (err error) {
		switch k {
		case "status":
			a.status, err = p.strOrNull("status", a.status)
		case "errorType":
			a.errorType, err = p.strOrNull("errorType", a.errorType)
		case "error":
			a.errorMsg, err = p.strOrNull("error", a.errorMsg)
		case "warnings":
			a.warnings, err = p.strings("warnings")
		case "data":
			err = p.data(a)
		default:
			err = p.unknown(k, "status", "errorType", "error", "warnings", "data")
		}
		return err
	})
}

// check applies the envelope's contract once the whole body has been read.
func (a *answer) check() error {
	switch a.status {
	case "success":
		if !a.hasData {
			return errors.New(`not a Prometheus answer: "status" is "success" but there is no "data"`)
		}
		return nil
	case "error":
		return nil
	case "":
		return errors.New(`not a Prometheus answer: no "status"`)
	}
	return fmt.Errorf(`not a Prometheus answer: "status" is %q, not "success" or "error"`, a.status)
}

// unknown skips the value of a key the answer's grammar does not use at
// this place, unless the key is one of known spelt in another case: such a
// body was not written by Prometheus (see decodeAnswer).
func (p *scanner) unknown(k string, known ...string) error {
	for _, want := range known {
		if k != want && strings.EqualFold(k, want) {
			if err := p.skipRest(); err != nil {
				return err
			}
			return fmt.Errorf("not a Prometheus answer: key %q, Prometheus writes %q", k, want)
		}
	}
	return p.skip()
}

func (p *scanner) strings(what string) ([]string, error) {
	if isNull, err := p.null(); err != nil || isNull {
		return nil, err
	}
	if p.peek() != '[' {
		if err := p.skip(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: expected an array of strings", what)
	}
	p.i++
	out := []string{}
	for first := true; ; first = false {
		ok, err := p.more(first, ']')
		if err != nil || !ok {
			return out, err
		}
		s, err := p.strOrNull(what, "")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

// data reads {"resultType": ..., "result": ...}. Prometheus and
// VictoriaMetrics send resultType first; a result that comes first is
// decoded once the type is known.
func (p *scanner) data(a *answer) error {
	if isNull, err := p.null(); err != nil || isNull {
		return err
	}
	a.hasData = true
	var typ string
	resultAt := -1
	err := p.members(func(k string) (err error) {
		switch k {
		case "resultType":
			if typ, err = p.strOrNull("resultType", typ); err != nil {
				return err
			}
			if err := checkType(typ); err != nil {
				if serr := p.skipRest(); serr != nil {
					return serr
				}
				return err
			}
		case "result":
			if typ == "" {
				resultAt = p.i
				return p.skip()
			}
			if a.series, err = p.result(typ); err != nil {
				return err
			}
			resultAt = -1
			return nil
		default:
			return p.unknown(k, "resultType", "result")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if typ == "" {
		return errors.New(`unexpected value type "<ValNone>"`)
	}
	if resultAt >= 0 {
		end := p.i
		p.i = resultAt
		if a.series, err = p.result(typ); err != nil {
			return err
		}
		p.i = end
	}
	if a.series == nil {
		// v1 decoded a missing or null result as an empty value.
		if typ == "scalar" {
			a.series = []Series{{Labels: map[string]string{}}}
		} else {
			a.series = []Series{}
		}
	}
	a.resultType = typ
	return nil
}

// skipRest validates the rest of the body after a shape error, so that a
// syntax error later on still wins (see decodeAnswer).
func (p *scanner) skipRest() error {
	var discard struct{}
	if json.Unmarshal(p.b, &discard) != nil {
		return errSyntax
	}
	return nil
}

// checkType accepts the result types v1 decoded and rejects the rest with
// its messages.
func checkType(typ string) error {
	switch typ {
	case "matrix", "vector", "scalar":
		return nil
	case "string", "<ValNone>":
		return fmt.Errorf("unexpected value type %q", typ)
	}
	return fmt.Errorf("unknown value type %q", typ)
}

func (p *scanner) result(typ string) ([]Series, error) {
	switch typ {
	case "matrix":
		return p.matrix()
	case "vector":
		return p.vector()
	}
	// scalar
	if isNull, err := p.null(); err != nil || isNull {
		return nil, err
	}
	t, v, err := p.pair()
	if err != nil {
		return nil, fmt.Errorf("error parsing sample value: %w", err)
	}
	s := Series{Labels: map[string]string{}}
	if finite(v) {
		s.Samples = []Sample{{T: t, V: v}}
	}
	return []Series{s}, nil
}

func (p *scanner) matrix() ([]Series, error) {
	return p.seriesArray(func() (Series, error) {
		var s Series
		err := p.object(func(k string) (err error) {
			switch k {
			case "metric":
				s.Labels, err = p.labels()
			case "values":
				s.Samples, err = p.values(s.Samples)
			default: // "histograms" (native histograms are not used) and the rest
				err = p.unknown(k, "metric", "values", "histograms")
			}
			return err
		})
		return s, err
	})
}

// seriesArray reads a result array (or null, an empty result) whose
// elements elem reads; a series without "metric" gets empty labels.
func (p *scanner) seriesArray(elem func() (Series, error)) ([]Series, error) {
	out := []Series{}
	if isNull, err := p.null(); err != nil || isNull {
		return out, err
	}
	if err := p.expect('['); err != nil {
		return nil, err
	}
	for first := true; ; first = false {
		ok, err := p.more(first, ']')
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		s, err := elem()
		if err != nil {
			return nil, err
		}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		out = append(out, s)
	}
}

// object reads null (no members) or an object whose members fn reads.
func (p *scanner) object(fn func(key string) error) error {
	if isNull, err := p.null(); err != nil || isNull {
		return err
	}
	return p.members(fn)
}

// values reads [[t,"v"],...], appending the finite samples to dst. The
// slice is sized by counting the pairs first (a cheap scan for '[' up to
// the closing bracket would be wrong inside strings, so it counts commas at
// depth 1 only when no string holds one; otherwise append grows it).
func (p *scanner) values(dst []Sample) ([]Sample, error) {
	if isNull, err := p.null(); err != nil || isNull {
		return dst, err
	}
	if err := p.expect('['); err != nil {
		return nil, err
	}
	if dst == nil {
		dst = make([]Sample, 0, p.estimatePairs())
	}
	for first := true; ; first = false {
		ok, err := p.more(first, ']')
		if err != nil {
			return nil, err
		}
		if !ok {
			if len(dst) == 0 {
				return nil, nil
			}
			return dst, nil
		}
		if isNull, err := p.null(); err != nil {
			return nil, err
		} else if isNull {
			continue
		}
		t, v, err := p.pair()
		if err != nil {
			return nil, err
		}
		if finite(v) {
			dst = append(dst, Sample{T: t, V: v})
		}
	}
}

// estimatePairs counts the '[' that open pairs before the array's closing
// ']' (an estimate: it stops at the first ']' that is not a pair's).
func (p *scanner) estimatePairs() int {
	n := 0
	depth := 0
	for i := p.i; i < len(p.b); i++ {
		switch p.b[i] {
		case '[':
			depth++
			n++
		case ']':
			if depth == 0 {
				return n
			}
			depth--
		case '"':
			// Skip a string (values never contain brackets, but be safe).
			for i++; i < len(p.b) && p.b[i] != '"'; i++ {
				if p.b[i] == '\\' {
					i++
				}
			}
		}
	}
	return n
}

func (p *scanner) vector() ([]Series, error) {
	return p.seriesArray(func() (Series, error) {
		var (
			s         Series
			t         int64
			v         float64
			hasValue  bool
			histogram bool
		)
		err := p.object(func(k string) (err error) {
			switch k {
			case "metric":
				s.Labels, err = p.labels()
			case "value":
				var n bool
				if n, err = p.null(); err == nil && !n {
					t, v, err = p.pair()
					hasValue = err == nil
				}
			case "histogram":
				// A native-histogram sample: read as "no value".
				var n bool
				if n, err = p.null(); err == nil && !n {
					histogram = true
					err = p.skip()
				}
			default:
				err = p.unknown(k, "metric", "value", "histogram")
			}
			return err
		})
		if err == nil && !hasValue && !histogram {
			// Prometheus writes every vector sample with its value (or a
			// native histogram); v1 would read a missing one as 0 at 0.
			if serr := p.skipRest(); serr != nil {
				return s, serr
			}
			return s, errors.New(`not a Prometheus answer: a vector sample without "value"`)
		}
		if hasValue && !histogram && finite(v) {
			s.Samples = []Sample{{T: t, V: v}}
		}
		return s, err
	})
}

func (p *scanner) labels() (map[string]string, error) {
	if isNull, err := p.null(); err != nil || isNull {
		return map[string]string{}, err
	}
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	ls := make(map[string]string, 8)
	for first := true; ; first = false {
		ok, err := p.more(first, '}')
		if err != nil {
			return nil, err
		}
		if !ok {
			return ls, nil
		}
		k, err := p.str(true)
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		var v string
		if isNull, err := p.null(); err != nil {
			return nil, err
		} else if !isNull {
			if p.peek() != '"' {
				if err := p.skip(); err != nil {
					return nil, err
				}
				return nil, errors.New("label value: expected a string")
			}
			if v, err = p.str(true); err != nil {
				return nil, err
			}
		}
		ls[k] = v
	}
}

// pair reads [timestamp, "value"].
func (p *scanner) pair() (int64, float64, error) {
	if err := p.expect('['); err != nil {
		return 0, 0, err
	}
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		if err := p.skipRestOfArray(); err != nil {
			return 0, 0, err
		}
		return 0, 0, errors.New("sample timestamp: expected a number")
	}
	num, err := p.number()
	if err != nil {
		return 0, 0, err
	}
	t, terr := unixSeconds(num)
	if err := p.expect(','); err != nil {
		return 0, 0, err
	}
	if p.peek() != '"' {
		if err := p.skip(); err != nil {
			return 0, 0, err
		}
		if err := p.skipRestOfArray(); err != nil {
			return 0, 0, err
		}
		return 0, 0, errors.New("sample value must be a quoted string")
	}
	raw, esc, err := p.rawString()
	if err != nil {
		return 0, 0, err
	}
	vs := unsafe.String(unsafe.SliceData(raw), len(raw)) // #nosec G103 -- a zero-copy view of the read buffer, which is not written again while the string is used
	if esc {
		if vs, err = unquote(raw); err != nil {
			return 0, 0, err
		}
	}
	if c := p.peek(); c != ']' {
		if err := p.skipRestOfArray(); err != nil {
			return 0, 0, err
		}
		return 0, 0, errors.New("sample pair has too many values, must be [timestamp, value]")
	}
	p.i++
	if terr != nil {
		return 0, 0, fmt.Errorf("sample timestamp %s: %w", num, terr)
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return 0, 0, err
	}
	return t, v, nil
}

// unixSeconds parses a JSON number timestamp exactly as model.Time does
// (integer seconds, up to 3 fractional digits, no exponent) and truncates
// it to seconds as Time.Unix does.
func unixSeconds(s string) (int64, error) {
	base, frac, found := strings.Cut(s, ".")
	v, err := strconv.ParseInt(base, 10, 64)
	if err != nil {
		return 0, err
	}
	ms := v * 1000
	if found {
		prec := 3 - len(frac)
		if prec < 0 {
			frac = frac[:3]
		}
		va, err := strconv.ParseInt(frac, 10, 32)
		if err != nil {
			return 0, err
		}
		switch prec {
		case 1:
			va *= 10
		case 2:
			va *= 100
		}
		if len(base) > 0 && base[0] == '-' {
			va = -va
		}
		ms += va
	}
	return ms / 1000, nil
}
