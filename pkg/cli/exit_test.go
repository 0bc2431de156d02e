package cli

import (
	"errors"
	"fmt"
	"testing"
)

// A usage error is found through wrapping; any other error is a write
// failure; the codes are export.md's.
func TestExitFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"usage", Usagef("--run needs --store"), ExitUsage},
		{"wrapped usage", fmt.Errorf("baseline: %w", Usage(errors.New("bad id"))), ExitUsage},
		{"other", errors.New("disk full"), ExitWrite},
		{"nil marked", Usage(nil), ExitOK},
	} {
		if got := ExitFor(tc.err); got != tc.want {
			t.Errorf("%s: ExitFor(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
	if ExitOK != 0 || ExitWrite != 1 || ExitUsage != 2 || ExitGateFailed != 3 || ExitRegression != 4 || ExitCanceled != 130 {
		t.Error("exit codes differ from export.md's 0, 1, 2, 3, 4, 130")
	}
	if got := Usagef("--window %d", 1).Error(); got != "--window 1" {
		t.Errorf("Usagef text %q", got)
	}
}
