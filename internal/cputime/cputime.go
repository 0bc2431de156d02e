//go:build unix

// Package cputime reads this process's CPU time for benchmarks: on a shared
// machine other processes inflate wall time but not the CPU time a
// benchmark's own work takes.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Now is this process's user+system CPU time so far.
func Now(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
