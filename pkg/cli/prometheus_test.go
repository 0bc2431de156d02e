package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/substrate/density/internal/promfake"
	"github.com/substrate/density/pkg/endpoint"
	"github.com/substrate/density/pkg/promql"
)

// The bearer token, --header values and the URL's basic auth go only to the
// origin of the URL the operator named: a 307 to another port is not
// followed (the read fails naming both origins, and the other server gets
// no request at all); a redirect within the origin is followed.
func TestRedirectsStayOnTheOrigin(t *testing.T) {
	const token, tenant = "CI-SECRET", "tenant-a"
	getenv := func(k string) string {
		if k == "PROMETHEUS_BEARER_TOKEN" {
			return token
		}
		return ""
	}
	read := func(t *testing.T, base string) error {
		t.Helper()
		u := "http://bob:hunter2@" + strings.TrimPrefix(base, "http://") + promfake.MovedPrefix
		headers := []string{"X-Scope-OrgID: " + tenant}
		timeout := 5 * time.Second
		cfg, err := Prometheus{URL: &u, Headers: &headers, Timeout: &timeout}.Config(getenv)
		if err != nil {
			t.Fatal(err)
		}
		c, err := promql.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Instant(context.Background(), "up", 1710000000)
		return err
	}

	t.Run("another origin", func(t *testing.T) {
		other := promfake.New(t, promfake.Empty(0))
		r := promfake.NewRedirector(t, other.URL, other.URL)
		err := read(t, r.URL)
		if n := other.Count(); n != 0 {
			t.Fatalf("the other origin got %d requests (headers of the first: %v)", n, other.Requests()[0].Header)
		}
		var re *endpoint.RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("read through a cross-origin redirect: %v, want a RedirectError", err)
		}
		msg := err.Error()
		for _, want := range []string{"Prometheus at " + strings.TrimPrefix(r.URL, "http://"), "redirected to " + other.URL, "not followed"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		for _, s := range []string{token, "hunter2", "bob"} {
			if strings.Contains(msg, s) {
				t.Errorf("error %q shows %q", msg, s)
			}
		}
	})

	t.Run("same origin", func(t *testing.T) {
		prom := promfake.New(t, promfake.Empty(0))
		r := promfake.NewRedirector(t, prom.URL, "")
		if err := read(t, r.URL); err != nil {
			t.Fatalf("read through a same-origin redirect: %v", err)
		}
		reqs := prom.Requests()
		if len(reqs) == 0 {
			t.Fatal("no request reached Prometheus")
		}
		for _, q := range reqs {
			if q.Header.Get("Authorization") != "Bearer "+token || q.Header.Get("X-Scope-OrgID") != tenant {
				t.Errorf("%s: Authorization %q, X-Scope-OrgID %q", q.Path, q.Header.Get("Authorization"), q.Header.Get("X-Scope-OrgID"))
			}
		}
	})
}
