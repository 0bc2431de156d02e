package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/promql"
)

// t0 is on the 10 s grid; locust is scraped every 15 s.
const t0 = int64(1700000000)

// usersAt is the scripted user count (ok=false: the series is absent):
//
//	run 1: scrapes +15..+600 (20 users, 100 from +120); steady [+120, +610], end +610
//	zeros +615..+885: a 285 s gap (> 120 s) splits run 1 from run 2
//	run 2: +900..+1500 at 50 users, 80 in +1305..+1395, a dip to 0 at
//	       +1200..+1260 (90 s between positive instants: no split);
//	       steady [+1310, +1400], end +1510
//	zeros to +2000, then absent (no samples) to +3000
//	run 3: 30 users from +3000 on; with now = +3600 it is still in progress
func usersAt(t int64) (float64, bool) {
	o := t - t0
	switch {
	case o < 15:
		return 0, true
	case o <= 600:
		if o < 120 {
			return 20, true
		}
		return 100, true
	case o < 900:
		return 0, true
	case o <= 1500:
		switch {
		case o >= 1200 && o <= 1260:
			return 0, true
		case o >= 1305 && o <= 1400:
			return 80, true
		}
		return 50, true
	case o <= 2000:
		return 0, true
	case o < 3000:
		return 0, false
	}
	return 30, true
}

