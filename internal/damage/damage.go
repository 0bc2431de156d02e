// Package damage breaks files the way the fault tests need (a missing
// object, an unreadable one, a corrupt line, a half-written file), for the
// export's and the datasource's fault matrices alike.
package damage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Remove deletes path.
func Remove(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// DenyRead makes path unreadable and says how: chmod 000 for an ordinary
// user; root (CI containers) ignores file modes, so there a directory takes
// the file's place, which every read refuses the same way.
func DenyRead(t testing.TB, path string) (how string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, 0o644) }) // #nosec G302 -- files written are artifacts or fixtures for others to read
		return "chmod 000 " + filepath.Base(path)
	}
	Remove(t, path)
	if err := os.Mkdir(path, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		t.Fatal(err)
	}
	return "running as root, which ignores chmod 000: a directory in place of " + filepath.Base(path)
}

// InsertLine puts line between two lines in the middle of path.
func InsertLine(t testing.TB, path, line string) {
	t.Helper()
	b := read(t, path)
	i := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2 + 1
	write(t, path, append(append(append([]byte{}, b[:i]...), line...), b[i:]...))
}

// Cut truncates path at frac of its size, in the middle of a line.
func Cut(t testing.TB, path string, frac float64) {
	t.Helper()
	b := read(t, path)
	n := int(float64(len(b)) * frac)
	for n > 0 && (b[n-1] == '\n' || b[n] == '\n') {
		n--
	}
	write(t, path, b[:n])
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		t.Fatal(err)
	}
}
