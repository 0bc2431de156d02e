package repocheck

import (
	"go/types"
	"slices"
	"testing"

	"golang.org/x/tools/go/packages"
)

// exportedTables lists the exported package-level variables of map, slice
// or array type in the production code of the packages matched by
// patterns: tables any importer could change under every other one.
func exportedTables(t *testing.T, patterns ...string) []string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: repoRoot(t)}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatalf("loading %v: %v", patterns, err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("loading %v: %d packages, want the engine's (at least 10)", patterns, len(pkgs))
	}
	var found []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		if p.Types == nil {
			continue
		}
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			v, ok := scope.Lookup(name).(*types.Var)
			if !ok || !v.Exported() {
				continue
			}
			switch v.Type().Underlying().(type) {
			case *types.Map, *types.Slice, *types.Array:
				found = append(found, p.PkgPath+"."+name+" "+v.Type().String())
			}
		}
	}
	slices.Sort(found)
	return found
}

// TestNoExportedMutableTables: the production packages export no
// package-level map, slice or array variable; a table is a function
// returning a fresh copy, or unexported. Sentinel errors and other
// pointer-free values are not tables and pass.
func TestNoExportedMutableTables(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every package")
	}
	if found := exportedTables(t, "./pkg/...", "./cmd/..."); len(found) > 0 {
		t.Errorf("exported mutable package tables (make them functions returning a copy, or unexported):\n%v", found)
	}
}