func discoveryOM(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE locust_users gauge\n")
	for ts := t0 - 600; ts <= t0+4000; ts += 15 {
		if v, ok := usersAt(ts); ok {
			fmt.Fprintf(&b, "locust_users{job=\"locust\",instance=\"10.0.0.41:9646\"} %g %d\n", v, ts)
		}
	}
	b.WriteString("# EOF\n")
	p := filepath.Join(t.TempDir(), "users.om")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type wantRun struct {
	start, end, ss, se int64
	peak               float64
	live               bool
}

func checkEntry(t *testing.T, e Entry, w wantRun) {
	t.Helper()
	if e.ID != PromRunID(w.start) || e.Start != w.start || e.End != w.end || e.SteadyStart != w.ss || e.SteadyEnd != w.se ||
		e.Live != w.live || e.PeakUsers == nil || *e.PeakUsers != w.peak || !e.SteadyFromSamples || e.Source != SourcePrometheus || !e.EndKnown {
		peak := "nil"
		if e.PeakUsers != nil {
			peak = fmt.Sprint(*e.PeakUsers)
		}
		t.Errorf("entry %s: start %d end %d steady [%d, %d] live %v peak %s fromSamples %v; want start %d end %d steady [%d, %d] live %v peak %v",
			e.ID, e.Start-t0, e.End-t0, e.SteadyStart-t0, e.SteadyEnd-t0, e.Live, peak, e.SteadyFromSamples,
			w.start-t0, w.end-t0, w.ss-t0, w.se-t0, w.live, w.peak)
	}
}

func TestDiscovery(t *testing.T) {
	srv := promtest.Start(t, discoveryOM(t))
	client, err := promql.New(promql.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDiscovery(client, "", 0)
	ctx := context.Background()
	now := t0 + 3600
	run1 := wantRun{t0 + 20, t0 + 610, t0 + 120, t0 + 610, 100, false}
	run2 := wantRun{t0 + 900, t0 + 1510, t0 + 1310, t0 + 1400, 80, false}
	run3 := wantRun{t0 + 3000, t0 + 3600, t0 + 3000, t0 + 3600, 30, true}

	t.Run("list", func(t *testing.T) {
		tests := []struct {
			name     string
			from, to int64
			want     []wantRun
		}{
			{"whole range", t0 - 600, now, []wantRun{run1, run2, run3}},
			// run 1 started before from: found whole (its start is read
			// back past from) and left out.
			{"from inside run 1", t0 + 300, now, []wantRun{run2, run3}},
			{"inside run 2 only", t0 + 1000, t0 + 1100, nil},
			{"to inside run 2", t0 - 600, t0 + 1000, []wantRun{run1, run2}},
			// 200 days: the coarse scan (step 1730 s) then 10 s reads find
			// the same runs with the same ids.
			{"coarse scan", now - 200*24*3600, now, []wantRun{run1, run2, run3}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := d.List(ctx, tc.from, tc.to, now)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tc.want) {
					var ids []string
					for _, e := range got {
						ids = append(ids, fmt.Sprintf("%s [%d, %d]", e.ID, e.Start-t0, e.End-t0))
					}
					t.Fatalf("got %d runs %v, want %d", len(got), ids, len(tc.want))
				}
				for i, w := range tc.want {
					checkEntry(t, got[i], w)
				}
			})
		}
	})

	t.Run("get", func(t *testing.T) {
		e, err := d.Get(ctx, t0+900, now)
		if err != nil {
			t.Fatal(err)
		}
		checkEntry(t, e, run2)
		e, err = d.Get(ctx, t0+3000, now)
		if err != nil {
			t.Fatal(err)
		}
		checkEntry(t, e, run3)
		// Later, the same run has ended (no sample after +4000).
		e, err = d.Get(ctx, t0+3000, t0+9000)
		if err != nil {
			t.Fatal(err)
		}
		checkEntry(t, e, wantRun{t0 + 3000, t0 + 4290, t0 + 3000, t0 + 4290, 30, false})
		for _, bad := range []int64{t0 + 910, t0 + 905, t0 + 1280, t0 + 2500} {
			if _, err := d.Get(ctx, bad, now); !errors.Is(err, ErrRunNotFound) {
				t.Errorf("Get(+%d): %v, want ErrRunNotFound", bad-t0, err)
			}
		}
	})

	t.Run("ad hoc range", func(t *testing.T) {
		e, err := d.Range(ctx, t0+900, t0+1510)
		if err != nil {
			t.Fatal(err)
		}
		if e.ID != IDRange || e.SteadyStart != t0+1310 || e.SteadyEnd != t0+1400 || e.PeakUsers == nil || *e.PeakUsers != 80 {
			t.Fatalf("range entry %+v", e)
		}
		e, err = d.Range(ctx, t0+2100, t0+2900)
		if err != nil {
			t.Fatal(err)
		}
		if e.SteadyStart != t0+2100 || e.SteadyEnd != t0+2900 || e.SteadyFromSamples || e.SteadyWhy == "" {
			t.Fatalf("range without users: %+v", e)
		}
	})

	t.Run("catalogs latest", func(t *testing.T) {
		c := &Catalogs{Discovery: d, DiscoverRuns: true}
		e, err := c.Latest(ctx, "", now)
		if err != nil {
			t.Fatal(err)
		}
		checkEntry(t, e, run3)
		if _, err := c.Latest(ctx, "some-test", now); !errors.Is(err, ErrNoCatalog) {
			t.Fatalf("latest of a test name without a store: %v", err)
		}
		off := &Catalogs{Discovery: d}
		if _, err := off.Get(ctx, RunID{Kind: KindProm, RunTS: t0 + 900}, now); !errors.Is(err, ErrNoCatalog) {
			t.Fatalf("prom id with discovery off: %v", err)
		}
	})

	t.Run("merged with a store", func(t *testing.T) {
		// A stored run overlapping run 2 hides the discovered copy.
		root := t.TempDir()
		dir := filepath.Join(root, "runs/actor-density/run_date=2023-11-14/run_ts="+itoa(t0+895)+"/run_tag=x")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stats_history.csv"), []byte(history(t0+895)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := &Catalogs{Store: s, Discovery: d, DiscoverRuns: true}
		l, err := c.List(ctx, ListOptions{From: t0 - 600, To: now, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range l.Runs {
			ids = append(ids, e.ID)
		}
		want := []string{PromRunID(t0 + 3000), "actor-density/" + itoa(t0+895) + "/x", PromRunID(t0 + 20)}
		if strings.Join(ids, " ") != strings.Join(want, " ") {
			t.Fatalf("merged listing %v, want %v", ids, want)
		}
	})
}

func TestDiscoveryStep(t *testing.T) {
	tests := []struct{ rangeS, want int64 }{
		{0, 10}, {3600, 10}, {100000, 10}, {100001, 20}, {7 * 86400, 70}, {200 * 86400, 1730},
	}
	for _, tc := range tests {
		if got := DiscoveryStep(tc.rangeS); got != tc.want {
			t.Errorf("DiscoveryStep(%d) = %d, want %d", tc.rangeS, got, tc.want)
		}
		if tc.rangeS/DiscoveryStep(tc.rangeS) > 10000 {
			t.Errorf("range %d at step %d exceeds 10000 points", tc.rangeS, DiscoveryStep(tc.rangeS))
		}
	}
}
