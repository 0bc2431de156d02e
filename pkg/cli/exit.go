package cli

import (
	"errors"
	"fmt"
)

// The exit codes of every density command and mage target (export.md),
// declared here only. When several apply, the precedence is
// 2 > 1 > 3 > 4 > 0.
//
// They live in pkg/cli, which the Grafana plugin binary (package ./pkg)
// never links: the engine packages the plugin shares with the CLI
// (runs, verdicts, ...) return typed errors without exit codes, such as
// verdicts.InputError or runs.ErrRunNotFound, and the commands map those
// to ExitUsage (internal/repocheck's TestPluginLinksNoCommandPackages
// keeps pkg/cli out of the plugin). pkg/export and pkg/verdicts/command
// are command packages (the plugin imports neither) and use these
// constants directly.
const (
	ExitOK    = 0
	ExitWrite = 1 // artifacts or output not written, logs not read
	ExitUsage = 2 // bad flag, argument or input; nothing written
	// ExitGateFailed: a gate failed; every artifact was written.
	ExitGateFailed = 3
	// ExitRegression: an unacknowledged regression within --since
	// (density regressions).
	ExitRegression = 4
	// ExitCanceled: interrupted (SIGINT/SIGTERM) while waiting.
	ExitCanceled = 130
)

// UsageError is a bad flag, argument or input of a command: it exits
// ExitUsage with nothing written. It is the one usage-error type of the
// commands; engine packages return their own typed input errors, which
// the commands wrap with Usage.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usage marks err as a usage error (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err}
}

// Usagef is a usage error with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// ExitFor is the exit code of a command that failed with err: ExitUsage
// for a usage error, else ExitWrite (ExitOK for nil).
func ExitFor(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case IsUsage(err):
		return ExitUsage
	}
	return ExitWrite
}
