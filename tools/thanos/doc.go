// Package tools pins, in tools.go (build tag "tools"), the command this
// module builds. This file has no build tag so that the directory is a
// package for go vet and govulncheck, which skip tagged-only directories.
package tools
