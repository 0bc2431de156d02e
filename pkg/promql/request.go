package promql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// The two endpoints this package reads.
const (
	epQuery      = "/api/v1/query"
	epQueryRange = "/api/v1/query_range"
)

// endpoint is the URL of the API path ep under the base URL: the base's
// path (a proxy's prefix) joined with ep, its query string and everything
// else kept, as client_golang's api.Client.URL joins them.
func (c *Client) endpoint(ep string) *url.URL {
	u := *c.base
	u.Path = path.Join(c.base.Path, ep)
	return &u
}

// do sends one query like v1.API's Query/QueryRange (a form POST, falling
// back to GET on 403, 405 or 501) and decodes the answer
// with decodeAnswer. Errors are the *v1.Error values v1.API returned (so
// tooManySamples and every message stay as they were); warnings come back
// even with an error, as v1 did.
func (c *Client) do(ctx context.Context, ep string, args url.Values) (*answer, []string, error) {
	u := c.endpoint(ep)
	encoded := args.Encode()
	req, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(encoded))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// Marks the POST idempotent for net/http's own retries (v1 does the same;
	// an empty value is not sent).
	req.Header["Idempotency-Key"] = nil
	resp, body, err := c.send(ctx, req) //nolint:bodyclose // send reads and closes the body
	if resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented) {
		u.RawQuery = encoded
		if req, err = http.NewRequest(http.MethodGet, u.String(), nil); err != nil {
			return nil, nil, err
		}
		resp, body, err = c.send(ctx, req) //nolint:bodyclose // as above
	}
	if err != nil {
		return nil, nil, err
	}
	code := resp.StatusCode
	if code/100 != 2 {
		w, err := apiFailure(resp, body)
		return nil, w, err
	}
	a, jerr := decodeAnswer(body)
	if jerr != nil {
		// Like v1: the warnings of a body that otherwise fails to decode are
		// still worth recording.
		var env struct {
			Warnings []string `json:"warnings"`
		}
		_ = json.Unmarshal(body, &env)
		return nil, env.Warnings, &v1.Error{Type: v1.ErrBadResponse, Msg: jerr.Error()}
	}
	if a.status == "error" {
		return nil, a.warnings, &v1.Error{Type: v1.ErrorType(a.errorType), Msg: a.errorMsg}
	}
	return a, a.warnings, nil
}

// send sends req under ctx and reads the whole body in this goroutine:
// ctx cancels the read through the request, and the body is always closed.
// (Recycling the body buffers through a sync.Pool was measured and dropped:
// at 24 h x 5,000 pods it cut little CPU and raised the export's peak RSS
// from 1.7 to 2.1 GiB, the pool keeping a doubled buffer per request slot
// alive.)
func (c *Client) send(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, err := c.httpc.Do(req.WithContext(ctx))
	if err != nil {
		// Only the cause: the request URL's host is the QueryError's, and
		// its user info and query string (a token) must not reach an
		// answer, a notice or a log.
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, nil, ue.Err
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, body, nil
}

// apiFailure is v1's error for a non-2xx answer: 400 and 422 carry the API's
// own error JSON, anything else is a generic HTTP error (the body, perhaps a
// proxy's HTML page, goes only to Detail).
func apiFailure(resp *http.Response, body []byte) ([]string, error) {
	code := resp.StatusCode
	generic := func() error {
		typ, msg := v1.ErrBadResponse, fmt.Sprintf("bad response code %d", code)
		switch code / 100 {
		case 4:
			typ, msg = v1.ErrClient, fmt.Sprintf("client error: %d", code)
		case 5:
			typ, msg = v1.ErrServer, fmt.Sprintf("server error: %d", code)
		}
		return &v1.Error{Type: typ, Msg: msg, Detail: string(body)}
	}
	if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		return nil, generic()
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType v1.ErrorType    `json:"errorType"`
		Error     string          `json:"error"`
		Warnings  []string        `json:"warnings"`
	}
	if json.Unmarshal(body, &env) != nil {
		return nil, generic()
	}
	if env.Status == "success" {
		return env.Warnings, &v1.Error{Type: v1.ErrBadResponse, Msg: "inconsistent body for response code"}
	}
	if env.ErrorType == "" {
		env.ErrorType = v1.ErrClient
	}
	if env.Error == "" {
		env.Error = fmt.Sprintf("client error: %d", code)
	}
	return env.Warnings, &v1.Error{Type: env.ErrorType, Msg: env.Error}
}
