//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package artifact

import (
	"context"
	"os"
)

// lockFile is a no-op where no advisory lock is available (plan9, wasm,
// solaris...): appends still use O_APPEND, but concurrent exports to one
// stats.jsonl are not serialised there.
func lockFile(ctx context.Context, f *os.File) error { return ctx.Err() }

func unlockFile(f *os.File) error { return nil }

func writeOnce(f *os.File, b []byte) (int, error) { return f.Write(b) }
