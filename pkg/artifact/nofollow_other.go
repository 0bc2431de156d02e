//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package artifact

// oNoFollow is 0 where open has no O_NOFOLLOW: the Lstat check stands alone.
const oNoFollow = 0

func isLinkErr(error) bool { return false }
