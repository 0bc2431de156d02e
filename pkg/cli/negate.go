package cli

import (
	"strconv"

	"github.com/spf13/pflag"
)

// AddNegations declares a hidden --no-X for every bool flag X of fs that
// defaults to true (--no-cluster-facts, --no-report, ...): --no-X is
// --X=false, and X counts as given. A flag already named no-X (such as
// --no-wait, a switch of its own) is left alone. Call it after the flags
// are declared.
func AddNegations(fs *pflag.FlagSet) {
	var on []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" && f.DefValue == "true" && fs.Lookup("no-"+f.Name) == nil {
			on = append(on, f)
		}
	})
	for _, f := range on {
		n := fs.VarPF(negation{fs: fs, name: f.Name}, "no-"+f.Name, "", "--"+f.Name+"=false")
		n.NoOptDefVal = "true"
		n.Hidden = true
	}
}

// IsNegation reports whether f is a --no-X declared by AddNegations.
func IsNegation(f *pflag.Flag) bool {
	_, ok := f.Value.(negation)
	return ok
}

// negation is the value of --no-X: setting it sets X to the opposite.
type negation struct {
	fs   *pflag.FlagSet
	name string
}

func (n negation) String() string { return "false" }
func (n negation) Type() string   { return "bool" }
func (n negation) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	return n.fs.Set(n.name, strconv.FormatBool(!b))
}
