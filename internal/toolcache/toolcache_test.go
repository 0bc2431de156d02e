package toolcache

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cache path is keyed by the tools module's go.sum (and build flags),
// under $EnvCache;
// Executable refuses directories and files without an x bit.
func TestCachedAndExecutable(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "tools", "demo")
	if err := os.MkdirAll(filepath.Join(root, "pkg", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string]string{"go.mod": "module demo\n", "go.sum": "sum\n"} {
		if err := os.WriteFile(filepath.Join(mod, f), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(root, "pkg", "x"))
	cache := t.TempDir()
	t.Setenv(EnvCache, cache)
	p, gotRoot, err := Cached("tool", "demo", "TOOL")
	h := sha256.Sum256([]byte("sum\n"))
	want := filepath.Join(cache, "tool-"+hex.EncodeToString(h[:])[:16], "tool")
	if err != nil || p != want || gotRoot != root {
		t.Fatalf("Cached = %q, %q, %v; want %q, %q", p, gotRoot, err, want, root)
	}
	if err := Executable(p); err == nil {
		t.Error("a missing file is executable")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Executable(p); err == nil || !strings.Contains(err.Error(), "not an executable") {
		t.Errorf("a file without x: %v", err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Executable(p); err != nil {
		t.Errorf("an executable file: %v", err)
	}
	// Build flags are part of the key: go.sum's bytes, then the flags'.
	if err := os.WriteFile(filepath.Join(mod, BuildFlagsFile), []byte("-tags=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h = sha256.Sum256([]byte("sum\n-tags=x\n"))
	want = filepath.Join(cache, "tool-"+hex.EncodeToString(h[:])[:16], "tool")
	if p, _, err := Cached("tool", "demo", "TOOL"); err != nil || p != want {
		t.Errorf("with %s: Cached = %q, %v; want %q", BuildFlagsFile, p, err, want)
	}
	if _, _, err := Cached("tool", "other", "TOOL"); err == nil || !strings.Contains(err.Error(), "no tools/other/go.mod") {
		t.Errorf("missing module: %v", err)
	}
}
