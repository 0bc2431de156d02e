package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// groupAnnotation is the pflag annotation naming a flag's help section.
const groupAnnotation = "density_group"

// The help sections of the flags, in the order the help prints them.
const (
	GroupRun        = "Run"
	GroupPrometheus = "Prometheus"
	GroupKubernetes = "Kubernetes"
	GroupPhases     = "Phases"
	GroupLadder     = "Ladder"
	GroupVerdicts   = "Verdicts"
	GroupOutput     = "Output"
)

// groupOrder is the order of the sections; flags of no group come last,
// under "Flags".
func groupOrder() []string {
	return []string{GroupRun, GroupPrometheus, GroupKubernetes, GroupPhases, GroupLadder, GroupVerdicts, GroupOutput}
}

// SetGroup puts the named flags of fs in a help section. A name fs does
// not declare is a mistake of the declaring code, so it panics (every
// command's help is tested).
func SetGroup(fs *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, groupAnnotation, []string{group}); err != nil {
			panic(fmt.Sprintf("cli.SetGroup %s: %v", group, err))
		}
	}
}

// GroupOf is the help section of f ("" when it has none).
func GroupOf(f *pflag.Flag) string {
	if g := f.Annotations[groupAnnotation]; len(g) > 0 {
		return g[0]
	}
	return ""
}

// WriteFlags writes the visible flags of fs by section: a heading per group
// (Run, Prometheus, ...), then the flags of no group under "Flags". Every
// line is pflag's, but a switch prints without "[=true|false]", and a
// default the usage already words ("(default --store)") is not repeated.
func WriteFlags(w io.Writer, fs *pflag.FlagSet) {
	sections := map[string][]*pflag.Flag{}
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		sections[GroupOf(f)] = append(sections[GroupOf(f)], f)
		width = max(width, len(flagName(f)))
	})
	for _, g := range append(groupOrder(), "") {
		flags := sections[g]
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", orDefault(g, "Flags"))
		for _, f := range flags {
			fmt.Fprintf(w, "%-*s   %s\n", width, flagName(f), flagUsage(f))
		}
	}
}

// flagName is the left column of a flag's line: its names and, but for a
// switch, the kind of value it takes.
func flagName(f *pflag.Flag) string {
	s := "      --" + f.Name
	if f.Shorthand != "" {
		s = "  -" + f.Shorthand + ", --" + f.Name
	}
	if varname, _ := pflag.UnquoteUsage(f); varname != "" && f.Value.Type() != "bool" {
		s += " " + varname
	}
	return s
}

// flagUsage is a flag's usage and its default when it is not the zero
// value and the usage does not already say it.
func flagUsage(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	if zeroDefault(f) || strings.Contains(usage, "(default ") {
		return usage
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%s (default %q)", usage, f.DefValue)
	}
	return fmt.Sprintf("%s (default %s)", usage, f.DefValue)
}

// zeroDefault reports whether f's default is its type's zero value.
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]", "<nil>":
		return true
	}
	return false
}
