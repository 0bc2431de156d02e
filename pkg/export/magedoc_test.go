package export

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// docs/mage.md's table is the mage environment of `mage export`: it names
// every flag with its variable, and no flag the export does not have.
func TestMageDocListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "mage.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, m := range regexp.MustCompile("\\| `(--[a-z0-9-]+)` \\| `([A-Z0-9_]+)` ").FindAllStringSubmatch(string(b), -1) {
		listed[m[1]] = m[2]
	}
	want := map[string]string{}
	for _, kv := range envNames() {
		want[kv[0]] = kv[1]
		if got, ok := listed[kv[0]]; !ok {
			t.Errorf("docs/mage.md does not list %s (%s)", kv[0], kv[1])
		} else if got != kv[1] {
			t.Errorf("docs/mage.md: %s is read from %s, not %s", kv[0], kv[1], got)
		}
	}
	for f := range listed {
		if _, ok := want[f]; !ok {
			t.Errorf("docs/mage.md lists %s, which density export does not have", f)
		}
	}
}
