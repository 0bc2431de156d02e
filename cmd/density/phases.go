package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/substrate/density/pkg/phases"
)

const phasesUsage = `Usage: density phases FILE... [--slowest N]

Reads atelet and worker pod logs (kubectl logs dumps, with or without
--prefix, JSON lines, a Cloud Logging export; a directory means its *.log
and *.json files) and prints the suspend/resume phase percentiles and the
N slowest operations (default 5) as waterfalls.
`

// runPhases is 'density phases': 0 ok (also with no records), 1 a log
// could not be read, 2 usage error.
func runPhases(args []string, stdout, stderr io.Writer) int {
	slowest := 5
	var paths []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprint(stdout, phasesUsage)
			return 0
		case a == "--slowest" || a == "-slowest":
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "density phases: --slowest needs a number\n\n%s", phasesUsage)
				return 2
			}
			i++
			a = "--slowest=" + args[i] //nolint:gosec // G602: i < len(args) is checked above
			fallthrough
		case strings.HasPrefix(a, "--slowest=") || strings.HasPrefix(a, "-slowest="):
			n, err := strconv.Atoi(a[strings.IndexByte(a, '=')+1:])
			if err != nil || n < 0 {
				fmt.Fprintf(stderr, "density phases: --slowest %q is not a count\n", a[strings.IndexByte(a, '=')+1:])
				return 2
			}
			slowest = n
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "density phases: unknown flag %s\n\n%s", a, phasesUsage)
			return 2
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "density phases: no log file given\n\n%s", phasesUsage)
		return 2
	}
	files, err := phases.LogFiles(paths)
	if err != nil {
		fmt.Fprintf(stderr, "density phases: %v\n", err)
		return 2
	}
	col := phases.NewCollector()
	for _, path := range files {
		f, err := os.Open(path) //nolint:gosec // G703: the operator names the log files to read
		if err != nil {
			fmt.Fprintf(stderr, "density phases: %v\n", err)
			return 1
		}
		err = col.ReadLog(f, path)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "density phases: %v\n", err)
			return 1
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
		return 0
	}
	phases.Analyze(col.Records)
	groups := phases.Groups(col.Records)
	fmt.Fprintln(stdout)
	if err := phases.WriteTable(stdout, groups); err != nil {
		fmt.Fprintf(stderr, "density phases: %v\n", err)
		return 1
	}
	if slowest > 0 {
		fmt.Fprintf(stdout, "\nslowest %d operation(s) (atelet total; bars to the scale of the total):\n", slowest)
		phases.WriteSlowest(stdout, col.Records, slowest)
	}
	return 0
}
