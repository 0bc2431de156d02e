//go:build !linux

package artifact

import "fmt"

// helperFileSizeLimit needs Linux's RLIMIT_FSIZE behaviour.
func helperFileSizeLimit(path, arg string) int {
	fmt.Println("fsize helper is Linux-only")
	return 2
}
