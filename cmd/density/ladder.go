package main

import (
	"context"
	"fmt"
	"io"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/ladder"
)

// ladderCommand is `density ladder`: --print-profile prints the built-in
// ladder profile as YAML (the form --ladder-profile reads).
func ladderCommand(stdout, stderr io.Writer) cli.Command {
	fs := cli.NewFlagSet("density ladder")
	printProfile := fs.Bool("print-profile", false, "print the built-in ladder profile as YAML (placeholders such as ${resume_name} are filled from the export's flags)")
	return cli.Command{
		Use:   "ladder --print-profile",
		Short: "--print-profile: print the built-in ladder profile (the figures of each ladder step) as YAML",
		Flags: fs,
		Run: func(_ context.Context, args []string) int {
			if len(args) > 0 || !*printProfile {
				fmt.Fprintln(stderr, "density ladder: usage: density ladder --print-profile")
				return cli.ExitUsage
			}
			y, err := ladder.Builtin().YAML()
			if err != nil {
				fmt.Fprintf(stderr, "density ladder: %v\n", err)
				return cli.ExitWrite
			}
			if _, err := stdout.Write(y); err != nil {
				return cli.ExitWrite
			}
			return cli.ExitOK
		},
	}
}
