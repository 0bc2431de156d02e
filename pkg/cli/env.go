package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// EnvName maps a flag name to the environment variable mage reads it from
// (upper snake case: --prometheus-url → PROMETHEUS_URL).
func EnvName(flagName string) string {
	return strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envFlag reports whether f has an environment variable: shorthand-only
// duplicates and the --no-X negations have none (X=false says it).
func envFlag(f *pflag.Flag) bool { return !IsNegation(f) }

// EnvNames lists every flag of fs with its environment variable, for docs.
func EnvNames(fs *pflag.FlagSet) [][2]string {
	var out [][2]string
	fs.VisitAll(func(f *pflag.Flag) {
		if envFlag(f) {
			out = append(out, [2]string{"--" + f.Name, EnvName(f.Name)})
		}
	})
	return out
}

// SetFromEnv sets every flag of fs whose environment variable is not empty,
// as if it were given on the command line (so fs.Changed sees it). The
// variables of repeatable flags (the list kinds) hold one value per line.
func SetFromEnv(fs *pflag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || !envFlag(f) {
			return
		}
		v := getenv(EnvName(f.Name))
		if v == "" {
			return
		}
		values := []string{v}
		if repeatable(f) {
			values = strings.Split(strings.TrimSpace(v), "\n")
		}
		for _, one := range values {
			if serr := fs.Set(f.Name, one); serr != nil {
				err = fmt.Errorf("%s=%q: %w", EnvName(f.Name), one, serr)
				return
			}
		}
	})
	return err
}

// repeatable reports whether setting f again appends rather than replaces.
func repeatable(f *pflag.Flag) bool {
	if _, ok := f.Value.(pflag.SliceValue); ok {
		return true
	}
	_, ok := f.Value.(Repeatable)
	return ok
}

// Repeatable is a flag value that appends on each Set rather than
// replacing; its environment variable holds one value per line.
type Repeatable interface {
	pflag.Value
	Repeatable()
}
