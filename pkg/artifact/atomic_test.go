package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server_summary.json")
	if err := WriteFileAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "two" || fi.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v", got, fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("leftover files: %v", entries)
	}

	// The rename fails (a non-empty directory is in the way): error, the
	// directory is untouched, no temporary file is left.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(blocked, []byte("data"), 0o644); err == nil {
		t.Error("rename over a directory: no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("after a failed write the directory holds %v", entries)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("missing directory: no error")
	}
}

func TestWriteJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server_summary.json")
	v := Object{{"metadata", Object{{"tag", "abc"}, {"atelet_lag_s", 70}}}, {"node_psi", Object{{"cpu_stall_pct", nil}, {"nodes", 3}}}}
	if err := writeJSONFile(path, v); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "{\n  \"metadata\": {\n    \"tag\": \"abc\",\n    \"atelet_lag_s\": 70\n  },\n  \"node_psi\": {\n    \"cpu_stall_pct\": null,\n    \"nodes\": 3\n  }\n}\n"
	if string(got) != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}
	if err := writeJSONFile(path, map[string]int{}); err == nil {
		t.Error("unencodable value: no error")
	}
	if got2, _ := os.ReadFile(path); string(got2) != want {
		t.Error("failed encode changed the file")
	}
}

// A target that is a symbolic link is refused: neither replaced nor
// followed, nothing written beside it.
func TestWriteFileAtomicRefusesSymlink(t *testing.T) {
	root, link, secret := linkedRunDir(t)
	err := WriteFileAtomic(link, []byte("{}\n"), 0o644)
	if !errors.Is(err, ErrSymlink) {
		t.Fatalf("err = %v, want ErrSymlink", err)
	}
	checkLinkUntouched(t, root, link, secret)
}

// Reads refuse a link too, and so does a scan of the run directory.
func TestReadFileNoFollow(t *testing.T) {
	_, link, _ := linkedRunDir(t)
	if b, err := readFileNoFollow(link); !errors.Is(err, ErrSymlink) || b != nil {
		t.Fatalf("read %q, %v; want ErrSymlink", b, err)
	}
	if err := RefuseSymlinksIn(filepath.Dir(link)); !errors.Is(err, ErrSymlink) {
		t.Fatalf("scan: %v, want ErrSymlink", err)
	}
	if _, err := readFileNoFollow(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("absent file: %v", err)
	}
}
