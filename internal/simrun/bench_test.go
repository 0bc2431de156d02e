package simrun

import (
	"runtime"
	"testing"
)

// BenchmarkGenerate measures generation of the demo run and of "large"
// (6 h, 10 s scrape, 500 worker pods; several GB on disk, so it runs only
// with -bench). Memory stays bounded because "large" streams.
func BenchmarkGenerate(b *testing.B) {
	cases := []struct {
		name string
		sc   Scenario
	}{
		{"demo", mustScenario("demo")},
		{"large-1h-100pods", Large(LargeParams{Hours: 1, Pods: 100})},
		{"large", Large(LargeParams{})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var size int64
			for i := 0; i < b.N; i++ {
				tr, err := Generate(c.sc, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				size = tr.OMBytes
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(size)/(1<<20), "OM-MiB")
			b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-MiB")
		})
	}
}

func mustScenario(name string) Scenario {
	s, ok := ByName(name)
	if !ok {
		panic("no scenario " + name)
	}
	return s
}
