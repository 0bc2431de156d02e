// Package endpoint holds the two rules for the URLs of the servers this
// project reads (Prometheus, the Kubernetes API, results stores): which
// ones are usable as an HTTP endpoint, and how one is shown or recorded.
package endpoint

import (
	"errors"
	"net/url"
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
