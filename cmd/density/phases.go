package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/phases"
)

// phasesCommand is 'density phases': 0 ok (also with no records), 1 a log
// could not be read, 2 usage error.
func phasesCommand(stdout, stderr io.Writer) cli.Command {
	fs := cli.NewFlagSet("density phases")
	slowest := count(5)
	fs.Var(&slowest, "slowest", "how many of the slowest operations to print as waterfalls (0 none)")
	return cli.Command{
		Use:   "phases FILE... [--slowest N]",
		Short: "print the suspend/resume phase percentiles and slowest operations of pod log files",
		Long: `Reads atelet and worker pod logs (kubectl logs dumps, with or without
--prefix, JSON lines, a Cloud Logging export; a directory means its *.log
and *.json files) and prints the suspend/resume phase percentiles and the
N slowest operations (default 5) as waterfalls.`,
		Flags: fs,
		Run: func(_ context.Context, paths []string) int {
			return runPhases(paths, int(slowest), stdout, stderr)
		},
	}
}

// count is a flag value that is a whole number, not negative.
type count int

func (c *count) String() string { return strconv.Itoa(int(*c)) }
func (c *count) Type() string   { return "N" }
func (c *count) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a count", v)
	}
	*c = count(n)
	return nil
}

func runPhases(paths []string, slowest int, stdout, stderr io.Writer) int {
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "density phases: no log file given (usage: density phases FILE... [--slowest N])")
		return cli.ExitUsage
	}
	files, err := phases.LogFiles(paths)
	if err != nil {
		fmt.Fprintf(stderr, "density phases: %v\n", err)
		return cli.ExitUsage
	}
	col := phases.NewCollector()
	for _, path := range files {
		f, err := os.Open(path) // #nosec G304 -- the operator names the log files to read
		if err != nil {
			fmt.Fprintf(stderr, "density phases: %v\n", err)
			return cli.ExitWrite
		}
		err = col.ReadLog(f, path)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "density phases: %v\n", err)
			return cli.ExitWrite
		}
	}
	for _, n := range col.Notices {
		fmt.Fprintf(stdout, "notice: %s\n", n)
	}
	failed := 0
	for i := range col.Records {
		if col.Records[i].Failed {
			failed++
		}
	}
	fmt.Fprintf(stdout, "%d file(s): %d JSON line(s), %d undecodable, %d record(s) (%d failed), %d bad value(s)\n",
		len(files), col.Lines, col.Undecodable, col.Stats.Records, failed, col.BadValues)
	if col.Stats.Records == 0 {
		fmt.Fprintln(stdout, "no timing breakdown records in these logs")
		return cli.ExitOK
	}
	phases.Analyze(col.Records)
	groups := phases.Groups(col.Records)
	fmt.Fprintln(stdout)
	if err := phases.WriteTable(stdout, groups); err != nil {
		fmt.Fprintf(stderr, "density phases: %v\n", err)
		return cli.ExitWrite
	}
	if slowest > 0 {
		fmt.Fprintf(stdout, "\nslowest %d operation(s) (atelet total; bars to the scale of the total):\n", slowest)
		phases.WriteSlowest(stdout, col.Records, slowest)
	}
	return cli.ExitOK
}
