// Package command is the `density check`, `compare` and `regressions`
// subcommands (and `mage check`): flags and tables around pkg/verdicts,
// which reads the runs (verdicts.LoadDir, LoadStoreRun, ...).
package command

import (
	"context"
	"errors"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// usage marks a run named on the command line that cannot be used
// (verdicts.InputError) as a usage error: exit 2.
func usage(err error) error {
	if in := (*verdicts.InputError)(nil); errors.As(err, &in) {
		return cli.Usage(err)
	}
	return err
}

// loadDir is verdicts.LoadDir for a command: its errors are usage errors.
func loadDir(dir string) (*verdicts.Run, error) {
	r, err := verdicts.LoadDir(dir)
	return r, usage(err)
}

// loadStoreRun is verdicts.LoadStoreRun for a command.
func loadStoreRun(ctx context.Context, s *runs.Store, id string) (*verdicts.Run, error) {
	r, err := verdicts.LoadStoreRun(ctx, s, id)
	return r, usage(err)
}

// BaselineFlags are the three baseline flags shared by check and export.
type BaselineFlags struct {
	Dir, Run, Store string
}

// Set reports whether a baseline was asked for.
func (b BaselineFlags) Set() bool { return b.Dir != "" || b.Run != "" }

// Load reads the baseline (nil when none was asked for). defaultStore is
// --store, used when --baseline-store is empty.
func (b BaselineFlags) Load(ctx context.Context, cand *verdicts.Run, defaultStore string) (*verdicts.Run, error) {
	switch {
	case b.Dir != "" && b.Run != "":
		return nil, cli.Usagef("--baseline and --baseline-run are exclusive")
	case b.Dir != "":
		return loadDir(b.Dir)
	case b.Run == "":
		return nil, nil
	}
	url := b.Store
	if url == "" {
		url = defaultStore
	}
	if url == "" {
		return nil, cli.Usagef("--baseline-run needs --baseline-store or --store")
	}
	s, err := runs.OpenStore(ctx, url)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	defer s.Close()
	if b.Run == "latest" {
		base, err := verdicts.LatestBaseline(ctx, s, cand)
		return base, usage(err)
	}
	return loadStoreRun(ctx, s, b.Run)
}
