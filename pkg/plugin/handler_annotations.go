package plugin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
)

// handleAnnotations answers `annotations`: for each run of the dashboard
// range (or each named run) a region from start to end titled
// `<test_name> <tag>` and tagged run + test name, and a region for its
// steady window tagged steady + test name. Fields follow Grafana's
// annotation frame convention (time, timeEnd, title, text, tags with
// comma-separated tags), then run, run_start and run_end: the region's run
// and its window (null for change points), which the title links to
// (runLinks).
//
// With ladderSteps, a stored ladder run also gets a region per step over the
// step's steady window, titled `step i/n users=u target_rps=r` and tagged
// ladder (from the run's stored ladder rows).
//
// With changePoints, each change point (verdicts.md) of the stored runs of
// testName (else of each test name in the range) that start in the range
// gets a point annotation at its run's start, titled `<key> +12.3 %
// (regression)`, its text the means, p-value and tag range, tagged
// change-point, regression or improvement, the key, the test name and
// acknowledged when acked. Option keys limits the keys searched.
func (d *Datasource) handleAnnotations(ctx context.Context, pc backend.PluginContext, q backend.DataQuery) backend.DataResponse {
	m, _ := parseQuery(q) // overRuns reports a bad query
	return d.overRuns(ctx, q, func(entries []runs.Entry, problems []string) backend.DataResponse {
		var a annotations
		// Oldest first: the order Grafana draws them in does not matter, but a
		// stable one keeps responses comparable.
		for i := len(entries) - 1; i >= 0; i-- {
			d.addRunRegions(ctx, &a, entries[i], m.LadderSteps)
		}
		if m.ChangePoints {
			problems = append(problems, d.changePointAnnotations(ctx, m, q.TimeRange, entries, &a)...)
		}
		frame := a.frame(d.runLinks(instanceUID(pc), linkRow{run: "run", start: "run_start", end: "run_end"}))
		for _, p := range problems {
			frame.Meta.Notices = append(frame.Meta.Notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: p})
		}
		return backend.DataResponse{Frames: data.Frames{frame}}
	})
}

// annotations are the columns of the annotations frame, one row per
// region or point.
type annotations struct {
	ts, te            []time.Time
	title, text, tags []string
	// Each region's run and the run's window (none for change points), for
	// the title's run links.
	runIDs             []string
	runStarts, runEnds []*time.Time
}

// add adds a row spanning from to to (Unix seconds) of run e (the zero
// Entry: of no one run); empty tags are left out.
func (a *annotations) add(e runs.Entry, from, to int64, title, text string, tags ...string) {
	a.runIDs = append(a.runIDs, e.ID)
	a.runStarts = append(a.runStarts, unixPtr(e.Start, e.ID != ""))
	a.runEnds = append(a.runEnds, unixPtr(e.End, e.ID != "" && e.EndKnown))
	a.ts = append(a.ts, time.Unix(from, 0).UTC())
	a.te = append(a.te, time.Unix(to, 0).UTC())
	a.title, a.text = append(a.title, title), append(a.text, text)
	var kept []string
	for _, t := range tags {
		if t != "" {
			kept = append(kept, t)
		}
	}
	a.tags = append(a.tags, strings.Join(kept, ","))
}

// frame is the annotations table; links are the title's run links.
func (a *annotations) frame(links []data.DataLink) *data.Frame {
	return table(data.NewFrame("annotations",
		data.NewField("time", nil, a.ts),
		data.NewField("timeEnd", nil, a.te),
		withLinks(data.NewField("title", nil, a.title), links),
		data.NewField("text", nil, a.text),
		data.NewField("tags", nil, a.tags),
		data.NewField("run", nil, a.runIDs),
		nullableTime("run_start", a.runStarts),
		nullableTime("run_end", a.runEnds),
	))
}

// addRunRegions adds the regions of run e: the run, its steady window
// when its end is known, and with ladderSteps the steps of a stored
// ladder run.
func (d *Datasource) addRunRegions(ctx context.Context, a *annotations, e runs.Entry, ladderSteps bool) {
	name := runLabel(e)
	end := e.End
	if !e.EndKnown {
		end = e.Start
	}
	a.add(e, e.Start, end, name, "run "+e.ID+" ("+e.WindowFrom+")", "run", e.TestName)
	if e.EndKnown {
		why := "steady window from the user count"
		if !e.SteadyFromSamples {
			why = "steady window = run window: " + e.SteadyWhy
		}
		a.add(e, e.SteadyStart, e.SteadyEnd, name+" steady", why, "steady", e.TestName)
	}
	if !ladderSteps {
		return
	}
	for _, lw := range d.storedLadderWindows(ctx, e) {
		w, s := lw.win, lw.step
		target := "unchanged"
		if s.TargetRPS != nil {
			target = strconv.FormatFloat(*s.TargetRPS, 'f', -1, 64)
		}
		a.add(e, w.A, w.B, fmt.Sprintf("step %d/%d users=%d target_rps=%s", s.Number, s.Of, s.Users, target),
			ladderStepText(e, lw), "ladder", e.TestName)
	}
}

// ladderStepText is a step region's text: the trimmed window it spans and,
// when the run's logs.txt gave it, the step's untrimmed span.
func ladderStepText(e runs.Entry, lw ladderWindow) string {
	t := fmt.Sprintf("ladder step of run %s: steady window (%d, %d]", e.ID, lw.win.A, lw.win.B)
	if lw.step.StartMs != 0 && lw.step.EndMs != nil {
		t += fmt.Sprintf(" after the %d s / %d s trim; the step ran %s to %s UTC",
			runs.DefaultLadderTrimStartS, runs.DefaultLadderTrimEndS,
			time.UnixMilli(lw.step.StartMs).UTC().Format(time.DateTime+".000"),
			time.UnixMilli(*lw.step.EndMs).UTC().Format(time.DateTime+".000"))
	}
	return t
}

// changePointAnnotations adds to a the change points of the annotation
// query's test name (else of every test name among entries) and returns
// the problems to show as notices.
func (d *Datasource) changePointAnnotations(ctx context.Context, m queryModel, tr backend.TimeRange, entries []runs.Entry, a *annotations) []string {
	var names []string
	if m.TestName != "" {
		names = []string{m.TestName}
	} else {
		for _, e := range entries {
			if e.TestName != "" && !slices.Contains(names, e.TestName) {
				names = append(names, e.TestName)
			}
		}
		slices.Sort(names)
	}
	var problems []string
	for _, name := range names {
		cps, _, notices, err := d.changePoints(ctx, name, m.Keys, m.MinRuns, tr)
		if err != nil {
			problems = append(problems, "change points of "+name+": "+err.Error())
			continue
		}
		for _, n := range notices {
			problems = append(problems, n.Text)
		}
		for _, cp := range cps {
			text := fmt.Sprintf("mean %s → %s, p = %.3g, tags %s..%s (run %s, cohort %s)",
				strconv.FormatFloat(cp.MeanBefore, 'g', 6, 64), strconv.FormatFloat(cp.MeanAfter, 'g', 6, 64),
				cp.PValue, cp.PreviousTag, cp.Tag, cp.Run, cp.Cohort)
			ack := ""
			if cp.Acknowledged {
				ack = "acknowledged"
				text += ", acknowledged: " + cp.AckReason
			}
			a.add(runs.Entry{}, cp.Start, cp.Start, cp.Title(), text, "change-point", cp.Kind, cp.Key, name, ack)
		}
	}
	return problems
}
