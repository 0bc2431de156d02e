package plugin

import (
	"context"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
)

// handleRuns answers `runs`: a table of the catalogued runs, newest first
// (with run range: those starting in the dashboard range, filtered by
// testName and tag). It doubles as the variable query: the frontend takes
// value = id and text = `<test_name> <tag> <start time>`. The id column
// links to the run (runLinks).
func (d *Datasource) handleRuns(ctx context.Context, pc backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	return d.overRuns(ctx, q, func(entries []runs.Entry, problems []string) backend.DataResponse {
		frame := runsFrame(entries)
		if f, _ := frame.FieldByName("id"); f != nil {
			withLinks(f, d.runLinks(instanceUID(pc), linkRow{run: "id", start: "start", end: "end"}))
		}
		var notes []data.Notice
		for _, p := range problems {
			notes = append(notes, data.Notice{Severity: data.NoticeSeverityWarning, Text: p})
		}
		if len(entries) == 0 {
			notes = append(notes, data.Notice{Severity: data.NoticeSeverityInfo, Text: d.noRunsHint()})
		}
		table(frame).Meta.Notices = notes
		if d.catalogs.Discovery != nil && d.settings.DiscoverRuns {
			frame.Meta.ExecutedQueryString = d.catalogs.Discovery.Query()
		}
		return backend.DataResponse{Frames: data.Frames{frame}}
	})
}

// noRunsHint says where runs come from when none was found.
func (d *Datasource) noRunsHint() string {
	switch {
	case d.catalogs.Store == nil && !d.settings.DiscoverRuns:
		return "no run catalog is configured: set a results store or switch on Prometheus run discovery"
	case d.catalogs.Store == nil:
		return "no run found in the time range (Prometheus discovery with " + d.settings.UserCountQuery + ")"
	}
	return "no run found in the time range"
}

// runsFrame is the runs table of datasource.md.
func runsFrame(entries []runs.Entry) *data.Frame {
	n := len(entries)
	id, test, tag := make([]string, n), make([]string, n), make([]string, n)
	start := make([]time.Time, n)
	end, ss, se := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	peak := make([]*float64, n)
	exit := make([]*int64, n)
	for i, e := range entries {
		id[i], test[i], tag[i] = e.ID, e.TestName, e.Tag
		start[i] = time.Unix(e.Start, 0).UTC()
		end[i] = unixPtr(e.End, e.EndKnown)
		ss[i], se[i] = unixPtr(e.SteadyStart, e.EndKnown), unixPtr(e.SteadyEnd, e.EndKnown)
		peak[i], exit[i] = e.PeakUsers, e.ExitCode
	}
	return data.NewFrame("runs",
		configured(data.NewField("id", nil, id), "Run", ""),
		configured(data.NewField("test_name", nil, test), "Test", ""),
		configured(data.NewField("tag", nil, tag), "Tag", ""),
		configured(data.NewField("start", nil, start), "Start", ""),
		configured(nullableTime("end", end), "End", ""),
		configured(nullableTime("steady_start", ss), "Steady start", ""),
		configured(nullableTime("steady_end", se), "Steady end", ""),
		configured(data.NewField("peak_users", nil, peak), "Peak users", unitNone),
		configured(data.NewField("locust_exit_code", nil, exit), "Locust exit code", unitNone),
	)
}
