package verdicts

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// nightlyRuns are n runs of one test whose restore_p99_s steps up by 30 %
// at run `at` (0-based), with 3 % noise; machine alternates nothing.
func nightlyRuns(n, at int, machine string, seed uint64) []*Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []*Run
	for i := range n {
		v := 4.0 * (1 + 0.03*rng.NormFloat64())
		if i >= at {
			v *= 1.3
		}
		id := fmt.Sprintf("%s-%02d", machine, i)
		r := testRun(id, "restore_p99_s", strconv.FormatFloat(v, 'f', 4, 64), "machine_type", machine,
			"actors_per_node", "100", "run_start", strconv.Itoa(1000+i))
		r.Start = int64(1000 + i)
		r.Tag = fmt.Sprintf("g%02d", i)
		out = append(out, r)
	}
	return out
}

func TestChangePointsCohortsAndAcks(t *testing.T) {
	runs := append(nightlyRuns(20, 12, "n2", 1), nightlyRuns(20, 99, "c3", 2)...)
	cohorts := Cohorts(runs, nil)
	if len(cohorts) != 2 {
		t.Fatalf("%d cohorts", len(cohorts))
	}
	cps := ChangePoints(cohorts, nil, DefaultOptions(), nil)
	if len(cps) != 1 {
		t.Fatalf("change points %+v", cps)
	}
	cp := cps[0]
	if cp.Key != "restore_p99_s" || cp.Run != "n2-12" || cp.Kind != Regression || cp.Tag != "g12" || cp.PreviousTag != "g11" || cp.Cohort != "nightly machine_type=n2" {
		t.Errorf("change point %+v", cp)
	}
	if cp.DeltaPct == nil || *cp.DeltaPct < 25 || *cp.DeltaPct > 35 {
		t.Errorf("delta %v", cp.DeltaPct)
	}
	if cp.Title()[:len("restore_p99_s +")] != "restore_p99_s +" {
		t.Errorf("title %q", cp.Title())
	}
	// 8 runs followed it: it fails while it lies within since (started at
	// 1012), unless narrowed to the newest 3 runs.
	for _, c := range []struct {
		rule FailRule
		want int
	}{{FailRule{}, 1}, {FailRule{Since: 1012}, 1}, {FailRule{Since: 1013}, 0}, {FailRule{Recent: 3}, 0}, {FailRule{Recent: 8}, 1}, {FailRule{Since: 1012, Recent: 7}, 0}} {
		if got := Failing(cps, c.rule); len(got) != c.want {
			t.Errorf("Failing %+v: %d points, want %d", c.rule, len(got), c.want)
		}
	}
	if got := Failing([]ChangePoint{{Kind: Improvement, Start: 2000, Position: 19, CohortRuns: 20}}, FailRule{}); len(got) != 0 {
		t.Errorf("an improvement fails: %+v", got)
	}
	// A change 3 runs from the end fails even when narrowed to the newest
	// 3; an ack of a run in its segment clears it but the point stays
	// visible.
	recent := Cohorts(nightlyRuns(20, 17, "n2", 3), nil)
	cps = ChangePoints(recent, []string{"restore_p99_s"}, DefaultOptions(), nil)
	if len(Failing(cps, FailRule{Recent: 3})) != 1 {
		t.Fatalf("recent regression not reported: %+v", cps)
	}
	acks, err := ParseAcks([]byte("- {key: restore_p99_s, run: n2-18, reason: new snapshot format}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cps = ChangePoints(recent, []string{"restore_p99_s"}, DefaultOptions(), acks)
	if len(cps) != 1 || !cps[0].Acknowledged || cps[0].AckReason != "new snapshot format" || len(Failing(cps, FailRule{})) != 0 {
		t.Errorf("ack not applied: %+v", cps)
	}
	if _, err := ParseAcks([]byte("- {key: a, runn: b}\n")); err == nil {
		t.Error("unknown ack field accepted")
	}
}

func TestChangePointsDeterministic(t *testing.T) {
	runs := nightlyRuns(60, 30, "n2", 9)
	a := ChangePoints(Cohorts(runs, nil), nil, DefaultOptions(), nil)
	for range 3 {
		if b := ChangePoints(Cohorts(runs, nil), nil, DefaultOptions(), nil); !reflect.DeepEqual(a, b) {
			t.Fatal("different answers for the same runs")
		}
	}
}

// BenchmarkChangePoints365x80: one cohort of 365 runs with 80 keys.
func BenchmarkChangePoints365x80(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	var runs []*Run
	for i := range 365 {
		r := &Run{ID: strconv.Itoa(i), TestName: "nightly", Start: int64(i)}
		for k := range 80 {
			v := 100 * (1 + 0.1*rng.NormFloat64())
			if i >= 200 && k%4 == 0 {
				v *= 1.3
			}
			s := strconv.FormatFloat(v, 'f', 3, 64)
			r.Values = append(r.Values, Value{Key: fmt.Sprintf("key%02d_s", k), Text: &s})
		}
		r.reindex()
		runs = append(runs, r)
	}
	cohorts := Cohorts(runs, nil)
	b.ResetTimer()
	for b.Loop() {
		ChangePoints(cohorts, nil, DefaultOptions(), nil)
	}
}
