package plugin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
)

// client_golang's api.Client.Do reads a body in one goroutine and, when
// the request's context ends, closes it from another without waiting. The
// SDK's metrics middleware wraps bodies in httpclient.CountBytesReader,
// whose counter is then read and written concurrently: a data race the
// fault matrix hit under -race (a failing read cancelling its siblings).
// serialBody orders them. Run with -race: without the mutex the detector
// reports the unordered Read/Close whatever the interleaving.
func TestSerialBodyOrdersReadAndClose(t *testing.T) {
	for range 20 {
		counted := httpclient.CountBytesReader(io.NopCloser(strings.NewReader(strings.Repeat("x", 1<<16))), func(int64) {})
		b := &serialBody{rc: counted}
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(io.Discard, b) })
		wg.Go(func() { _ = b.Close() })
		wg.Wait()
	}
}

// Every response body of the plugin's Prometheus client is a serialBody,
// health probes and queries alike.
func TestPluginClientSerializesBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1,"1"]}}`)
	}))
	defer srv.Close()
	// Name and type as Grafana sends them: with a type, the SDK's metrics
	// middleware wraps bodies in its byte counter.
	s := backend.DataSourceInstanceSettings{UID: "serial", Name: "density", Type: "substrate-density-datasource", URL: srv.URL, JSONData: []byte(`{}`)}
	cfg, err := LoadSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := HTTPClient(context.Background(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(srv.URL + "/api/v1/query?query=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, ok := resp.Body.(*serialBody); !ok {
		t.Fatalf("response body is %T, not a serialBody", resp.Body)
	}
}
