// Package report renders one self-contained report.html of a benchmark run
// from its typed artifacts: the harvest.Result of server_summary.json, the
// trial_summary measurements, psi_series.json and notices.json, optionally
// next to a baseline run's figures. It also makes the report of a stored
// run (Make: `density report`).
//
// The page reads top-down: a summary first (the run, its verdict, its
// density frontiers and every null field with its reason), then one table
// of gates, the charts of the run (every time chart on the run's window),
// one table of phases and the run's other rows.
//
// Charts are drawn by gonum/plot (gonum.org/v1/plot) into inline SVG. It
// was chosen because its SVG backend writes real <text> elements for
// titles, axes and legends (readable, selectable, printable, accessible),
// it is a Go module built by `go install` with nothing from npm, and the
// page needs no script at all; a JavaScript charting library would have to
// be committed and embedded, and canvas-drawn labels are pixels, not text.
// Every chart draws at most MaxChartPoints points (max-thinned, so spikes
// stay visible), which bounds the page whatever the run's length and pod
// count. The page carries its CSS inline and a Content-Security-Policy of
// default-src 'none', so opening it makes no request to any address.
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/harvest"
)

// FileName is the report's name next to server_summary.json.
const FileName = "report.html"

// Run is one run's artifacts as the report reads them.
type Run struct {
	Meta   artifact.ServerMetadata
	Result *harvest.Result
	// Trial is the trial_summary row's measurements; nil when the run has
	// no trial_summary row.
	Trial frontier.Measurements
	// Rows are the run's other stats.jsonl rows (gate verdicts, phase
	// breakdown, ladder steps, ...), keyed <metric>.<key>.
	Rows []artifact.Row
}

// Input is everything a report shows.
type Input struct {
	Run
	// PSI is psi_series.json; nil shows the PSI summaries with a notice.
	PSI *artifact.PSISeries
	// Source names where the figures come from (Prometheus URL, stored
	// artifacts directory or store run).
	Source string
	// HarvestedAt is when the artifacts were harvested (the export's clock,
	// or the file time of stored artifacts); the render itself adds no time.
	HarvestedAt time.Time
	// Notices are every notice of the run (notices.json: the harvest's,
	// the trial_summary's, ...) and the report's own (a missing
	// psi_series.json, ...); a null field shows those that explain it.
	Notices []artifact.Notice
	// NoNotices, when set, is why the run's notices are not known (a
	// stored run without notices.json): shown next to each null.
	NoNotices string
	// Baseline, when set, adds a compare column to every figure.
	Baseline *Run
}

//go:embed report.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("report").Parse(pageTemplate))

// Render returns the report page.
func Render(in Input) ([]byte, error) {
	if in.Result == nil {
		return nil, fmt.Errorf("report: no result")
	}
	pg, err := build(in)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, pg); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return buf.Bytes(), nil
}

// page is what the template shows, one field per section.
type page struct {
	Title       string
	HasBaseline bool
	Summary     summary
	Gates       *gateTable
	Packing     packingSection
	PSI         []psiBlock
	Snapshots   snapshotSection
	Actors      actorSection
	WorkingSet  wsSection
	Cluster     clusterSection
	Phases      *phaseTable
	Families    []familyTable
	Notices     []string
}

// build assembles the page, one function per section, in the page's
// order (each null's reason is numbered as its figure is made).
func build(in Input) (*page, error) {
	f := newFigures(in)
	frontiers := frontierFigures(in, f)
	pg := &page{
		Title:       fmt.Sprintf("%s %s — density report", orDash(in.Meta.TestName), orDash(in.Meta.Tag)),
		HasBaseline: f.base != nil,
		Gates:       gateSection(in.Rows, f),
	}
	var err error
	if pg.Packing, err = packingChart(in, f); err != nil {
		return nil, err
	}
	if pg.Actors, err = actorsSection(in, f); err != nil {
		return nil, err
	}
	if pg.PSI, err = psiSections(in, f); err != nil {
		return nil, err
	}
	if pg.WorkingSet, err = workingSetSection(in, f); err != nil {
		return nil, err
	}
	if pg.Snapshots, err = snapshotsSection(in, f); err != nil {
		return nil, err
	}
	pg.Cluster = clusterFacts(in, f)
	pg.Phases = phaseSection(in.Rows, f)
	pg.Families = familySections(in.Rows, f)
	// The summary last: it counts what the sections compared and nulled.
	pg.Summary = summarySection(in, f, pg.Gates, frontiers)
	for _, n := range in.Notices {
		pg.Notices = append(pg.Notices, n.String())
	}
	return pg, nil
}
