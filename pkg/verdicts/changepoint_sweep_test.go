package verdicts

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sweep plants one step of relative size `size` in Gaussian noise of CV
// cv at every position p (the number of points before the change) with
// lo ≤ p ≤ n−lo of an n-point series, one seeded series per position, and
// returns the positions where Detect reports exactly that one point, and
// the others with what was reported.
func sweep(n, lo int, size, cv float64, o Options) (found, planted int, misses []string) {
	for p := lo; p <= n-lo; p++ {
		planted++
		rng := rand.New(rand.NewPCG(uint64(n), uint64(p)))
		got := Detect(stepped(noise(rng, n, cv, false), size, p), o)
		if len(got) == 1 && got[0].Index == p {
			found++
			continue
		}
		idx := make([]int, len(got))
		for i, g := range got {
			idx[i] = g.Index
		}
		misses = append(misses, fmt.Sprintf("%d→%v", p, idx))
	}
	return found, planted, misses
}

// TestDetectEveryPosition sweeps a −20 % step in 1.2 % noise over every
// position of 34-, 64- and 365-point series: each must be found at its
// position and nothing else reported (no position is blind to the
// windows' edge margins). With min-runs 1 the sweep runs from the second
// point to the newest.
func TestDetectEveryPosition(t *testing.T) {
	one := DefaultOptions()
	one.MinRuns = 1
	for _, c := range []struct {
		name string
		o    Options
	}{{"min-runs 3", DefaultOptions()}, {"min-runs 1", one}} {
		for _, n := range []int{34, 64, 365} {
			found, planted, misses := sweep(n, c.o.MinRuns, -0.20, 0.012, c.o)
			t.Logf("%s, n = %d: %d positions found of %d planted", c.name, n, found, planted)
			if found != planted {
				t.Errorf("%s, n = %d: %d of %d positions found; missed (position→reported): %v", c.name, n, found, planted, misses)
			}
		}
	}
}

// TestDetectPowerOverPositions: the share of steps found (alone, within
// ±tol of their position) over every position of a 60-point series, 10
// seeds a position, for steps near the limit of what the defaults see.
// Windows that leave no position blind find 40 %, 71 %, 75 % and 92 %;
// windows moving by half their width (15), blind at 4 positions in 15,
// find 35 %, 58 %, 62 % and 78 %.
func TestDetectPowerOverPositions(t *testing.T) {
	const n, seeds = 60, 10
	for _, c := range []struct {
		size, cv float64
		tol      int
		least    float64
	}{{0.05, 0.01, 0, 0.37}, {0.10, 0.05, 1, 0.67}, {0.20, 0.10, 2, 0.70}, {0.20, 0.05, 0, 0.88}} {
		found, total := 0, 0
		for p := 3; p <= n-3; p++ {
			for s := range seeds {
				rng := rand.New(rand.NewPCG(uint64(s), uint64(p)*7))
				got := Detect(stepped(noise(rng, n, c.cv, false), c.size, p), DefaultOptions())
				total++
				if len(got) == 1 && abs(got[0].Index-p) <= c.tol {
					found++
				}
			}
		}
		rate := float64(found) / float64(total)
		t.Logf("step %.0f %%, CV %.0f %%: %d of %d found within ±%d (%.1f %%)", c.size*100, c.cv*100, found, total, c.tol, rate*100)
		if rate < c.least {
			t.Errorf("step %.0f %%, CV %.0f %%: %.1f %% found, want ≥ %.0f %%", c.size*100, c.cv*100, rate*100, c.least*100)
		}
	}
}

