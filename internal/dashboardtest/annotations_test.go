package dashboardtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// checkAnnotations runs the annotation queries and checks Grafana's
// region fields: the run and its steady window, both inside the run.
func (e *smokeEnv) checkAnnotations(t *testing.T, d dashDoc, vars dashVars, from, to int64) {
	for _, a := range d.Annotations.List {
		if a.BuiltIn == 1 || !a.Enable {
			continue
		}
		q, err := decodeDensityQuery(a.Target)
		if err != nil {
			t.Fatal(err)
		}
		q.Datasource = a.DS
		frames, _, err := e.query(t, []densityQuery{q}, vars, from, to)
		if err != nil {
			t.Fatalf("annotation %s: %v", a.Name, err)
		}
		if len(frames) != 1 {
			t.Fatalf("annotation %s: %d frames", a.Name, len(frames))
		}
		fr := frames[0]
		get := func(name string) *data.Field {
			f, _ := fr.FieldByName(name)
			if f == nil {
				t.Fatalf("annotation %s: no %q field (Grafana maps time, timeEnd, title, text, tags)", a.Name, name)
			}
			return f
		}
		ts, te, title, tags := get("time"), get("timeEnd"), get("title"), get("tags")
		_ = get("text")
		var runRegion, steady bool
		ladderRegions, changePoints := 0, 0
		for i := 0; i < fr.Rows(); i++ {
			s, _ := ts.ConcreteAt(i)
			en, _ := te.ConcreteAt(i)
			st, et := s.(time.Time).Unix(), en.(time.Time).Unix()
			tg, _ := tags.ConcreteAt(i)
			ti, _ := title.ConcreteAt(i)
			tagList := strings.Split(fmt.Sprint(tg), ",")
			switch {
			case slices.Contains(tagList, "run"):
				runRegion = runRegion || (st == e.truth.Start && et == e.truth.End)
			case slices.Contains(tagList, "steady"):
				steady = steady || (st >= e.truth.Start && et <= e.truth.End && st < et)
			case slices.Contains(tagList, "ladder"):
				if st >= e.truth.Start && et <= e.truth.End && st < et {
					ladderRegions++
				}
			case slices.Contains(tagList, "change-point"):
				// A point at a run start in the range, saying its kind.
				changePoints++
				if st != et || st < from || st > to || !(slices.Contains(tagList, "regression") || slices.Contains(tagList, "improvement")) {
					t.Errorf("annotation %s: change point %q %d..%d tags %v: want a point in the range tagged regression or improvement", a.Name, ti, st, et, tagList)
				}
			}
			t.Logf("annotation %s: %q %s..%s tags %v", a.Name, ti, time.Unix(st, 0).UTC().Format(time.RFC3339), time.Unix(et, 0).UTC().Format(time.RFC3339), tagList)
		}
		if !runRegion || !steady {
			t.Errorf("annotation %s: want the demo run region %d..%d and a steady region inside it (run %v, steady %v)",
				a.Name, e.truth.Start, e.truth.End, runRegion, steady)
		}
		if q.ChangePoints {
			// The smoke store holds one run of the test: a change needs
			// --min-runs runs on each side, so none is expected.
			t.Logf("annotation %s: %d change points over the stored runs of %s", a.Name, changePoints, vars.interpolate(q.TestName, ","))
			if changePoints != 0 {
				t.Errorf("annotation %s: %d change points over a single stored run", a.Name, changePoints)
			}
		}
		if q.LadderSteps {
			want := 0
			if e.truth.Ladder != nil {
				want = len(e.truth.Ladder.Rows)
			}
			if want == 0 || ladderRegions != want {
				t.Errorf("annotation %s: %d ladder step regions inside the run, want one per step row of the simulated ladder (%d)", a.Name, ladderRegions, want)
			}
		}
	}
}

func describeFrames(frames []*data.Frame) string {
	var parts []string
	for _, fr := range frames {
		var names []string
		for _, f := range fr.Fields {
			names = append(names, fmt.Sprintf("%s(%s)", displayName(f, fr, frames), f.Type()))
		}
		parts = append(parts, fmt.Sprintf("%q[%d rows: %s]", fr.Name, fr.Rows(), strings.Join(names, ", ")))
	}
	if len(parts) == 0 {
		return "no frames"
	}
	return strings.Join(parts, "; ")
}
