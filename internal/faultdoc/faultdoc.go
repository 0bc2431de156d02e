// Package faultdoc writes the generated sections of docs/reliability.md:
// the fault matrices of the export and the datasource, the load numbers and
// the fuzz results. Each test binary owns its marked section, so the
// matrices (separate binaries) are regenerated separately.
package faultdoc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Requested says whether the doc should be written: the test binary's
// -reliability-doc flag or RELIABILITY_DOC=1.
func Requested(flag bool) bool { return flag || os.Getenv("RELIABILITY_DOC") != "" }

// Row is one fault injected into one path and what the test observed.
type Row struct{ Fault, Path, Outcome string }

// header starts a new docs/reliability.md.
const header = `# Reliability under faults, load and bad input

Generated; do not edit by hand. Each section is rewritten by the run that
measures it:

    go test ./pkg/export -run TestExportFaultMatrix -reliability-doc          # export fault matrix
    go test ./pkg/plugin -run TestDatasourceFaultMatrix -reliability-doc      # datasource fault matrix
    go test -race ./pkg/plugin -run TestLoadQueryData -reliability-doc        # load
    scripts/fuzz.sh --doc                                                     # fuzzing (about 15 minutes)

(` + "`RELIABILITY_DOC=1`" + ` works as well as the flag.) In the fault matrices each row is
one fault injected into one path, and the outcome column is what the test
observed and asserted on that run. Ports and temporary paths in quoted
messages are replaced by PORT, STORE and TMP.

`

// WriteTable replaces the section name with intro and a table of rows.
func WriteTable(t testing.TB, name, intro string, rows []Row) {
	t.Helper()
	cell := strings.NewReplacer("|", `\|`, "\n", " ")
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- BEGIN %s -->\n%s\n\n| fault | path | outcome |\n|---|---|---|\n", name, intro)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell.Replace(r.Fault), cell.Replace(r.Path), cell.Replace(r.Outcome))
	}
	fmt.Fprintf(&b, "<!-- END %s -->\n", name)
	WriteBlock(t, name, b.String())
	t.Logf("wrote the %s section of docs/reliability.md (%d rows)", name, len(rows))
}

// WriteBlock replaces (or appends) the block between "<!-- BEGIN name -->"
// and "<!-- END name -->"; block must carry those markers itself.
func WriteBlock(t testing.TB, name, block string) {
	t.Helper()
	path := filepath.Join(repoRoot(t), "docs", "reliability.md")
	old, err := os.ReadFile(path) // #nosec G304 -- reads a path the operator or the test harness named
	if errors.Is(err, os.ErrNotExist) {
		old = []byte(header)
	} else if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)<!-- BEGIN ` + regexp.QuoteMeta(name) + ` -->.*?<!-- END ` + regexp.QuoteMeta(name) + ` -->\n?`)
	var doc string
	if re.Match(old) {
		doc = re.ReplaceAllLiteralString(string(old), block)
	} else {
		doc = strings.TrimRight(string(old), "\n") + "\n\n" + block
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil { // #nosec G306 G703 -- files written are artifacts or fixtures for others to read; path built from the caller's own directory
		t.Fatal(err)
	}
}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
	{regexp.MustCompile(`file:///tmp/\S+?/\d+(/|:|\))`), "file://STORE$1"},
	{regexp.MustCompile(`/tmp/\S+`), "TMP"},
	{regexp.MustCompile(`(lookup \S+) on [0-9.:\[\]a-f]+:`), "$1:"},
}

// Stable removes what changes between runs (ports, temporary paths, the
// resolver's address) so the doc only changes when an outcome does.
func Stable(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// repoRoot finds the module root (the directory holding go.mod).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}
