package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
	_ "time/tzdata" // --log-tz names resolve on hosts without a zone database

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/engine"
	"github.com/substrate/density/pkg/ladder"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// LadderOptions are the ladder flags (ladder-steps.md).
type LadderOptions struct {
	// Enabled writes the ladder rows when logs.txt has ladder lines
	// (--ladder, default true; --no-ladder; LADDER=false for mage).
	Enabled     bool
	ProfileFile string
	TrimStartS  int64
	TrimEndS    int64
	LogTZ       string
	ResumeName  string
	PauseName   string

	AteapiNamespace, AteapiContainer         string
	PostgresNamespace, PostgresContainer     string
	FakeAteletNamespace, FakeAteletContainer string

	MinAchieved     float64
	MaxFailureRatio float64
}

// ladderFlags declares the ladder flags on fs.
func ladderFlags(fs *pflag.FlagSet, o *LadderOptions) {
	d := ladder.DefaultVars()
	fs.BoolVar(&o.Enabled, "ladder", true, "write ladder_step_NNN and ladder_summary rows when logs.txt has ladder lines (--no-ladder skips them)")
	fs.StringVar(&o.ProfileFile, "ladder-profile", "", "YAML file of ladder figures replacing the built-in profile (see density ladder --print-profile)")
	fs.Int64Var(&o.TrimStartS, "ladder-trim-start-s", runs.DefaultLadderTrimStartS, "seconds left out at the start of each ladder step")
	fs.Int64Var(&o.TrimEndS, "ladder-trim-end-s", runs.DefaultLadderTrimEndS, "seconds left out at the end of each ladder step")
	fs.StringVar(&o.LogTZ, "log-tz", "UTC", "IANA time zone of the timestamps in logs.txt")
	fs.StringVar(&o.ResumeName, "ladder-resume-name", d["resume_name"], "request name of the ladder's resume operation")
	fs.StringVar(&o.PauseName, "ladder-pause-name", d["pause_name"], "request name of the ladder's pause operation")
	fs.StringVar(&o.AteapiNamespace, "ladder-ateapi-namespace", d["ateapi_namespace"], "namespace of the ate-api-server container")
	fs.StringVar(&o.AteapiContainer, "ladder-ateapi-container", d["ateapi_container"], "container name of the ate-api-server")
	fs.StringVar(&o.PostgresNamespace, "ladder-postgres-namespace", d["postgres_namespace"], "namespace of the Postgres container")
	fs.StringVar(&o.PostgresContainer, "ladder-postgres-container", d["postgres_container"], "container name of Postgres")
	fs.StringVar(&o.FakeAteletNamespace, "ladder-fake-atelet-namespace", d["fake_atelet_namespace"], "namespace of the fake-atelet container")
	fs.StringVar(&o.FakeAteletContainer, "ladder-fake-atelet-container", d["fake_atelet_container"], "container name of the fake-atelet")
	fs.Float64Var(&o.MinAchieved, "ladder-min-achieved", 0.95, "a paced step is sustained when resume_rps >= this × target_rps")
	fs.Float64Var(&o.MaxFailureRatio, "ladder-max-failure-ratio", 0.01, "a sustained step has resume failures / resume requests at most this")
}

func (o LadderOptions) vars() ladder.Vars {
	return ladder.Vars{
		"resume_name": o.ResumeName, "pause_name": o.PauseName,
		"ateapi_namespace": o.AteapiNamespace, "ateapi_container": o.AteapiContainer,
		"postgres_namespace": o.PostgresNamespace, "postgres_container": o.PostgresContainer,
		"fake_atelet_namespace": o.FakeAteletNamespace, "fake_atelet_container": o.FakeAteletContainer,
	}
}

