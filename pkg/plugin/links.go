package plugin

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// grafanaUID is the form of a Grafana uid (letters, digits, - and _, at most
// 40), which a link puts into a URL as it is.
var grafanaUID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// The run overview dashboard (dashboards/run-density-overview.json) that a
// run's links open.
const (
	overviewUID  = "density-run-overview"
	overviewSlug = "run-density-overview"
)

// linkRow names the fields of a frame row that a run link reads, through
// Grafana's data link variables: the run id, and its start and end (time
// fields: `.numeric` is Unix ms).
type linkRow struct {
	run, start, end string
}

// runLinks are the data links of a run's row: the run overview dashboard of
// this datasource (dsUID) with var-run and the run's window, and, when the
// setting exploreDatasourceUid names a Prometheus datasource, Explore on it
// over the same window with the user-count query. Grafana fills the
// ${__data.fields.…} variables from the row that was clicked.
func (d *Datasource) runLinks(dsUID string, r linkRow) []data.DataLink {
	field := func(name, format string) string { return "${__data.fields." + name + format + "}" }
	from, to := field(r.start, ".numeric"), field(r.end, ".numeric")
	q := "var-run=" + field(r.run, ":percentencode") + "&from=" + from + "&to=" + to
	if grafanaUID.MatchString(dsUID) {
		q = "var-datasource=" + dsUID + "&" + q
	}
	links := []data.DataLink{{Title: "Run overview", URL: "/d/" + overviewUID + "/" + overviewSlug + "?" + q}}
	if uid := d.settings.ExploreDatasourceUID; uid != "" {
		links = append(links, data.DataLink{Title: "Explore the run's metrics", URL: exploreURL(uid, d.settings.UserCountQuery, from, to)})
	}
	return links
}

// exploreURL opens Explore on the Prometheus datasource uid with expr over
// [from, to] (Grafana variables, Unix ms): the panes parameter is the
// URL-encoded JSON of one pane, the variables left as they are for Grafana
// to fill.
func exploreURL(uid, expr, from, to string) string {
	const fromToken, toToken = "DENSITYFROMMS", "DENSITYTOMS"
	pane := map[string]any{
		"density": map[string]any{
			"datasource": uid,
			"queries":    []map[string]any{{"refId": "A", "expr": expr, "datasource": map[string]string{"type": "prometheus", "uid": uid}}},
			"range":      map[string]string{"from": fromToken, "to": toToken},
		},
	}
	b, _ := json.Marshal(pane) // strings and maps only: never fails
	panes := strings.NewReplacer(fromToken, from, toToken, to).Replace(url.QueryEscape(string(b)))
	// No orgId: Grafana opens it in the viewer's current organisation.
	return "/explore?schemaVersion=1&panes=" + panes
}

// withLinks adds links to a field's config.
func withLinks(f *data.Field, links []data.DataLink) *data.Field {
	if f.Config == nil {
		f.Config = &data.FieldConfig{}
	}
	f.Config.Links = append(f.Config.Links, links...)
	return f
}

// instanceUID is the uid of the datasource instance a query was sent to.
func instanceUID(pc backend.PluginContext) string {
	if pc.DataSourceInstanceSettings == nil {
		return ""
	}
	return pc.DataSourceInstanceSettings.UID
}
