package promfake

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// MovedPrefix is the path prefix a Redirector redirects.
const MovedPrefix = "/moved"

// NewRedirector starts a server on 127.0.0.1 (closed by t.Cleanup) that
// answers every request under MovedPrefix with a 307 to the same path
// (without the prefix) and query under to: another origin's URL, or "" for
// the redirector itself (a same-origin redirect). Every other request is
// proxied to target.
func NewRedirector(t testing.TB, target, to string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, moved := strings.CutPrefix(r.URL.Path, MovedPrefix)
		if !moved {
			rp.ServeHTTP(w, r)
			return
		}
		base := to
		if base == "" {
			base = srv.URL
		}
		loc := base + rest
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, loc, http.StatusTemporaryRedirect) // #nosec G710 -- a test server redirecting to the origin its test chose
	}))
	t.Cleanup(srv.Close)
	return srv
}
