package dashboardtest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// checkLinks resolves every data link of the panel on its first row the
// way Grafana's link interpolation does and checks where it goes.
func (e *smokeEnv) checkLinks(t *testing.T, p dashPanel, fc dashFieldConfig, frames []*data.Frame, vars dashVars, dashes map[string]dashDoc) {
	t.Helper()
	if len(frames) == 0 {
		return
	}
	fr := frames[0]
	for _, o := range fc.Overrides {
		for _, prop := range o.Properties {
			if prop.ID != "links" {
				continue
			}
			var links []dashLink
			_ = json.Unmarshal(prop.Value, &links)
			var field *data.Field
			for _, f := range fr.Fields {
				if o.Matcher.ID == "byName" && displayName(f, fr, frames) == o.Matcher.Options {
					field = f
				}
			}
			if field == nil {
				t.Errorf("link override on %q matches no field of %s", o.Matcher.Options, describeFrames(frames))
				continue
			}
			for _, l := range links {
				u := e.interpolateLink(t, l.URL, fr, field, 0, vars)
				t.Logf("data link %q on %q → %s", l.Title, o.Matcher.Options, u)
				pu, err := url.Parse(u)
				if err != nil {
					t.Errorf("link %q: %v", u, err)
					continue
				}
				qv := pu.Query()
				if got := qv.Get("var-run"); got != e.runID {
					t.Errorf("link sets run %q, want %q", got, e.runID)
				}
				if got := qv.Get("var-datasource"); got != "substrate-density" {
					t.Errorf("link sets datasource %q", got)
				}
				if strings.Contains(l.URL, "__data.fields.start") {
					// The run's window, in ms.
					if qv.Get("from") != strconv.FormatInt(e.truth.Start*1000, 10) || qv.Get("to") != strconv.FormatInt(e.truth.End*1000, 10) {
						t.Errorf("link range from=%s to=%s, want the run window %d..%d (ms)", qv.Get("from"), qv.Get("to"), e.truth.Start*1000, e.truth.End*1000)
					}
				}
				checkLinkTarget(t, "link", u, dashes)
			}
		}
	}
}

var macroRe = regexp.MustCompile(`\$\{(__value\.raw|__data\.fields\.([A-Za-z0-9_]+)(\.(numeric|text|raw))?)(:([a-z]+))?\}`)

// interpolateLink replaces the data-link macros (__value.raw,
// __data.fields.<name>[.numeric]) for one row, then dashboard variables.
func (e *smokeEnv) interpolateLink(t *testing.T, raw string, fr *data.Frame, field *data.Field, row int, vars dashVars) string {
	t.Helper()
	out := macroRe.ReplaceAllStringFunc(raw, func(m string) string {
		sub := macroRe.FindStringSubmatch(m)
		var val string
		if sub[1] == "__value.raw" {
			v, _ := field.ConcreteAt(row)
			val = fmt.Sprint(v)
		} else {
			// Grafana's field proxy: by name, then config displayName,
			// then the `name` label.
			var f *data.Field
			for _, c := range fr.Fields {
				if c.Name == sub[2] {
					f = c
					break
				}
			}
			if f == nil {
				t.Errorf("link macro %s: no field %q in %s", m, sub[2], describeFrames([]*data.Frame{fr}))
				return m
			}
			v, ok := f.ConcreteAt(row)
			if !ok {
				t.Errorf("link macro %s: null at row %d", m, row)
				return m
			}
			if ts, isTime := v.(time.Time); isTime && sub[4] == "numeric" {
				val = strconv.FormatInt(ts.UnixMilli(), 10)
			} else {
				val = fmt.Sprint(v)
			}
		}
		if sub[6] == "percentencode" {
			val = encodeURIComponent(val)
		}
		return val
	})
	out = vars.interpolate(out, ",")
	if strings.Contains(out, "${") || strings.Contains(out, "$__") {
		t.Errorf("link %q left %q unresolved", raw, out)
	}
	return out
}
