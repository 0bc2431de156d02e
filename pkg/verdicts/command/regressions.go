package command

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// maxAcksBytes bounds an acks.yaml.
const maxAcksBytes = 1 << 20

// Regressions is `density regressions --store URL --test-name NAME`.
func Regressions(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("density regressions", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	def := verdicts.DefaultOptions()
	var (
		store      = fs.String("store", env.Getenv("STORE"), "results store URL")
		testName   = fs.String("test-name", "", "test name whose runs are searched")
		keys       = fs.String("keys", "", "comma-separated keys (default: every numeric *_summary key with a direction)")
		since      = fs.String("since", "", "only runs started within this Prometheus duration (e.g. 30d)")
		asJSON     = fs.Bool("json", false, "print JSON")
		acksFile   = fs.String("acks", "", "acknowledgements file (default runs/<test_name>/acks.yaml in the store)")
		cohort     = fs.String("cohort", "", "comma-separated trial_summary keys that also separate cohorts")
		window     = fs.Int("window", def.Window, "points analysed at once")
		pValue     = fs.Float64("p-value", def.PValue, "a split is kept when p is below this")
		minRuns    = fs.Int("min-runs", def.MinRuns, "least runs on each side of a change")
		minChange  = fs.Float64("min-change-pct", def.MinChangePct, "least change of the means, percent")
		failRecent = fs.Int("fail-recent", -1, "exit 4 for an unacknowledged regression at one of the newest N runs (default --min-runs)")
	)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ExitOK
		}
		return ExitUsage
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(env.Stderr, "density regressions: %v\n", err)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(ExitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *store == "" || *testName == "":
		return fail(ExitUsage, fmt.Errorf("--store and --test-name are required"))
	case *window < 2 || *minRuns < 2 || *pValue <= 0 || *pValue > 1 || *minChange < 0:
		return fail(ExitUsage, fmt.Errorf("--window and --min-runs ≥ 2, 0 < --p-value ≤ 1, --min-change-pct ≥ 0"))
	}
	if *failRecent < 0 {
		*failRecent = *minRuns
	}
	var from int64
	if *since != "" {
		d, err := model.ParseDuration(*since)
		if err != nil {
			return fail(ExitUsage, fmt.Errorf("--since: %v", err))
		}
		from = time.Now().Add(-time.Duration(d)).Unix()
	}
	var acks []verdicts.Ack
	if *acksFile != "" {
		data, err := os.ReadFile(*acksFile)
		if err != nil {
			return fail(ExitUsage, fmt.Errorf("--acks: %v", err))
		}
		if acks, err = verdicts.ParseAcks(data); err != nil {
			return fail(ExitUsage, err)
		}
	}
	s, err := runs.OpenStore(ctx, *store)
	if err != nil {
		return fail(ExitUsage, err)
	}
	defer s.Close()
	if *acksFile == "" {
		data, err := s.ReadTestFile(ctx, *testName, "acks.yaml", maxAcksBytes)
		if err != nil {
			return fail(ExitWrite, err)
		}
		if acks, err = verdicts.ParseAcks(data); err != nil {
			return fail(ExitUsage, fmt.Errorf("acks.yaml in the store: %w", err))
		}
	}
	all, err := LoadTest(ctx, s, *testName, from)
	if err != nil {
		return fail(ExitWrite, err)
	}
	var ks []string
	if *keys != "" {
		ks = splitList(*keys)
	}
	o := verdicts.Options{Window: *window, PValue: *pValue, MinRuns: *minRuns, MinChangePct: *minChange}
	cps := verdicts.ChangePoints(verdicts.Cohorts(all, splitList(*cohort)), ks, o, acks)
	recent := verdicts.UnacknowledgedRecent(cps, *failRecent)
	if *asJSON {
		data, err := json.MarshalIndent(struct {
			TestName     string                 `json:"test_name"`
			Runs         int                    `json:"runs"`
			ChangePoints []verdicts.ChangePoint `json:"change_points"`
		}{*testName, len(all), cps}, "", "  ")
		if err != nil {
			return fail(ExitWrite, err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", data)
	} else {
		fmt.Fprintf(env.Stdout, "%s: %d runs, %d change points\n", *testName, len(all), len(cps))
		for _, cp := range cps {
			line := fmt.Sprintf("%s at run %s (%s..%s): mean %.4g -> %.4g, p=%.3g, cohort %q",
				cp.Title(), cp.Run, cp.PreviousTag, cp.Tag, cp.MeanBefore, cp.MeanAfter, cp.PValue, cp.Cohort)
			if cp.Acknowledged {
				line += ", acknowledged: " + cp.AckReason
			}
			fmt.Fprintln(env.Stdout, line)
		}
	}
	if len(recent) > 0 {
		fmt.Fprintf(env.Stderr, "density regressions: %d unacknowledged regression(s) at the newest %d runs\n", len(recent), *failRecent)
		return ExitRegression
	}
	return ExitOK
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
