package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/verdicts/command"
)

// newRoot is the density command tree: the subcommands in the order of the
// help, then cobra's completion and help.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	// Help, usage and the report, phases and ladder commands print only
	// human-readable text: escaped (cli.Text). export, check, compare and
	// regressions escape their own (compare's and regressions' --json not).
	text, errText := cli.Text(stdout), cli.Text(stderr)
	cobra.EnableCommandSorting = false // the help lists the commands in this order
	root := &cobra.Command{
		Use:     "density",
		Short:   "server-side density ground truth for Substrate benchmark runs",
		Long:    "density: server-side density ground truth for Substrate benchmark runs",
		Version: buildVersion(),
		// Without a command: the usage on stderr, exit 2 (an unknown
		// command is cobra's error, also exit 2).
		RunE: func(c *cobra.Command, _ []string) error {
			writeUsage(c.ErrOrStderr(), c)
			return exitCode(cli.ExitUsage)
		},
		// An argument that is no command: one line, with the nearest
		// commands (cobra's own suggestions take several lines).
		Args:                       unknownCommand,
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		SilenceUsage:               true,
		DisableSuggestions:         true,
	}
	root.SetOut(text)
	root.SetErr(errText)
	root.SetVersionTemplate("density {{.Version}}\n")
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		w := c.OutOrStdout()
		if c.Long != "" {
			fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(c.Long))
		}
		writeUsage(w, c)
	})
	root.SetUsageFunc(func(c *cobra.Command) error {
		writeUsage(c.OutOrStderr(), c)
		return nil
	})
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A flag after a mistyped command ("density chek --gates g") fails
		// on the root's flags: the command is the error to report.
		if !c.HasParent() && c.Flags().NArg() > 0 {
			return unknownCommand(c, c.Flags().Args())
		}
		return cli.FlagError(err)
	})
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "print the help of a command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, _, err := c.Root().Find(args)
			if err != nil || (cmd == c.Root() && len(args) > 0) {
				return unknownCommand(c.Root(), args)
			}
			return cmd.Help()
		},
	})

	env := command.DefaultEnv(stdout, stderr)
	root.AddCommand(
		mount(export.NewCommand(export.DefaultEnv(stdout, stderr))),
		mount(command.CheckCommand(env)),
		mount(command.CompareCommand(env)),
		mount(command.RegressionsCommand(env)),
		mount(reportCommand(text, errText)),
		mount(phasesCommand(text, errText)),
		mount(ladderCommand(text, errText)),
		&cobra.Command{
			Use:   "version",
			Short: "print the version and exit",
			Args:  cobra.NoArgs,
			Run:   func(c *cobra.Command, _ []string) { fmt.Fprintf(c.OutOrStdout(), "density %s\n", buildVersion()) },
		},
	)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Short = "print a shell completion script (bash, zsh, fish, powershell)"
		}
	}
	return root
}

// mount makes a cobra command of c: c's flags (shared, so c's options see
// the parsed values) and c's run, its exit code carried as an exitCode.
func mount(c cli.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   c.Use,
		Short: c.Short,
		Long:  c.Long,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if code := c.Run(ctx, args); code != cli.ExitOK {
				return exitCode(code)
			}
			return nil
		},
	}
	cmd.Flags().SortFlags = c.Flags.SortFlags
	cmd.Flags().AddFlagSet(c.Flags)
	return cmd
}

// unknownCommand refuses an argument of the root, which takes none: it is
// a mistyped command, and the error names the nearest commands (by edit
// distance or prefix, cobra's SuggestionsFor).
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return errors.New(msg + "; 'density --help' lists the commands")
}

// writeUsage writes c's usage: its commands when it has any, else its
// usage line and flags.
func writeUsage(w io.Writer, c *cobra.Command) {
	if !c.HasAvailableSubCommands() {
		cli.WriteHelp(w, strings.TrimPrefix(c.UseLine(), "density "), "", c.LocalFlags())
		return
	}
	fmt.Fprintf(w, "Usage:\n  %s <command> [flags]\n\nCommands:\n", c.CommandPath())
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() || s.Name() == "help" {
			fmt.Fprintf(w, "  %-12s %s\n", s.Name(), s.Short)
		}
	}
	cli.WriteFlags(w, c.LocalFlags())
	fmt.Fprintf(w, "\nRun '%s <command> --help' for the flags of a command.\n", c.CommandPath())
}
