// Package endpoint holds the two rules for the URLs of the servers this
// project reads (Prometheus, the Kubernetes API, results stores): which
// ones are usable as an HTTP endpoint, and how one is shown or recorded.
package endpoint

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// IsHTTP reports whether raw is http(s)://host[:port][/path]: a scheme of
// http or https and a host.
func IsHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Redact is a URL as this project shows or records it (server_summary's
// prom_url, notices, health messages): scheme, host and path, without user
// info, query or fragment (where tokens and signed parameters live). An
// unparseable URL reads "unparseable URL".
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "unparseable URL"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// RedactError is err, a *url.Error as net/http and url.Parse return it
// (naming the whole URL, query string and user name included), with its URL
// shown as Redact shows it. The cause and the error's type are kept, so
// Timeout and errors.Is/As still see them. An error that is not a
// *url.Error is returned as it is.
func RedactError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &url.Error{Op: ue.Op, URL: Redact(ue.URL), Err: ue.Err}
}

// Origin is a URL's scheme, host and port, lower-cased, the port made
// explicit (80 for http, 443 for https): two URLs with the same Origin
// reach the same server.
func Origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// RedirectError is a redirect to another origin that a client carrying
// credentials did not follow.
type RedirectError struct {
	// What is the server that redirected ("Prometheus"); Host its host[:port]
	// as named; To the origin it redirected to (no user info, path or query).
	What, Host, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s at %s redirected to %s: not followed", e.What, e.Host, e.To)
}

// maxRedirects is net/http's own limit, kept for same-origin redirects.
const maxRedirects = 10

// SameOriginRedirects is an http.Client CheckRedirect for a client whose
// requests carry credentials (basic auth, a bearer token, a tenant header,
// some of them added by a RoundTripper the redirect cannot see): a
// redirect to another origin (scheme, host or port) than the first
// request's is refused with a *RedirectError, rather than followed with the
// credentials stripped (a stripped tenant header would read another
// tenant's data). Same-origin redirects are followed, at most 10 as
// net/http's default. what names the server in the error.
func SameOriginRedirects(what string) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if Origin(req.URL) != Origin(first) {
			to := url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host}
			return &RedirectError{What: what, Host: first.Host, To: to.String()}
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("%s at %s: stopped after %d redirects", what, first.Host, maxRedirects)
		}
		return nil
	}
}
