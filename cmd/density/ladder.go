package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/substrate/density/pkg/ladder"
)

// runLadder is `density ladder`: --print-profile prints the built-in
// ladder profile as YAML (the form --ladder-profile reads).
func runLadder(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("density ladder", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	printProfile := fs.Bool("print-profile", false, "print the built-in ladder profile as YAML (placeholders such as ${resume_name} are filled from the export's flags)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: density ladder --print-profile\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "density ladder: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 || !*printProfile {
		fmt.Fprintln(stderr, "density ladder: usage: density ladder --print-profile")
		return 2
	}
	y, err := ladder.Builtin().YAML()
	if err != nil {
		fmt.Fprintf(stderr, "density ladder: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(y); err != nil {
		return 1
	}
	return 0
}
