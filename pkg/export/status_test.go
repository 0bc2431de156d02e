package export

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
)

// TestStatusCause: the status line of a block whose reads failed says the
// host and the cause, read from the notice's *promql.QueryError, without
// the query, the request URL or the URL's credentials; a notice without a
// failed query keeps its reason, cut to 200 bytes.
func TestStatusCause(t *testing.T) {
	base := promfake.ClosedURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := promql.New(promql.Config{URL: strings.Replace(base, "http://", "http://alice:s3cr3t@", 1), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, notices := harvest.HarvestPodPSI(context.Background(), c, harvest.Params{Start: 1000, End: 2000, SteadyStart: 1000, SteadyEnd: 2000,
		Sel: harvest.DefaultSelectors()})
	want := "null: the read failed: " + u.Host + ": dial tcp " + u.Host + ": connect: connection refused"
	failed := 0
	for _, n := range notices {
		if n.Kind != harvest.ReadFailed {
			continue
		}
		failed++
		if !strings.Contains(n.Reason, "rate(") {
			t.Errorf("notice %q does not name its query", n.Reason)
		}
		if got := statusCause(n); got != want {
			t.Errorf("status %q, want %q", got, want)
		}
	}
	if failed == 0 {
		t.Fatalf("no failed read among %v", notices)
	}
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ reason, want string }{
		{"null: no series of x in the window", "null: no series of x in the window"},
		{long, long[:197] + "..."},
	} {
		if got := statusCause(harvest.Notice{Reason: tc.reason}); got != tc.want {
			t.Errorf("statusCause(%q) = %q, want %q", tc.reason, got, tc.want)
		}
	}
}
