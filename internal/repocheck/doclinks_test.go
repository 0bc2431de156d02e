package repocheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/russross/blackfriday/v2"
)

// docFiles are the Markdown files a reader of a clone follows links in.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md", "deploy/README.md", "provisioning/README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(more) < 5 {
		t.Fatalf("docs/*.md: %d files, want the documentation (at least 5)", len(more))
	}
	for _, m := range more {
		rel, err := filepath.Rel(root, m)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// mdDoc is a parsed Markdown file: its link and image destinations (code
// spans and blocks excluded) and its headings' GitHub anchors.
type mdDoc struct {
	links   []string
	anchors map[string]bool
}

func parseMarkdown(src []byte) mdDoc {
	d := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	root := blackfriday.New(blackfriday.WithExtensions(blackfriday.CommonExtensions)).Parse(src)
	root.Walk(func(n *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if !entering {
			return blackfriday.GoToNext
		}
		switch n.Type {
		case blackfriday.Link, blackfriday.Image:
			d.links = append(d.links, string(n.Destination))
		case blackfriday.Heading:
			a := githubAnchor(nodeText(n))
			if k := seen[a]; k > 0 {
				d.anchors[a+"-"+strconv.Itoa(k)] = true
			} else {
				d.anchors[a] = true
			}
			seen[a]++
		}
		return blackfriday.GoToNext
	})
	return d
}

// nodeText is the plain text of a node (code spans included).
func nodeText(n *blackfriday.Node) string {
	var b strings.Builder
	n.Walk(func(c *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if entering && (c.Type == blackfriday.Text || c.Type == blackfriday.Code) {
			b.Write(c.Literal)
		}
		return blackfriday.GoToNext
	})
	return b.String()
}

// githubAnchor is the id GitHub gives a heading: lower case, letters,
// digits, '-' and '_' kept, spaces as '-', everything else dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestGithubAnchor(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Exit codes", "exit-codes"},
		{"`server_summary.json`", "server_summaryjson"},
		{"Verdicts: gates, compare, change points", "verdicts-gates-compare-change-points"},
		{"Change points (`density regressions`)", "change-points-density-regressions"},
	} {
		if got := githubAnchor(tc.in); got != tc.want {
			t.Errorf("githubAnchor(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// schemeRe matches a destination with a URL scheme (https:, mailto:).
var schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// brokenLinks checks that every relative link and image of files (paths
// relative to root) names a file or directory under root, and that an
// anchor into a Markdown file names one of its headings. It returns one
// line per broken link.
func brokenLinks(root string, files []string) []string {
	var out []string
	docs := map[string]mdDoc{}
	read := func(rel string) (mdDoc, bool) {
		if d, ok := docs[rel]; ok {
			return d, true
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))) // #nosec G304 -- a Markdown file of the repository, or one a checked link names inside it
		if err != nil {
			return mdDoc{}, false
		}
		d := parseMarkdown(b)
		docs[rel] = d
		return d, true
	}
	for _, file := range files {
		d, ok := read(file)
		if !ok {
			out = append(out, file+": cannot be read")
			continue
		}
		for _, dest := range d.links {
			if schemeRe.MatchString(dest) {
				continue // http(s), mailto: outside the repository
			}
			u, err := url.Parse(dest)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: link %q does not parse: %v", file, dest, err))
				continue
			}
			if u.Host != "" {
				continue // //host/path: outside the repository
			}
			target := file
			if u.Path != "" {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), u.Path)))
				if target == ".." || strings.HasPrefix(target, "../") {
					out = append(out, fmt.Sprintf("%s: link %q leaves the repository", file, dest))
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					out = append(out, fmt.Sprintf("%s: link %q: %s does not exist", file, dest, target))
					continue
				}
			}
			if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if td, ok := read(target); !ok || !td.anchors[u.Fragment] {
				out = append(out, fmt.Sprintf("%s: link %q: %s has no heading with the anchor #%s", file, dest, target, u.Fragment))
			}
		}
	}
	return out
}

// TestDocLinksResolve: the README's and docs/*.md's links all resolve in a
// clone, so the docs never point at something the repository does not have
// (such as ../shared/spec).
func TestDocLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, p := range brokenLinks(root, docFiles(t, root)) {
		t.Error(p)
	}
}

// TestDocLinksCatchBreakage: the check sees a missing file, a link out of
// the repository and a missing anchor, and ignores links in code, external
// URLs and good links.
func TestDocLinksCatchBreakage(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o750); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"README.md": "# Top\n\n[ok](docs/a.md#exit-codes) [dir](docs/) [self](#top) [web](https://example.com/x.md)\n" +
			"[gone](docs/missing.md) [out](../shared/spec/verdicts.md) [anchor](docs/a.md#nowhere)\n" +
			"`[code](in-code.md)`\n\n```\n[block](in-block.md)\n```\n",
		"docs/a.md": "# A\n\n## Exit codes\n\n![img](../README.md)\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := brokenLinks(root, []string{"README.md", "docs/a.md"})
	want := []string{
		`README.md: link "docs/missing.md": docs/missing.md does not exist`,
		`README.md: link "../shared/spec/verdicts.md" leaves the repository`,
		`README.md: link "docs/a.md#nowhere": docs/a.md has no heading with the anchor #nowhere`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("brokenLinks =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
