package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// handleTests answers `tests`: one column of the results store's test
// names, sorted (the second variable query). Prometheus-discovered runs
// have no test name.
func (d *Datasource) handleTests(ctx context.Context, _ backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	if _, err := parseQuery(q); err != nil {
		return errorResponse(err)
	}
	if d.catalogs.Store == nil && d.storeErr != nil {
		return errorResponse(d.storeUnavailable())
	}
	names, err := d.catalogs.Tests(ctx)
	if err != nil {
		return errorResponse(withStatus(backend.StatusBadGateway, err))
	}
	frame := table(data.NewFrame("tests", configured(data.NewField("test_name", nil, names), "Test", "")))
	if d.catalogs.Store == nil {
		frame.Meta.Notices = []data.Notice{{Severity: data.NoticeSeverityInfo,
			Text: "test names come from the results store, which is not configured"}}
	}
	return backend.DataResponse{Frames: data.Frames{frame}}
}
