package promtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/substrate/density/internal/simrun"
)

var cache *Cache

func TestMain(m *testing.M) {
	cache = NewCache()
	code := m.Run()
	cache.Close()
	os.Exit(code)
}

// scenarioNames is every scenario except the benchmark-sized one.
func scenarioNames() []string {
	var out []string
	for _, s := range simrun.Scenarios() {
		if !s.Lean {
			out = append(out, s.Name)
		}
	}
	return out
}

// roundTrip reads every exported family back and compares it with what
// the simulator wrote; it returns the number of assertions made.
//
// VictoriaMetrics (vm) drops NaN samples and keeps about 12 significant
// digits of a value, so its comparison allows a relative 1e-11.
func roundTrip(t *testing.T, srv *Server, tr *simrun.Truth, vm bool) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := 0
	for _, name := range tr.Names() {
		want := map[string]simrun.ExportedSeries{}
		from, to := int64(math.MaxInt64), int64(math.MinInt64)
		for _, e := range tr.Series(name, nil) {
			if vm {
				var kept []simrun.Sample
				for _, s := range e.Samples {
					if !math.IsNaN(s.V) {
						kept = append(kept, s)
					}
				}
				e.Samples = kept
			}
			if len(e.Samples) == 0 {
				continue
			}
			m := map[string]string{"__name__": name}
			for k, v := range e.Labels {
				m[k] = v
			}
			want[labelsKey(m)] = e
			from = min(from, e.Samples[0].T)
			to = max(to, e.Samples[len(e.Samples)-1].T)
		}
		got, err := srv.Raw(ctx, fmt.Sprintf("{__name__=%q}", name), from, to)
		if err != nil {
			t.Fatalf("reading %s back: %v", name, err)
		}
		n++
		if len(got) != len(want) {
			t.Errorf("%s: %d series read back, %d written", name, len(got), len(want))
		}
		for _, g := range got {
			k := labelsKey(g.Labels)
			w, ok := want[k]
			n++
			if !ok {
				t.Errorf("%s: series %s read back was never written", name, k)
				continue
			}
			n++
			if len(g.Samples) != len(w.Samples) {
				t.Errorf("%s: %d samples read back, %d written", k, len(g.Samples), len(w.Samples))
				continue
			}
			for i, s := range g.Samples {
				ws := w.Samples[i]
				n++
				same := s.V == ws.V || (math.IsNaN(s.V) && math.IsNaN(ws.V)) ||
					(vm && math.Abs(s.V-ws.V) <= 1e-11*math.Abs(ws.V))
				if s.TMs != ws.T*1000 || !same {
					t.Errorf("%s sample %d: read (%d ms, %v), wrote (%d s, %v)", k, i, s.TMs, s.V, ws.T, ws.V)
					break
				}
			}
		}
	}
	return n
}

func TestRoundTripPrometheus(t *testing.T) {
	total := 0
	for _, name := range scenarioNames() {
		t.Run(name, func(t *testing.T) {
			run, srv := cache.Prometheus(t, name)
			n := roundTrip(t, srv, run.Truth, false)
			total += n
			t.Logf("%s: %d round-trip assertions, %d series, OM %d bytes", name, n, len(run.Truth.Exported), run.Truth.OMBytes)
		})
	}
	t.Logf("round-trip assertions against Prometheus: %d over %d scenarios", total, len(scenarioNames()))
}

func TestRoundTripVictoriaMetrics(t *testing.T) {
	for _, name := range []string{"ladder"} {
		t.Run(name, func(t *testing.T) {
			run, srv := cache.VictoriaMetrics(t, name)
			n := roundTrip(t, srv, run.Truth, true)
			t.Logf("%s: %d round-trip assertions against VictoriaMetrics", name, n)
		})
	}
}
