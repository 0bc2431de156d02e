package artifact

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrSymlink matches (errors.Is) every *SymlinkError.
var ErrSymlink = errors.New("a file inside a run directory is a symbolic link")

// SymlinkError is a file inside a run directory that is a symbolic link.
// Such a file is never read, appended to or replaced: a link could make an
// export write outside the run directory, or copy the file it points at
// (a key, a token) into the directory that is then uploaded (export.md,
// "Credentials and hosts"). The run directory itself may be a link.
type SymlinkError struct{ Path string }

func (e *SymlinkError) Error() string {
	return e.Path + " is a symbolic link: refused (an artifact is never read or written through a link; the directories above it may be links)"
}

// Is makes errors.Is(err, ErrSymlink) hold.
func (e *SymlinkError) Is(target error) bool { return target == ErrSymlink }

// RefuseSymlink returns a *SymlinkError when the last element of path is a
// symbolic link (its directories may be links). An absent path is no error.
func RefuseSymlink(path string) error {
	fi, err := os.Lstat(path) // #nosec G703 -- a run directory's file, named by the operator; Lstat reads no content
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &SymlinkError{Path: path}
	}
	return nil
}

// RefuseSymlinksIn returns a *SymlinkError for the first entry of dir that
// is a symbolic link (dir itself may be one; not recursive). An absent dir
// is no error: the caller reports it as it already does.
func RefuseSymlinksIn(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return &SymlinkError{Path: dir + string(os.PathSeparator) + e.Name()}
		}
	}
	return nil
}

// OpenNoFollow opens path for reading, refusing a symbolic link as its last
// element: checked with Lstat, and opened with O_NOFOLLOW where the system
// has it, so a link put in place between the two is refused too.
func OpenNoFollow(path string) (*os.File, error) { return openNoFollow(path, os.O_RDONLY, 0) }

// openNoFollow is os.OpenFile refusing a symbolic link as path's last
// element (see OpenNoFollow).
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if err := RefuseSymlink(path); err != nil {
		return nil, err
	}
	// path is a run directory's file, named by the operator; a created
	// stats.jsonl is read by other tools and people, like Locust's files.
	f, err := os.OpenFile(path, flag|oNoFollow, perm) // #nosec G302 G304 G703 -- see above
	if err != nil {
		if isLinkErr(err) {
			return nil, &SymlinkError{Path: path}
		}
		return nil, err
	}
	return f, nil
}

// readFileNoFollow is os.ReadFile through OpenNoFollow.
func readFileNoFollow(path string) ([]byte, error) {
	f, err := OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
