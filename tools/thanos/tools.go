//go:build tools

// Package tools records the commands this module builds, so that `go mod tidy`
// keeps their dependencies in go.sum. It is never compiled.
package tools

import (
	_ "github.com/thanos-io/thanos/cmd/thanos"
)
