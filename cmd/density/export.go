package main

import (
	"context"
	"io"

	"github.com/substrate/density/pkg/export"
)

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return export.Main(ctx, args, export.DefaultEnv(stdout, stderr))
}
