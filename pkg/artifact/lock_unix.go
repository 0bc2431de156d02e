//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package artifact

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on f, polling so ctx can cancel the
// wait. flock conflicts between separate opens even within one process, so
// goroutines and processes are serialised alike.
func lockFile(ctx context.Context, f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	delay := 2 * time.Millisecond
	for {
		var lerr error
		if err := rc.Control(func(fd uintptr) {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
		}); err != nil {
			return err
		}
		if lerr == nil {
			return nil
		}
		if !errors.Is(lerr, syscall.EWOULDBLOCK) && !errors.Is(lerr, syscall.EINTR) {
			return lerr
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

func unlockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := rc.Control(func(fd uintptr) { uerr = syscall.Flock(int(fd), syscall.LOCK_UN) }); err != nil {
		return err
	}
	return uerr
}

// writeOnce issues exactly one write(2) (retried only on EINTR, when nothing
// was written), so even a writer that does not take the lock sees our bytes
// appended in one piece.
func writeOnce(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if !errors.Is(werr, syscall.EINTR) {
				return true
			}
		}
	}); err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	return n, werr
}
