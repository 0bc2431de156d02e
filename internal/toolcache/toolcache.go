// Package toolcache finds the test binaries that scripts/*.sh build once
// from a pinned module under tools/ (kube-apiserver, thanos) into a cache
// shared by every checkout: <cache>/<name>-<sha256(go.sum + build.flags)[:16]>/<name>.
package toolcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvCache overrides the cache root (default <user cache dir>/substrate-density).
const EnvCache = "SUBSTRATE_DENSITY_CACHE"

// BuildFlagsFile, in a tools module, holds the flags its binary is built
// with (go build arguments on one line).
const BuildFlagsFile = "build.flags"

// Cached returns where the build script puts binary name built from
// tools/module of this checkout, and the checkout's root. envBinary names
// the variable that points at a binary instead (for error messages).
func Cached(name, module, envBinary string) (path, root string, err error) {
	root, err = RepoRoot(module, envBinary)
	if err != nil {
		return "", "", err
	}
	sum, err := os.ReadFile(filepath.Join(root, "tools", module, "go.sum")) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return "", root, fmt.Errorf("reading the tools module's go.sum: %w", err)
	}
	// The build flags, where a module has them, are part of the key: the
	// same sources built with other tags are another binary.
	flags, err := os.ReadFile(filepath.Join(root, "tools", module, BuildFlagsFile)) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", root, fmt.Errorf("reading the tools module's %s: %w", BuildFlagsFile, err)
	}
	sum = append(sum, flags...)
	cache := os.Getenv(EnvCache)
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", root, fmt.Errorf("finding the cache directory: %w (set $%s or $%s)", err, envBinary, EnvCache)
		}
		cache = filepath.Join(dir, "substrate-density")
	}
	h := sha256.Sum256(sum)
	return filepath.Join(cache, name+"-"+hex.EncodeToString(h[:])[:16], name), root, nil
}

// Executable says why p is not an executable file (nil when it is).
func Executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// RepoRoot walks up from the working directory (a package directory under
// go test) to the checkout holding tools/module.
func RepoRoot(module, envBinary string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "tools", module, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no tools/%s/go.mod above %s: set $%s", module, wd, envBinary)
		}
	}
}
