package command

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// Compare is `density compare A B`: A the baseline, B the candidate, run
// directories (or store ids with --store).
func Compare(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("density compare", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	store := fs.String("store", "", "results store URL: A and B are run ids in it")
	format := fs.String("format", "markdown", "markdown or json")
	asJSON := fs.Bool("json", false, "same as --format json")
	noise := fs.Float64("noise-pct", verdicts.DefaultNoisePct, "|Δ%| at or below which a key is the same")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ExitOK
		}
		return ExitUsage
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(env.Stderr, "density compare: %v\n", err)
		return code
	}
	if *asJSON {
		*format = "json"
	}
	if fs.NArg() != 2 {
		return fail(ExitUsage, fmt.Errorf("want two runs: baseline and candidate"))
	}
	if *format != "markdown" && *format != "json" {
		return fail(ExitUsage, fmt.Errorf("--format %q (want markdown or json)", *format))
	}
	var load func(string) (*verdicts.Run, error)
	if *store != "" {
		s, err := runs.OpenStore(ctx, *store)
		if err != nil {
			return fail(ExitUsage, err)
		}
		defer s.Close()
		load = func(id string) (*verdicts.Run, error) { return LoadStoreRun(ctx, s, id) }
	} else {
		load = LoadDir
	}
	a, err := load(fs.Arg(0))
	if err != nil {
		return fail(exitFor(err), err)
	}
	b, err := load(fs.Arg(1))
	if err != nil {
		return fail(exitFor(err), err)
	}
	c := verdicts.Compare(a, b, *noise)
	if *format == "json" {
		out := struct {
			Baseline  string `json:"baseline"`
			Candidate string `json:"candidate"`
			verdicts.Comparison
		}{a.ID, b.ID, c}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fail(ExitWrite, err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", data)
		return ExitOK
	}
	WriteMarkdown(env.Stdout, a.ID, b.ID, c)
	return ExitOK
}

// WriteMarkdown prints a comparison as a Markdown table (for a pull-request
// comment), then the keys skipped as null.
func WriteMarkdown(w io.Writer, baseline, candidate string, c verdicts.Comparison) {
	fmt.Fprintf(w, "Baseline `%s`, candidate `%s`\n\n", baseline, candidate)
	fmt.Fprintln(w, "| key | baseline | candidate | Δ | Δ % | direction | verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---|")
	for _, r := range c.Rows {
		pct := "n/a"
		if r.DeltaPct != nil {
			pct = fmt.Sprintf("%+.2f %%", *r.DeltaPct)
		}
		v := r.Verdict
		if v == verdicts.Worse {
			v = "**worse**"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s |\n", r.Key,
			artifact.FormatFloat(r.Baseline), artifact.FormatFloat(r.Candidate),
			artifact.FormatFloat(r.Delta), pct, r.Direction, v)
	}
	if len(c.Skipped) > 0 {
		fmt.Fprintf(w, "\nNot compared (null in one run): %s\n", strings.Join(c.Skipped, ", "))
	}
}
