package command

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// CompareOptions are the flags of `density compare`.
type CompareOptions struct {
	Store    string
	Format   string
	JSON     bool
	All      bool
	NoisePct float64
}

// AddCompareFlags declares the compare's flags on fs, bound to o.
func AddCompareFlags(fs *pflag.FlagSet, o *CompareOptions) {
	cli.Store{Store: &o.Store, StoreUsage: "results store URL: A and B are run ids in it"}.AddTo(fs)
	fs.StringVar(&o.Format, "format", "markdown", "markdown or json")
	fs.BoolVar(&o.JSON, "json", false, "same as --format json")
	fs.BoolVar(&o.All, "all", false, "list every compared key in the Markdown, not only the changed ones")
	fs.Float64Var(&o.NoisePct, "noise-pct", verdicts.DefaultNoisePct, "|Δ%| at or below which a key is the same")
	cli.SetGroup(fs, cli.GroupVerdicts, "noise-pct")
	cli.SetGroup(fs, cli.GroupOutput, "format", "json", "all")
}

// CompareCommand is `density compare A B`: A the baseline, B the
// candidate, run directories (or store ids with --store).
func CompareCommand(env Env) cli.Command {
	var o CompareOptions
	fs := cli.NewFlagSet("density compare")
	AddCompareFlags(fs, &o)
	return cli.Command{
		Use:   "compare BASELINE CANDIDATE [flags]",
		Short: "compare two runs key by key (Markdown or JSON)",
		Long: `Compares two runs key by key: run directories, or run ids with --store.
Prints Markdown for a pull-request comment: a summary line (worse, better,
same, not compared), then the changed keys (--all: every key); values that
are whole numbers on both sides (counts) print as integers. The Markdown
stays within GitHub's 65,536-character comment limit: rows past it are left
out and the last line says how many. --json prints every key.`,
		Flags: fs,
		Run:   func(ctx context.Context, args []string) int { return RunCompare(ctx, o, args, env) },
	}
}

// RunCompare compares the two runs named by args.
func RunCompare(ctx context.Context, o CompareOptions, args []string, env Env) int {
	env.Stderr = cli.Text(env.Stderr)
	fail := func(code int, err error) int {
		fmt.Fprintf(env.Stderr, "density compare: %v\n", err)
		return code
	}
	if o.JSON {
		o.Format = "json"
	}
	if len(args) != 2 {
		return fail(cli.ExitUsage, fmt.Errorf("want two runs: baseline and candidate"))
	}
	if o.Format != "markdown" && o.Format != "json" {
		return fail(cli.ExitUsage, fmt.Errorf("--format %q (want markdown or json)", o.Format))
	}
	var load func(string) (*verdicts.Run, error)
	if o.Store != "" {
		s, err := runs.OpenStore(ctx, o.Store)
		if err != nil {
			return fail(cli.ExitUsage, err)
		}
		defer s.Close()
		load = func(id string) (*verdicts.Run, error) { return loadStoreRun(ctx, s, id) }
	} else {
		load = loadDir
	}
	a, err := load(args[0])
	if err != nil {
		return fail(cli.ExitFor(err), err)
	}
	b, err := load(args[1])
	if err != nil {
		return fail(cli.ExitFor(err), err)
	}
	c := verdicts.Compare(a, b, o.NoisePct)
	if o.Format == "json" {
		out := struct {
			Baseline  string `json:"baseline"`
			Candidate string `json:"candidate"`
			verdicts.Comparison
		}{a.ID, b.ID, c}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fail(cli.ExitWrite, err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", data)
		return cli.ExitOK
	}
	if err := WriteMarkdown(cli.Text(env.Stdout), a.ID, b.ID, c, MarkdownOptions{All: o.All}); err != nil {
		return fail(cli.ExitWrite, err)
	}
	return cli.ExitOK
}
