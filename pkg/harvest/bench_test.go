package harvest_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
)

// countingTransport counts HTTP requests reaching Prometheus.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// BenchmarkHarvest is one full harvest of the demo run (about an hour,
// 8 worker pods) against a local Prometheus 2.42, at 1, 2, 4 and 8 requests
// in flight. Reported: HTTP requests and PromQL queries per harvest, and
// allocations; ns/op is the wall time of the harvest.
func BenchmarkHarvest(b *testing.B) {
	e := loadScenario(b, "demo")
	_, srv := cache.Prometheus(b, "demo")
	p := e.params()
	for _, inFlight := range []int{1, 2, 4, 8} {
		b.Run("inflight="+itoa(inFlight), func(b *testing.B) {
			ct := &countingTransport{next: http.DefaultTransport}
			c, err := promql.New(promql.Config{URL: srv.URL, HTTPClient: &http.Client{Transport: ct}, MaxInFlight: inFlight})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var queries int
			for b.Loop() {
				res := harvest.Harvest(context.Background(), c, p)
				queries = len(res.Queries)
				if res.Snapshots.CheckpointsCumulative == nil {
					b.Fatal("harvest came back empty")
				}
			}
			b.ReportMetric(float64(ct.n.Load())/float64(b.N), "requests/op")
			b.ReportMetric(float64(queries), "queries/op")
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
