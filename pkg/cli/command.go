package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Command is one density subcommand apart from the command-line framework:
// its flags, bound to its options, and what it does once they are parsed.
// cmd/density mounts it in the cobra tree; Main runs it on plain arguments
// (tests, in-process callers), with the same flags and the same checks.
type Command struct {
	// Use is the usage line after "density ", e.g. "check [flags]".
	Use   string
	Short string // one line for the command list
	Long  string // what it does, for its help
	Flags *pflag.FlagSet
	// Run runs the command on the positional arguments left after the
	// flags (it checks them) and returns the exit code.
	Run func(ctx context.Context, args []string) int
}

// NewFlagSet is a flag set that reports errors to its caller only (one
// line, printed by whoever runs the command).
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// Main parses args and runs c: --help writes the help to stdout (exit 0),
// a bad flag is one line on stderr (exit 2).
func (c Command) Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := c.Flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			WriteHelp(stdout, c.Use, c.Long, c.Flags)
			return ExitOK
		}
		fmt.Fprintf(stderr, "%s: %v\n", c.Flags.Name(), FlagError(err))
		return ExitUsage
	}
	return c.Run(ctx, c.Flags.Args())
}

// WriteHelp writes a command's help: what it does, its usage line and its
// flags by section (the hidden --no-X negations left out).
func WriteHelp(w io.Writer, use, long string, fs *pflag.FlagSet) {
	if long != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(long))
	}
	fmt.Fprintf(w, "Usage: density %s\n", use)
	WriteFlags(w, fs)
}

// FlagError words a flag parse error like the commands' other usage
// errors ("unknown flag --fast").
func FlagError(err error) error {
	// A long flag's NotExistError has no shorthand group.
	if ne := (*pflag.NotExistError)(nil); errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		return fmt.Errorf("unknown flag --%s", ne.GetSpecifiedName())
	}
	return err
}
