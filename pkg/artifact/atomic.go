package artifact

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFileAtomic replaces path with data so a reader sees either the old
// file or the whole new one, never a part: a temporary file in the same
// directory is written, synced, given perm, renamed over path, and the
// directory is synced so the rename survives a crash. On failure the
// temporary file is removed and path is untouched. A path that is a
// symbolic link is refused (*SymlinkError) before anything is written:
// replacing the link would hide that someone put it there.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	if err := RefuseSymlink(path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmpName, err)
	}
	// CreateTemp makes the file 0600; Windows has no mode bits to set.
	if cerr := tmp.Chmod(perm); cerr != nil && runtime.GOOS != "windows" {
		err = cerr
		return fmt.Errorf("setting mode of %s: %w", tmpName, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmpName, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmpName, err)
	}
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmpName, path, err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory
// (and does not need to): skipped there.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir) // #nosec G304 -- the run directory being synced
	if err != nil {
		return fmt.Errorf("opening directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}

// writeJSONFile writes v like Python's json.dump(v, f, indent=2) followed by
// a newline (server_summary.json), atomically with mode 0644.
func writeJSONFile(path string, v any) error {
	data, err := MarshalIndent(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o644)
}
