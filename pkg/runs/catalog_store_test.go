package runs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/pkg/promql"
)

// history is a stats_history.csv whose steady window is known by hand:
// peak 100 at +20; samples >= 90 at +20, +30 and +50 (the dip to 80 at
// +40 does not split it); last timestamp +60 (an operation row at +60
// counts for the bounds only).
func history(start int64) string {
	rows := []struct {
		off   int64
		users string
		name  string
	}{
		{0, "0", "Aggregated"}, {10, "50", "Aggregated"}, {20, "100", "ResumeActor"}, {20, "100", "Aggregated"},
		{30, "95", "Aggregated"}, {40, "80", "Aggregated"}, {50, "92", "Aggregated"}, {60, "10", "Aggregated"},
		{60, "10", "ResumeActor"},
	}
	var b strings.Builder
	b.WriteString("Timestamp,User Count,Type,Name,Requests/s\n")
	for _, r := range rows {
		b.WriteString(itoa(start+r.off) + "," + r.users + ",," + r.name + ",1.0\n")
	}
	return b.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

const (
	tsA = int64(1710237600) // 2024-03-12T10:00:00Z
	tsB = int64(1710324000) // 2024-03-13T10:00:00Z
	tsC = int64(1710410400) // 2024-03-14T10:00:00Z
	tsD = int64(1710496800) // 2024-03-15T10:00:00Z
)

// storeFixture lays out a results store like the orchestrator's:
//
//	actor-density/2024-03-12/tsA/c0ffee1: server_summary.json, stats_history.csv, status.json (exit 0)
//	actor-density/2024-03-12/tsA/deadbee: stats.jsonl (trial_summary run_end), stats_history.csv
//	actor-density/2024-03-13/tsB/c0ffee1: stats_history.csv only (still uploading)
//	resume-storm/2024-03-14/tsC/abc: status.json only (a run with missing files)
//	my test/2024-03-14/tsD/v1: filed under the local date of its start
//	plus junk the parser must skip.
func storeFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := "runs/actor-density/run_date=2024-03-12/run_ts=1710237600/run_tag=c0ffee1/"
	put(a+"server_summary.json", `{
  "metadata": {"test_name": "actor-density", "tag": "c0ffee1", "data_timestamp": "2024-03-12T10:00:00Z",
    "prom_url": "http://prometheus:9090", "start_ts": 1710237600, "end_ts": 1710241000,
    "steady_start_ts": 1710238200, "steady_end_ts": 1710240000, "atelet_lag_s": 70},
  "cluster_packing": {"summary": {}, "timeseries": []}
}
`)
	put(a+"stats_history.csv", history(tsA))
	put(a+"status.json", `{"locust_exit_code": 0, "stats_generated": true}`)
	b := "runs/actor-density/run_date=2024-03-12/run_ts=1710237600/run_tag=deadbee/"
	put(b+"stats.jsonl", `{"timestamp": "x", "tag": "deadbee", "test_name": "actor-density", "metric": "locust_stats", "measurements": {"run_end": "1"}}
{"timestamp": "2024-03-12T10:00:00Z", "tag": "deadbee", "test_name": "actor-density", "metric": "trial_summary", "measurements": {"machine_type": null, "run_start": "1710237600", "run_end": "1710237645"}}
`)
	put(b+"stats_history.csv", history(tsA))
	c := "runs/actor-density/run_date=2024-03-13/run_ts=1710324000/run_tag=c0ffee1/"
	put(c+"stats_history.csv", history(tsB))
	d := "runs/resume-storm/run_date=2024-03-14/run_ts=1710410400/run_tag=abc/"
	put(d+"status.json", `{"locust_exit_code": 1, "stats_generated": false}`)
	e := "runs/my test/run_date=2024-03-14/run_ts=1710496800/run_tag=v1/"
	put(e+"stats_history.csv", history(tsD))
	put(e+"status.json", `{"locust_exit_code": 2}`)
	put("runs/actor-density/not-a-date/run_ts=1/run_tag=x/status.json", `{}`)
	put("runs/actor-density/run_date=2024-03-12/run_ts=abc/run_tag=x/status.json", `{}`)
	put("runs/actor-density/run_date=2024-03-12/run_ts=1710237600/stray.txt", `x`)
	put("README.md", "not a run")
	return root
}