// profile is the expanded, validated profile: the file's, else the
// built-in one.
func (o LadderOptions) profile() (ladder.Profile, error) {
	if o.ProfileFile == "" {
		p, err := ladder.Builtin().Expand(o.vars())
		if err == nil {
			err = p.Validate()
		}
		if err != nil {
			return nil, cli.Usagef("ladder profile: %v", err)
		}
		return p, nil
	}
	data, err := os.ReadFile(o.ProfileFile)
	if err != nil {
		return nil, cli.Usagef("--ladder-profile: %v", err)
	}
	p, err := ladder.ParseProfile(data, o.vars())
	if err != nil {
		return nil, cli.Usagef("--ladder-profile %s: %v", o.ProfileFile, err)
	}
	return p, nil
}

func (o LadderOptions) location() (*time.Location, error) {
	if o.LogTZ == "" || o.LogTZ == "UTC" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(o.LogTZ)
	if err != nil {
		return nil, cli.Usagef("--log-tz %q: %v", o.LogTZ, err)
	}
	return loc, nil
}

// validate checks the ladder flags (the profile file included).
func (o LadderOptions) validate() error {
	switch {
	case o.TrimStartS < 0 || o.TrimEndS < 0:
		return cli.Usagef("--ladder-trim-start-s and --ladder-trim-end-s must not be negative")
	case !(o.MinAchieved > 0 && o.MinAchieved <= 10):
		return cli.Usagef("--ladder-min-achieved must be in (0, 10]")
	case !(o.MaxFailureRatio >= 0 && o.MaxFailureRatio <= 1):
		return cli.Usagef("--ladder-max-failure-ratio must be in [0, 1]")
	}
	if _, err := o.location(); err != nil {
		return err
	}
	if !o.Enabled {
		return nil
	}
	_, err := o.profile()
	return err
}

func (o LadderOptions) evalOptions() ladder.Options {
	return ladder.Options{
		TrimStartS: o.TrimStartS, TrimEndS: o.TrimEndS,
		MinAchieved: o.MinAchieved, MaxFailureRatio: o.MaxFailureRatio,
		ResumeName: o.ResumeName,
	}
}

// readLadderLog reads logs.txt's ladder lines; a run without logs.txt has
// none (nil, nil).
func readLadderLog(ctx context.Context, o LadderOptions, open opener) (*runs.Ladder, error) {
	if !o.Enabled {
		return nil, nil
	}
	loc, err := o.location()
	if err != nil {
		return nil, err
	}
	rc, err := open(ctx, runs.FileLogs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", runs.FileLogs, err)
	}
	defer rc.Close()
	lad, err := runs.ReadLadder(rc, loc)
	if err != nil {
		return nil, err
	}
	return &lad, nil
}

// ladderPart is the ladder part of an export: what the engine evaluates,
// or the result without an evaluation (nil both for a run without ladder
// lines or with --no-ladder).
func ladderPart(o LadderOptions, lad *runs.Ladder, readErr error, c *promql.Client) (*engine.Ladder, *ladder.Result) {
	if !o.Enabled {
		return nil, nil
	}
	if readErr != nil {
		return nil, &ladder.Result{Err: readErr, Notices: []string{fmt.Sprintf("ladder: %s unreadable, no ladder rows written: %v", runs.FileLogs, readErr)}}
	}
	if lad == nil || (len(lad.Steps) == 0 && len(lad.Notices) == 0) {
		return nil, nil
	}
	prof, err := o.profile()
	if err != nil {
		return nil, &ladder.Result{Err: err, Notices: []string{"ladder: " + err.Error()}}
	}
	return &engine.Ladder{Client: c, Log: *lad, Profile: prof, Options: o.evalOptions()}, nil
}

// printLadder prints the ladder's status line and notices.
func printLadder(w io.Writer, res *ladder.Result) {
	if res == nil {
		return
	}
	for _, n := range res.Notices {
		fmt.Fprintf(w, "notice: %s\n", n)
	}
	switch {
	case res.Err != nil:
		fmt.Fprintln(w, "ladder: no rows (a read failed)")
	case len(res.Rows) == 0 && len(res.Skipped) == 0:
	default:
		fmt.Fprintf(w, "ladder: %d step row(s), %d step(s) skipped\n", len(res.Rows), len(res.Skipped))
	}
}
