package plugin

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
)

// The setting exploreDatasourceUid: empty is none, a Grafana uid is kept,
// anything a URL would have to escape is refused.
func TestExploreDatasourceUIDSetting(t *testing.T) {
	for _, c := range []struct {
		value string
		want  string
		err   error
	}{
		{"", "", nil},
		{"prometheus", "prometheus", nil},
		{" P1809F7CD0C75ACF3_x-y ", "P1809F7CD0C75ACF3_x-y", nil},
		{"a/b", "", ErrInvalidExploreUID},
		{"x&to=0", "", ErrInvalidExploreUID},
		{strings.Repeat("a", 41), "", ErrInvalidExploreUID},
	} {
		jd, _ := json.Marshal(map[string]any{"exploreDatasourceUid": c.value})
		s, err := LoadSettings(backend.DataSourceInstanceSettings{URL: "http://127.0.0.1:9090", JSONData: jd})
		if !errors.Is(err, c.err) || (err == nil && s.ExploreDatasourceUID != c.want) {
			t.Errorf("%q: %q, %v; want %q, %v", c.value, s.ExploreDatasourceUID, err, c.want, c.err)
		}
	}
}

// linkVar is a Grafana data link variable of a row's field.
var linkVar = regexp.MustCompile(`\$\{__data\.fields\.([A-Za-z_]+)(\.numeric)?(:percentencode)?\}`)

// interpolate fills a link's ${__data.fields.…} variables from row i of f
// the way Grafana does: a time field's .numeric is Unix ms, :percentencode
// escapes; a variable of a field the frame lacks fails the test.
func interpolate(t *testing.T, f *data.Frame, i int, link string) string {
	t.Helper()
	return linkVar.ReplaceAllStringFunc(link, func(m string) string {
		g := linkVar.FindStringSubmatch(m)
		fld, _ := f.FieldByName(g[1])
		if fld == nil {
			t.Fatalf("link variable %s: frame %q has no field %s", m, f.Name, g[1])
		}
		var v string
		switch x := fld.At(i).(type) {
		case time.Time:
			v = strconv.FormatInt(x.UnixMilli(), 10)
		case *time.Time:
			if x != nil {
				v = strconv.FormatInt(x.UnixMilli(), 10)
			}
		case string:
			v = x
		default:
			t.Fatalf("link variable %s: field of %T", m, x)
		}
		if g[3] != "" {
			v = url.QueryEscape(v)
		}
		return v
	})
}

// checkRunLinks checks the links of a field on row i: the run overview of
// this datasource with var-run and the window, and Explore on exploreUID
// (none when "") over the same window with the user-count query.
func checkRunLinks(t *testing.T, f *data.Frame, fld *data.Field, i int, dsUID, runID string, from, to int64, exploreUID string) {
	t.Helper()
	if fld.Config == nil {
		t.Fatalf("field %s has no config (no links)", fld.Name)
	}
	links := fld.Config.Links
	want := 1
	if exploreUID != "" {
		want = 2
	}
	if len(links) != want {
		t.Fatalf("field %s: %d links, want %d: %+v", fld.Name, len(links), want, links)
	}
	u, err := url.Parse(interpolate(t, f, i, links[0].URL))
	if err != nil {
		t.Fatal(err)
	}
	qv := u.Query()
	if u.Path != "/d/density-run-overview/run-density-overview" || qv.Get("var-run") != runID || qv.Get("var-datasource") != dsUID ||
		qv.Get("from") != strconv.FormatInt(from*1000, 10) || qv.Get("to") != strconv.FormatInt(to*1000, 10) {
		t.Errorf("overview link %s: want run %s, datasource %s, from %d to %d (ms)", u, runID, dsUID, from*1000, to*1000)
	}
	if exploreUID == "" {
		return
	}
	eu, err := url.Parse(interpolate(t, f, i, links[1].URL))
	if err != nil {
		t.Fatal(err)
	}
	var panes map[string]struct {
		Datasource string `json:"datasource"`
		Queries    []struct {
			Expr       string            `json:"expr"`
			Datasource map[string]string `json:"datasource"`
		} `json:"queries"`
		Range struct{ From, To string } `json:"range"`
	}
	if eu.Path != "/explore" || json.Unmarshal([]byte(eu.Query().Get("panes")), &panes) != nil || len(panes) != 1 {
		t.Fatalf("explore link %s: not one Explore pane", eu)
	}
	for _, p := range panes {
		if p.Datasource != exploreUID || len(p.Queries) != 1 || p.Queries[0].Datasource["uid"] != exploreUID || p.Queries[0].Expr != runs.DefaultUserCountQuery ||
			p.Range.From != strconv.FormatInt(from*1000, 10) || p.Range.To != strconv.FormatInt(to*1000, 10) {
			t.Errorf("explore pane %+v: want %s, the user-count query, %d..%d ms", p, exploreUID, from*1000, to*1000)
		}
	}
	t.Logf("links of %s row %d:\n  %s\n  %s", fld.Name, i, u, eu)
}

// The runs table and the run annotations over gRPC link each run to the run
// overview dashboard over its window, and to Explore on the Prometheus
// datasource of the setting exploreDatasourceUid over the same window; without
// the setting there is no Explore link.
func TestRunLinks(t *testing.T) {
	e := newEnv(t, "steady")
	tr := e.truth
	for _, explore := range []string{"prometheus", ""} {
		e.jsonData["exploreDatasourceUid"] = explore
		e.uid = "ds-links-" + explore + strconv.FormatInt(envSeq.Add(1), 10)
		c := e.client(t)
		r := e.one(t, c, map[string]any{"queryType": "runs"})
		f := r.Frames[0]
		i := -1
		for j := range f.Rows() {
			if field(t, f, "id").At(j) == e.runID {
				i = j
			}
		}
		if i < 0 {
			t.Fatalf("the runs table lacks %s", e.runID)
		}
		checkRunLinks(t, f, field(t, f, "id"), i, e.uid, e.runID, tr.Start, tr.End, explore)

		// The run's region and its steady window's both open the run.
		a := e.one(t, c, map[string]any{"queryType": "annotations"}).Frames[0]
		found := map[string]bool{}
		for j := range a.Rows() {
			if field(t, a, "run").At(j) != e.runID {
				continue
			}
			found[strings.Split(field(t, a, "tags").At(j).(string), ",")[0]] = true
			checkRunLinks(t, a, field(t, a, "title"), j, e.uid, e.runID, tr.Start, tr.End, explore)
		}
		if !found["run"] || !found["steady"] {
			t.Errorf("regions of %s among the annotations: %v, want run and steady", e.runID, found)
		}
	}
}