// TestMinRunsOne: --min-runs 1 judges the newest run alone.
func TestMinRunsOne(t *testing.T) {
	one := DefaultOptions()
	one.MinRuns = 1
	if got := (Options{MinRuns: 1, Window: 30}).normalised().MinRuns; got != 1 {
		t.Errorf("normalised MinRuns 1 → %d", got)
	}
	if got := (Options{Window: 30}).normalised().MinRuns; got != 1 {
		t.Errorf("normalised MinRuns 0 → %d, want 1", got)
	}

	// Q̂ with a one-point segment: its within term is 0, not 0/0.
	x := []float64{10, 10.2, 9.9, 10.1, 10, 13}
	tau, q, ok := bestSplit(x, 1)
	if !ok || tau != 5 || math.IsNaN(q) || math.IsInf(q, 0) {
		t.Errorf("bestSplit of a newest outlier: τ %d, Q̂ %v, %v; want τ 5 and a finite Q̂", tau, q, ok)
	}
	if _, q1, _ := bestSplit([]float64{13, 10, 10.2, 9.9, 10.1, 10}, 1); math.IsNaN(q1) || math.Abs(q1-q) > 1e-9 {
		t.Errorf("Q̂ of the mirrored series %v, want %v", q1, q)
	}

	// The pooled t-test where a segment has one point: the other
	// segment's variance (ddof 1), df = 3 here; p from the closed form of
	// the t distribution with 3 degrees of freedom.
	ma, mb, p := tTest([]float64{5}, []float64{1, 2, 3, 2.5})
	sp2 := 0.0
	for _, v := range []float64{1, 2, 3, 2.5} {
		sp2 += (v - 2.125) * (v - 2.125) / 3
	}
	tv := (2.125 - 5) / math.Sqrt(sp2*(1+1.0/4))
	xv := math.Abs(tv) / math.Sqrt(3)
	want := 1 - 2/math.Pi*(xv/(1+xv*xv)+math.Atan(xv))
	if ma != 5 || mb != 2.125 || math.Abs(p-want) > 1e-12 {
		t.Errorf("tTest([5], [1 2 3 2.5]) = %v %v p %v, want p %v", ma, mb, p, want)
	}
	if _, _, p := tTest([]float64{1}, []float64{2}); p != 1 {
		t.Errorf("two one-point segments: p %v, want 1 (no test)", p)
	}
	if got := Detect([]float64{1, 2}, one); len(got) != 0 {
		t.Errorf("two points, min-runs 1: %+v, want no split", got)
	}

	// A change at the newest run: found with min-runs 1, not with 3.
	rng := rand.New(rand.NewPCG(3, 3))
	xs := stepped(noise(rng, 40, 0.012, false), 0.2, 39)
	if got := Detect(xs, one); len(got) != 1 || got[0].Index != 39 || got[0].MeanAfter != xs[39] {
		t.Errorf("newest run +20 %%, min-runs 1: %+v", got)
	}
	if got := Detect(xs, DefaultOptions()); len(got) != 0 {
		t.Errorf("newest run +20 %%, min-runs 3: %+v, want nothing yet", got)
	}
}

// TestFirstNonZeroCount: under min-runs 1 a first non-zero count after an
// all-zero history (a first OOM kill) is a change with p = 0, at the
// newest run and, when the count stays, at every position of every length
// from 3 to 64 (two points are never tested); a history that stays at
// zero has none.
func TestFirstNonZeroCount(t *testing.T) {
	one := DefaultOptions()
	one.MinRuns = 1
	for n := 3; n <= 64; n++ {
		if got := Detect(make([]float64, n), one); len(got) != 0 {
			t.Fatalf("all-zero history of %d: %+v", n, got)
		}
		for p := 1; p < n; p++ {
			for _, tail := range []string{"one", "rest"} {
				xs := make([]float64, n)
				xs[p] = 1
				if tail == "rest" {
					for i := p; i < n; i++ {
						xs[i] = 1 // one kill a run from p on
					}
				}
				got := Detect(xs, one)
				if p == n-1 || tail == "rest" {
					if len(got) != 1 || got[0].Index != p || got[0].PValue != 0 || got[0].MeanBefore != 0 {
						t.Fatalf("n %d, first count at %d (%s): %+v, want one change at %d with p = 0", n, p, tail, got, p)
					}
				}
			}
		}
	}
	// The newest run's first OOM kill as the regressions see it.
	runs := make([]*Run, 20)
	for i := range runs {
		v := "0"
		if i == 19 {
			v = "1"
		}
		runs[i] = testRun(fmt.Sprintf("r%02d", i), "oom_events_pod", v, "run_start", fmt.Sprint(1000+i))
		runs[i].Start = int64(1000 + i)
	}
	cps := ChangePoints(Cohorts(runs, nil), []string{"oom_events_pod"}, one, nil)
	if len(cps) != 1 || cps[0].Run != "r19" || cps[0].Kind != Regression || cps[0].PValue != 0 || cps[0].DeltaPct != nil {
		t.Errorf("first OOM kill at the newest run: %+v", cps)
	}
	if cps := ChangePoints(Cohorts(runs, nil), []string{"oom_events_pod"}, DefaultOptions(), nil); len(cps) != 0 {
		t.Errorf("first OOM kill, min-runs 3: %+v, want none yet", cps)
	}
}
