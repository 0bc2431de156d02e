package plugin

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/pkg/runs"
)

// storeCohorts writes n runs of test "nightly" per cohort, the cohorts'
// runs interleaved 12 h apart (machine_type n2, then c3, …), the newest a
// day before end; restore_p99_s of cohort n2 rises by 30 % from its run
// index at. It returns each cohort's run ids, oldest first, and starts.
func storeCohorts(t *testing.T, root string, n, at int, end int64) (ids map[string][]string, starts map[string][]int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 8))
	ids, starts = map[string][]string{}, map[string][]int64{}
	cohorts := []string{"n2", "c3"}
	for i := range n * len(cohorts) {
		mt := cohorts[i%len(cohorts)]
		k := i / len(cohorts) // the run's index in its cohort
		ts := end - day - int64(n*len(cohorts)-1-i)*day/2
		tag := fmt.Sprintf("%s-%02d", mt, k)
		dir := filepath.Join(root, "runs", "nightly", "run_date="+time.Unix(ts, 0).UTC().Format("2006-01-02"),
			"run_ts="+strconv.FormatInt(ts, 10), "run_tag="+tag)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		restore := 4.0 * (1 + 0.01*rng.NormFloat64())
		if mt == "n2" && k >= at {
			restore *= 1.3
		}
		stamp := time.Unix(ts, 0).UTC().Format("2006-01-02T15:04:05Z")
		line := func(metric, m string) string {
			return fmt.Sprintf(`{"timestamp": %q, "tag": %q, "test_name": "nightly", "metric": %q, "measurements": {%s}}`+"\n", stamp, tag, metric, m)
		}
		body := line("server_summary", fmt.Sprintf(`"restore_p99_s": %q`, strconv.FormatFloat(restore, 'f', 4, 64))) +
			line("trial_summary", fmt.Sprintf(`"machine_type": %q, "run_start": "%d", "run_end": "%d"`, mt, ts, ts+600))
		if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		ids[mt] = append(ids[mt], runs.StoreRunID("nightly", ts, tag))
		starts[mt] = append(starts[mt], ts)
	}
	return ids, starts
}

// changePoints searches the newest maxRunsPerQuery runs of each cohort,
// not of the test: two cohorts of 30 runs interleave, maxRunsPerQuery is
// 10, and cohort n2 steps up at its run 24. Its newest 10 runs (20–29)
// hold the step with 4 runs before it; the newest 10 runs of the test
// would hold 5 of each cohort, after the step. A run after the range's
// end is not read, and a point before the range is not returned.
func TestChangePointsNewestRunsOfEachCohort(t *testing.T) {
	e := newEnv(t, "steady")
	end := e.now.Unix()
	ids, starts := storeCohorts(t, e.storeRoot, 30, 24, end)
	e.jsonData["maxRunsPerQuery"] = 10
	for _, c := range []struct {
		name           string
		from, to       int64
		points         []string
		searched, capN string
	}{
		{"whole history", starts["n2"][0], end, []string{ids["n2"][24]},
			"20 stored runs of nightly up to the end of the range searched",
			"only the newest 20 of 60 stored runs of nightly up to the end of the range were searched (maxRunsPerQuery): at most the newest 10 of each cohort"},
		// Ends before the newest c3 run: 59 runs start at or before it,
		// the newest 10 of each cohort are read.
		{"up to the newest n2 run", starts["n2"][20], starts["n2"][29], []string{ids["n2"][24]},
			"20 stored runs of nightly up to the end of the range searched",
			"only the newest 20 of 59 stored runs of nightly up to the end of the range were searched (maxRunsPerQuery)"},
		{"range after the step", starts["n2"][26], end, nil,
			"20 stored runs of nightly up to the end of the range searched", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.uid = fmt.Sprintf("%s-%s", e.uid, strings.ReplaceAll(c.name, " ", "-"))
			r := e.query(t, e.client(t), q("A", c.from, c.to, map[string]any{"queryType": "changePoints", "testName": "nightly"}))["A"]
			if r.Error != nil {
				t.Fatal(r.Error)
			}
			f := r.Frames[0]
			var got []string
			for i := range f.Rows() {
				got = append(got, field(t, f, "run").At(i).(string))
				if c := field(t, f, "cohort").At(i).(string); c != "nightly machine_type=n2" {
					t.Errorf("point of cohort %q", c)
				}
			}
			if !slices.Equal(got, c.points) {
				t.Errorf("change points at %v, want %v", got, c.points)
			}
			text := strings.Join(notices(r.Frames), "\n")
			for _, want := range []string{c.searched, c.capN} {
				if want != "" && !strings.Contains(text, want) {
					t.Errorf("no notice says %q:\n%s", want, text)
				}
			}
		})
	}
}
