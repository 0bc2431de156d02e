package main

import (
	"context"
	"fmt"
	"io"
)

// runExport is replaced by the export implementation (pkg/export).
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "density export: not implemented yet")
	return 2
}
