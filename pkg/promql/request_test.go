package promql

import (
	"testing"

	"github.com/prometheus/client_golang/api"
)

// The endpoint URLs are the ones client_golang's api.Client built before
// this package joined them itself: a path prefix kept, trailing slashes
// dropped, the base's query string and escaping kept.
func TestEndpointLikeAPIClient(t *testing.T) {
	bases := []string{
		"http://prom:9090",
		"http://prom:9090/",
		"https://proxy.example/prometheus",
		"https://proxy.example/prometheus//",
		"http://prom:9090/a/../b/",
		"http://u:p@prom:9090/prefix?tenant=a&x=1",
		"http://prom:9090/with%20space/",
		"http://prom:9090/enc%2Fslash",
		"http://prom:9090?orgId=1",
	}
	for _, b := range bases {
		c, err := New(Config{URL: b})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		ac, err := api.NewClient(api.Config{Address: b})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for _, ep := range []string{epQuery, epQueryRange} {
			if got, want := c.endpoint(ep).String(), ac.URL(ep, nil).String(); got != want {
				t.Errorf("%s + %s = %s, api.Client gives %s", b, ep, got, want)
			}
		}
	}
}
