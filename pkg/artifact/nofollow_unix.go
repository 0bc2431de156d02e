//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package artifact

import (
	"errors"
	"syscall"
)

// oNoFollow makes open(2) fail with ELOOP on a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

func isLinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
