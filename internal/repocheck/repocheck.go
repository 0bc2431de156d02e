// Package repocheck finds files that must not be tracked by git: build
// outputs (executables, recognised by their magic bytes, whatever their
// name) and large files outside testdata/. The test command runs it over
// the repository (mage goChecks), so a committed binary fails CI.
package repocheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// MaxBytes is the largest file tracked outside a testdata/ directory.
const MaxBytes = 5 << 20

// Finding is one tracked file that should not be.
type Finding struct {
	Path   string
	Reason string
}

func (f Finding) String() string { return f.Path + ": " + f.Reason }

// executableMagic lists the headers of the executable formats Go builds:
// ELF, Mach-O (32/64-bit, both byte orders, universal) and PE ("MZ").
var executableMagic = []struct {
	format string
	magic  []byte
}{
	{"ELF executable", []byte{0x7f, 'E', 'L', 'F'}},
	{"Mach-O executable", []byte{0xfe, 0xed, 0xfa, 0xce}},
	{"Mach-O executable", []byte{0xfe, 0xed, 0xfa, 0xcf}},
	{"Mach-O executable", []byte{0xce, 0xfa, 0xed, 0xfe}},
	{"Mach-O executable", []byte{0xcf, 0xfa, 0xed, 0xfe}},
	{"Mach-O universal executable", []byte{0xca, 0xfe, 0xba, 0xbe}},
	{"PE executable", []byte{'M', 'Z'}},
}

// Tracked lists the files git tracks in the work tree at dir and returns
// those that are executables or larger than MaxBytes outside testdata/,
// sorted by path.
func Tracked(ctx context.Context, dir string) ([]Finding, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "ls-files", "-z") // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing tracked files in %s: %w", dir, err)
	}
	var findings []Finding
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		f, err := check(filepath.Join(dir, filepath.FromSlash(name)), name)
		if err != nil {
			return nil, err
		}
		if f != nil {
			findings = append(findings, *f)
		}
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].Path < findings[j].Path })
	return findings, nil
}

func check(path, name string) (*Finding, error) {
	info, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil, nil // deleted in the work tree, not yet committed
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil
	}
	if format, err := executableFormat(path); err != nil {
		return nil, fmt.Errorf("checking %s: %w", name, err)
	} else if format != "" {
		return &Finding{Path: name, Reason: format + " (a build output; add it to .gitignore)"}, nil
	}
	if info.Size() > MaxBytes && !inTestdata(name) {
		return &Finding{Path: name, Reason: fmt.Sprintf("%d bytes, over the %d-byte limit outside testdata/", info.Size(), MaxBytes)}, nil
	}
	return nil, nil
}

func executableFormat(path string) (string, error) {
	f, err := os.Open(path) // #nosec G304 -- a path git lists in the checked repository
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", err
	}
	head = head[:n]
	for _, m := range executableMagic {
		if bytes.HasPrefix(head, m.magic) {
			return m.format, nil
		}
	}
	return "", nil
}

func inTestdata(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if part == "testdata" {
			return true
		}
	}
	return false
}
