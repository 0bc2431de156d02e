package repocheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestTracked(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	files := map[string][]byte{
		"README.md":                   []byte("# hello\n"),
		"density":                     append([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1}, make([]byte, 64)...),
		"bin/tool.exe":                append([]byte("MZ"), make([]byte, 64)...),
		"bin/tool-darwin":             append([]byte{0xcf, 0xfa, 0xed, 0xfe}, make([]byte, 64)...),
		"big.json":                    bytes.Repeat([]byte("x"), MaxBytes+1),
		"exactly.json":                bytes.Repeat([]byte("x"), MaxBytes),
		"pkg/a/testdata/big.json":     bytes.Repeat([]byte("x"), MaxBytes+1),
		"pkg/a/testdata/ok.bin":       []byte{0, 1, 2},
		"short":                       []byte("M"),
		"empty":                       nil,
		"pkg/a/testdata/prog.elf.bin": append([]byte{0x7f, 'E', 'L', 'F'}, 0),
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An untracked executable is not a finding: .gitignore's business.
	if err := os.WriteFile(filepath.Join(dir, "untracked"), []byte{0x7f, 'E', 'L', 'F'}, 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		git(t, dir, "add", "--", name)
	}
	got, err := Tracked(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
	}
	// An executable is refused under testdata/ too; size is allowed there.
	want := []string{"big.json", "bin/tool-darwin", "bin/tool.exe", "density", "pkg/a/testdata/prog.elf.bin"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("findings %v, want %v\n%v", paths, want, got)
	}
}

// TestRepository is the check itself over this repository.
func TestRepository(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git work tree: %v", err)
	}
	got, err := Tracked(context.Background(), string(bytes.TrimSpace(root)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		t.Errorf("tracked file that should not be: %s", f)
	}
}