func openFixture(t *testing.T) (*Store, string) {
	t.Helper()
	root := storeFixture(t)
	s, err := OpenStore(context.Background(), "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, root
}

func TestStoreList(t *testing.T) { testStoreList(t, openFixture) }

func testStoreList(t *testing.T, openFixture func(*testing.T) (*Store, string)) {
	s, _ := openFixture(t)
	got, err := s.List(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id                  string
		end, ss, se         int64
		endKnown, fromSamps bool
		peak                float64
		exit                int64 // -1: nil
		windowFrom          string
	}
	want := []row{
		{"my%20test/1710496800/v1", tsD + 60, tsD + 20, tsD + 50, true, true, 100, 2, "the last stats_history.csv timestamp"},
		{"resume-storm/1710410400/abc", tsC, tsC, tsC, false, false, -1, 1, "unknown: no server_summary.json, trial_summary row or stats_history.csv timestamp"},
		{"actor-density/1710324000/c0ffee1", tsB + 60, tsB + 20, tsB + 50, true, true, 100, -1, "the last stats_history.csv timestamp"},
		{"actor-density/1710237600/c0ffee1", 1710241000, 1710238200, 1710240000, true, true, 100, 0, "server_summary.json metadata"},
		// run_end +45 cuts the steady window at the end: [+20, min(+50, +45)].
		{"actor-density/1710237600/deadbee", tsA + 45, tsA + 20, tsA + 45, true, true, 100, -1, "the trial_summary row of stats.jsonl"},
	}
	if len(got) != len(want) {
		ids := []string{}
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		t.Fatalf("got %d runs %v, want %d", len(got), ids, len(want))
	}
	for i, w := range want {
		g := got[i]
		var peak float64 = -1
		if g.PeakUsers != nil {
			peak = *g.PeakUsers
		}
		var exit int64 = -1
		if g.ExitCode != nil {
			exit = *g.ExitCode
		}
		if g.ID != w.id || g.End != w.end || g.SteadyStart != w.ss || g.SteadyEnd != w.se || g.EndKnown != w.endKnown ||
			g.SteadyFromSamples != w.fromSamps || peak != w.peak || exit != w.exit || g.WindowFrom != w.windowFrom {
			t.Errorf("run %d = {%s end %d steady [%d,%d] endKnown %v fromSamples %v peak %v exit %v from %q}, want %+v",
				i, g.ID, g.End, g.SteadyStart, g.SteadyEnd, g.EndKnown, g.SteadyFromSamples, peak, exit, g.WindowFrom, w)
		}
		if g.Source != SourceStore {
			t.Errorf("run %s source %q", g.ID, g.Source)
		}
	}
	if a := got[3].Artifacts; !a.ServerSummary || !a.StatsHistory || !a.Status || a.Stats || a.StatsJSONL {
		t.Errorf("artifacts of %s = %+v", got[3].ID, a)
	}
	if got[0].TestName != "my test" || got[0].Tag != "v1" || got[0].Start != tsD {
		t.Errorf("names of %s: %q %q %d", got[0].ID, got[0].TestName, got[0].Tag, got[0].Start)
	}
}

func TestStoreListFilters(t *testing.T) { testStoreListFilters(t, openFixture) }

func testStoreListFilters(t *testing.T, openFixture func(*testing.T) (*Store, string)) {
	s, _ := openFixture(t)
	tests := []struct {
		name string
		opts ListOptions
		want []string
	}{
		{"test name", ListOptions{TestName: "actor-density"}, []string{"actor-density/1710324000/c0ffee1", "actor-density/1710237600/c0ffee1", "actor-density/1710237600/deadbee"}},
		{"tag", ListOptions{Tag: "c0ffee1"}, []string{"actor-density/1710324000/c0ffee1", "actor-density/1710237600/c0ffee1"}},
		{"range inclusive", ListOptions{From: tsB, To: tsC}, []string{"resume-storm/1710410400/abc", "actor-density/1710324000/c0ffee1"}},
		{"range excludes all", ListOptions{From: tsA + 1, To: tsB - 1}, nil},
		{"unknown test", ListOptions{TestName: "nope"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.List(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if strings.Join(ids, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestStoreGet(t *testing.T) { testStoreGet(t, openFixture) }

func testStoreGet(t *testing.T, openFixture func(*testing.T) (*Store, string)) {
	s, _ := openFixture(t)
	ctx := context.Background()
	tests := []struct {
		raw     string
		wantEnd int64
		wantErr error
	}{
		{"actor-density/1710237600/c0ffee1", 1710241000, nil},
		// Filed under 2024-03-14 while its UTC date is 2024-03-15: found by
		// searching the test's dates.
		{"my%20test/1710496800/v1", tsD + 60, nil},
		{"actor-density/1710237601/c0ffee1", 0, ErrRunNotFound},
		{"actor-density/1710237600/nope", 0, ErrRunNotFound},
		{"nope/1710237600/c0ffee1", 0, ErrRunNotFound},
		{"../../etc", 0, ErrInvalidRunID},
		{"..%2F..%2Fetc/1/x", 0, ErrInvalidRunID},
		{"%2e%2e/1710237600/c0ffee1", 0, ErrInvalidRunID},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			id, err := ParseRunID(tc.raw)
			if err == nil {
				var e Entry
				e, err = s.Get(ctx, id)
				if err == nil && e.End != tc.wantEnd {
					t.Fatalf("end = %d, want %d", e.End, tc.wantEnd)
				}
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestStoreLatestAndTests(t *testing.T) { testStoreLatestAndTests(t, openFixture) }

func testStoreLatestAndTests(t *testing.T, openFixture func(*testing.T) (*Store, string)) {
	s, _ := openFixture(t)
	ctx := context.Background()
	e, err := s.Latest(ctx, "")
	if err != nil || e.ID != "my%20test/1710496800/v1" {
		t.Fatalf("latest = %q, %v", e.ID, err)
	}
	e, err = s.Latest(ctx, "actor-density")
	if err != nil || e.ID != "actor-density/1710324000/c0ffee1" {
		t.Fatalf("latest actor-density = %q, %v", e.ID, err)
	}
	if _, err := s.Latest(ctx, "nope"); !errors.Is(err, ErrRunNotFound) {
		t.Fatalf("latest of unknown test: %v", err)
	}
	tests, err := s.Tests(ctx)
	if err != nil || strings.Join(tests, ",") != "actor-density,my test,resume-storm" {
		t.Fatalf("tests = %q, %v", tests, err)
	}
}

// A finished run's description is cached (its files are immutable); an
// unfinished one is read again.
func TestStoreCachesFinishedRunsOnly(t *testing.T) {
	s, root := openFixture(t)
	ctx := context.Background()
	idA, _ := ParseRunID("actor-density/1710237600/c0ffee1")
	idB, _ := ParseRunID("actor-density/1710324000/c0ffee1")
	if _, err := s.Get(ctx, idA); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, idB); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(root, "runs/actor-density/run_date=2024-03-12/run_ts=1710237600/run_tag=c0ffee1/server_summary.json")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(root, "runs/actor-density/run_date=2024-03-13/run_ts=1710324000/run_tag=c0ffee1/stats_history.csv")
	if err := os.WriteFile(b, []byte(history(tsB)+itoa(tsB+600)+",5,,Aggregated,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ea, err := s.Get(ctx, idA)
	if err != nil || ea.End != 1710241000 {
		t.Fatalf("cached finished run: end %d, %v", ea.End, err)
	}
	eb, err := s.Get(ctx, idB)
	if err != nil || eb.End != tsB+600 {
		t.Fatalf("unfinished run re-read: end %d, want %d, %v", eb.End, tsB+600, err)
	}
}

func TestOpenStoreMissing(t *testing.T) {
	_, err := OpenStore(context.Background(), "file://"+filepath.Join(t.TempDir(), "nope"))
	if err == nil {
		t.Fatal("opening a missing directory succeeded")
	}
}

func TestStoreURL(t *testing.T) {
	tests := []struct {
		raw, want, where string
		bad              bool
	}{
		{"/data/results", "file:///data/results", "file:///data/results", false},
		{"file:///data/results", "file:///data/results", "file:///data/results", false},
		{"gs://bucket", "gs://bucket", "gs://bucket", false},
		{"gs://bucket/bench/x", "gs://bucket?prefix=bench%2Fx%2F", "gs://bucket/bench/x", false},
		{"s3://bucket/p?region=us-east-1", "s3://bucket?prefix=p%2F&region=us-east-1", "s3://bucket/p", false},
		{"azblob://container/p", "azblob://container?prefix=p%2F", "azblob://container/p", false},
		{"http://example.com/x", "", "", true},
		{"relative/path", "", "", true},
	}
	for _, tc := range tests {
		got, where, err := storeURL(tc.raw)
		if tc.bad {
			if err == nil {
				t.Errorf("storeURL(%q) = %q, want error", tc.raw, got)
			}
			continue
		}
		if err != nil || got != tc.want || where != tc.where {
			t.Errorf("storeURL(%q) = %q, %q, %v; want %q, %q", tc.raw, got, where, err, tc.want, tc.where)
		}
	}
}

func TestDateMayHold(t *testing.T) {
	tests := []struct {
		date     string
		from, to int64
		want     bool
	}{
		{"2024-03-12", tsA, tsA, true},
		{"2024-03-11", tsA, tsA, true},  // a day of slack
		{"2024-03-10", tsA, tsA, false}, // ends before from
		{"2024-03-13", tsA, tsA, true},
		{"2024-03-14", tsA, tsA, false},
		{"garbage", tsA, tsA, true},
		{"2024-03-01", 0, 0, true},
	}
	for _, tc := range tests {
		if got := dateMayHold(tc.date, tc.from, tc.to); got != tc.want {
			t.Errorf("dateMayHold(%s, %d, %d) = %v", tc.date, tc.from, tc.to, got)
		}
	}
}

// TestLatestAcrossCatalogs pins runs.md "the word latest means the
// newest run across catalogs (optionally of one test name)": with a results
// store and Prometheus discovery both on, latest is whichever catalog holds
// the newer run; with a test name, only the store (discovered runs have no
// test name) is asked.
func TestLatestAcrossCatalogs(t *testing.T) {
	srv := promtest.Start(t, discoveryOM(t))
	client, err := promql.New(promql.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := t0 + 9000 // discovered runs start at +20, +900, +3000 (ended +4290)
	store := func(t *testing.T, start int64) *Store {
		t.Helper()
		root := t.TempDir()
		dir := filepath.Join(root, "runs/actor-density/run_date=2023-11-14/run_ts="+itoa(start)+"/run_tag=x")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stats_history.csv"), []byte(history(start)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	tests := []struct {
		name     string
		stored   int64
		testName string
		want     string
	}{
		{"the stored run is newer", t0 + 6000, "", "actor-density/" + itoa(t0+6000) + "/x"},
		{"the discovered run is newer", t0 + 2000, "", PromRunID(t0 + 3000)},
		{"of one test name: the store only", t0 + 2000, "actor-density", "actor-density/" + itoa(t0+2000) + "/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Catalogs{Store: store(t, tc.stored), Discovery: NewDiscovery(client, "", 0), DiscoverRuns: true}
			e, err := c.Latest(ctx, tc.testName, now)
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != tc.want {
				t.Errorf("latest = %s, want %s", e.ID, tc.want)
			}
			// The same through a parsed "latest" reference.
			id, err := ParseRunID("latest")
			if err != nil || id.Kind != KindLatest {
				t.Fatalf("ParseRunID(latest) = %+v, %v", id, err)
			}
		})
	}
}

// TestDiscoveryDefaults pins runs.md's discovery defaults: the
// user-count query sum(locust_users) and a 2-minute gap.
func TestDiscoveryDefaults(t *testing.T) {
	d := NewDiscovery(nil, "", 0)
	if q := d.Query(); q != "sum(locust_users)" {
		t.Errorf("default user-count query %q, want sum(locust_users)", q)
	}
	if d.gap != 120 {
		t.Errorf("default gap %d s, want 120 (2 minutes)", d.gap)
	}
}

// ListNewest reads only the newest runs of a listing, and Catalogs bounds
// the reads a range drives: MaxRuns stored runs, an ad hoc run of at most
// MaxRange (ErrRangeTooLong beyond).
func TestListingBounds(t *testing.T) { testListingBounds(t, openFixture) }

func testListingBounds(t *testing.T, openFixture func(*testing.T) (*Store, string)) {
	s, _ := openFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		limit     int
		wantFound int
		wantIDs   []string
	}{
		{0, 5, []string{"my%20test/1710496800/v1", "resume-storm/1710410400/abc", "actor-density/1710324000/c0ffee1",
			"actor-density/1710237600/c0ffee1", "actor-density/1710237600/deadbee"}},
		{2, 5, []string{"my%20test/1710496800/v1", "resume-storm/1710410400/abc"}},
		{4, 5, []string{"my%20test/1710496800/v1", "resume-storm/1710410400/abc", "actor-density/1710324000/c0ffee1", "actor-density/1710237600/c0ffee1"}},
		{9, 5, []string{"my%20test/1710496800/v1", "resume-storm/1710410400/abc", "actor-density/1710324000/c0ffee1",
			"actor-density/1710237600/c0ffee1", "actor-density/1710237600/deadbee"}},
	} {
		es, found, err := s.ListNewest(ctx, ListOptions{}, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range es {
			ids = append(ids, e.ID)
		}
		if found != tc.wantFound || !slices.Equal(ids, tc.wantIDs) {
			t.Errorf("limit %d: found %d, %v; want %d, %v", tc.limit, found, ids, tc.wantFound, tc.wantIDs)
		}
	}
	c := &Catalogs{Store: s, MaxRange: 31 * 86400, MaxRuns: 3}
	l, err := c.List(ctx, ListOptions{Now: tsD + 3600})
	if err != nil || len(l.Runs) != 3 || l.StoredFound != 5 {
		t.Errorf("List with MaxRuns 3: %d runs, found %d, %v", len(l.Runs), l.StoredFound, err)
	}
	if _, err := c.Range(ctx, tsA, tsA+31*86400); err != nil {
		t.Errorf("a 31-day ad hoc run: %v", err)
	}
	if _, err := c.Range(ctx, 0, tsA); !errors.Is(err, ErrRangeTooLong) {
		t.Errorf("a 54-year ad hoc run: %v, want ErrRangeTooLong", err)
	}
}
