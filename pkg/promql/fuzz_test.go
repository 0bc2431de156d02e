package promql_test

import (
	"context"
	"math"
	"net/http"
	"testing"

	"github.com/substrate/density/pkg/promql"
)

// FuzzDecode feeds arbitrary bodies (with arbitrary status codes) to Instant,
// Range and WindowGrowth: no panic, and whatever is accepted holds only
// finite samples.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"a"},"value":[1,"NaN"]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1,"1"],[2,"+Inf"]]}]}}`,
		`{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}`,
		`{"status":"success","data":{"resultType":"string","result":[1,"x"]}}`,
		`{"status":"error","errorType":"bad_data","error":"x"}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1,{"count":"1","sum":"1","buckets":[[0,"0","1","1"]]}]}]},"warnings":["w"]}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1e20,"1"],[-5,"-1e308"]]}]}}`,
		`<html>502</html>`,
		`{"status":"success","data":{"resultType":"vector","result":[`,
	} {
		f.Add(seed, 200)
	}
	f.Add(`{"status":"error","errorType":"execution","error":"x"}`, 422)
	f.Fuzz(func(t *testing.T, body string, status int) {
		if status < 200 || status > 599 {
			status = 200
		}
		c, err := promql.New(promql.Config{URL: "http://prometheus.invalid", Retries: -1,
			HTTPClient: &http.Client{Transport: fixedTransport{status, body}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		check := func(ss []promql.Series) {
			for _, s := range ss {
				for _, p := range s.Samples {
					if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
						t.Fatalf("non-finite sample %v accepted", p)
					}
				}
			}
		}
		if ss, err := c.Instant(ctx, "q", 1); err == nil {
			check(ss)
			for _, s := range ss {
				if len(s.Samples) > 1 {
					t.Fatalf("instant series with %d samples", len(s.Samples))
				}
			}
		}
		if ss, err := c.Range(ctx, "q", 0, 100, 10); err == nil {
			check(ss)
		}
		if g, err := c.WindowGrowth(ctx, "q", 0, 100); err == nil {
			_ = g.Delta()
		}
	})
}

type fixedTransport struct {
	status int
	body   string
}

func (f fixedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return memTransport(func(*http.Request) string { return f.body }).withStatus(f.status, r)
}
