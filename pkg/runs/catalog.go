package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/substrate/density/pkg/artifact"
)

// Catalog sources (Entry.Source).
const (
	SourceStore      = "store"
	SourcePrometheus = "prometheus"
	SourceRange      = "range"
)

// ErrRunNotFound is wrapped when a well-formed run id names no run.
var ErrRunNotFound = errors.New("run not found")

// ErrNoCatalog is returned when an id needs a catalog that is not
// configured (a store id without a results store, a Prometheus id with
// discovery off).
var ErrNoCatalog = errors.New("catalog not configured")

// Entry is a run as a catalog knows it: the Run plus where it came from and
// how its window was found.
type Entry struct {
	Run
	// Source is SourceStore, SourcePrometheus or SourceRange.
	Source string
	// EndKnown is false for a stored run with none of server_summary.json,
	// a trial_summary row or a stats_history.csv timestamp: End then equals
	// Start and the run cannot be harvested.
	EndKnown bool
	// Live is true for a run still in progress (Prometheus discovery: the
	// user count was > 0 within the gap of now).
	Live bool
	// ExitCode is status.json's locust_exit_code (nil: absent or unreadable).
	ExitCode *int64
	// WindowFrom says where End and the steady window came from, in plain
	// words (e.g. "server_summary.json metadata").
	WindowFrom string
	// SteadyWhy is the reason the steady window fell back to the run window
	// ("" when it came from samples).
	SteadyWhy string
	// Problems are files that exist but could not be read, in plain words.
	Problems []string
	// Files lists the run's files with their sizes in bytes (stored runs).
	Files []File
	// RowKey is the identity the run's stats.jsonl rows repeat, as its
	// server_summary.json metadata recorded it (nil: not recorded; the rows
	// then decide, see artifact.SelectRunRows).
	RowKey *artifact.RunKey
}

// File is one object of a stored run.
type File struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// ListOptions filters a listing. Zero times mean unbounded.
type ListOptions struct {
	// From, To bound run starts (inclusive), Unix seconds.
	From, To int64
	// TestName and Tag keep only runs with exactly these values ("" = any).
	TestName, Tag string
	// Now is the current time, Unix seconds (for live runs).
	Now int64
}

func (o ListOptions) keep(e Entry) bool {
	switch {
	case o.From != 0 && e.Start < o.From, o.To != 0 && e.Start > o.To:
		return false
	case o.TestName != "" && e.TestName != o.TestName, o.Tag != "" && e.Tag != o.Tag:
		return false
	}
	return true
}

// Listing is the merged answer of every configured catalog.
type Listing struct {
	Runs []Entry // newest first
	// Problems name catalogs that failed while others answered.
	Problems []string
	// DiscoveryFrom is where run discovery started when MaxRange cut the
	// range short (it covered [DiscoveryFrom, end]); 0 when it covered all.
	DiscoveryFrom int64
	// StoredFound is how many stored runs passed the filter; when it is
	// over MaxRuns only the newest MaxRuns were read.
	StoredFound int
}

// ErrRangeTooLong is wrapped when an ad hoc run's window is longer than
// Catalogs.MaxRange.
var ErrRangeTooLong = errors.New("the range is longer than reads of Prometheus may span")

// Catalogs combines the results store and Prometheus discovery. Either may
// be nil (not configured). Discovery is also used without DiscoverRuns for
// ad hoc runs (steady window from the user-count series).
type Catalogs struct {
	Store     *Store
	Discovery *Discovery
	// DiscoverRuns lists and resolves Prometheus-discovered runs.
	DiscoverRuns bool
	// MaxRange bounds, in seconds, the Prometheus reads that a caller's
	// range drives (0: no bound): an ad hoc run over a longer window is an
	// error wrapping ErrRangeTooLong, and run discovery over a longer
	// listing range covers its newest MaxRange (Listing.DiscoveryFrom).
	MaxRange int64
	// MaxRuns bounds the stored runs one listing reads (0: no bound): the
	// newest are read (Listing.StoredFound says how many there were).
	MaxRuns int
}

// List returns the runs of every configured catalog that pass opts,
// newest first. A Prometheus-discovered run whose window overlaps a stored
// run is the same trial seen twice: the stored one (with its files and
// names) is kept. It fails only when every configured catalog failed.
func (c *Catalogs) List(ctx context.Context, opts ListOptions) (Listing, error) {
	var (
		out      Listing
		errs     []error
		answered int
	)
	var stored []Entry
	if c.Store != nil {
		s, found, err := c.Store.ListNewest(ctx, opts, c.MaxRuns)
		if err != nil {
			errs = append(errs, err)
			out.Problems = append(out.Problems, "results store: "+err.Error())
		} else {
			answered++
			stored, out.StoredFound = s, found
		}
	}
	var discovered []Entry
	if c.Discovery != nil && c.DiscoverRuns && opts.TestName == "" && opts.Tag == "" {
		from, end := opts.From, opts.To
		if opts.Now != 0 && (end == 0 || end > opts.Now) {
			end = opts.Now
		}
		if c.MaxRange > 0 && end-from > c.MaxRange {
			from = end - c.MaxRange
			out.DiscoveryFrom = from
		}
		d, err := c.Discovery.List(ctx, from, opts.To, opts.Now)
		if err != nil {
			errs = append(errs, err)
			out.Problems = append(out.Problems, "Prometheus discovery: "+err.Error())
		} else {
			answered++
			discovered = d
		}
	}
	if answered == 0 && len(errs) > 0 {
		return Listing{}, errors.Join(errs...)
	}
	out.Runs = append(out.Runs, stored...)
	for _, d := range discovered {
		if !overlapsAny(d, stored) && opts.keep(d) {
			out.Runs = append(out.Runs, d)
		}
	}
	SortNewestFirst(out.Runs)
	return out, nil
}

func overlapsAny(e Entry, others []Entry) bool {
	for _, o := range others {
		if o.EndKnown && e.Start <= o.End && o.Start <= e.End {
			return true
		}
	}
	return false
}

// SortNewestFirst orders entries by start descending, then by id (stable,
// so equal starts keep a deterministic order).
func SortNewestFirst(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int {
		if c := cmp.Compare(b.Start, a.Start); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Get resolves a store or Prometheus run id (not latest or range: see
// Latest and Range).
func (c *Catalogs) Get(ctx context.Context, id RunID, now int64) (Entry, error) {
	switch id.Kind {
	case KindStore:
		if c.Store == nil {
			return Entry{}, fmt.Errorf("run %s: %w: no results store is set", id, ErrNoCatalog)
		}
		return c.Store.Get(ctx, id)
	case KindProm:
		if c.Discovery == nil || !c.DiscoverRuns {
			return Entry{}, fmt.Errorf("run %s: %w: Prometheus run discovery is off", id, ErrNoCatalog)
		}
		return c.Discovery.Get(ctx, id.RunTS, now)
	}
	return Entry{}, fmt.Errorf("run %s: not a store or Prometheus run id", id)
}

// LatestLookback is how far back Prometheus discovery looks for `latest`.
const LatestLookback = 7 * 24 * 3600

// Latest is the newest run across catalogs (of testName when not empty;
// Prometheus-discovered runs have no test name, so a test name restricts
// the answer to the store). Discovery looks back LatestLookback seconds.
func (c *Catalogs) Latest(ctx context.Context, testName string, now int64) (Entry, error) {
	var (
		best  *Entry
		errs  []error
		asked int
	)
	if c.Store != nil {
		asked++
		e, err := c.Store.Latest(ctx, testName)
		switch {
		case err == nil:
			best = &e
		case !errors.Is(err, ErrRunNotFound):
			errs = append(errs, err)
		}
	}
	if c.Discovery != nil && c.DiscoverRuns && testName == "" {
		asked++
		ds, err := c.Discovery.List(ctx, now-LatestLookback, now, now)
		if err != nil {
			errs = append(errs, err)
		}
		for _, d := range ds {
			if best == nil || (d.Start > best.Start && !(best.EndKnown && d.Start <= best.End)) {
				d := d
				best = &d
			}
		}
	}
	if best != nil {
		return *best, nil
	}
	if len(errs) > 0 {
		return Entry{}, fmt.Errorf("finding the latest run: %w", errors.Join(errs...))
	}
	if asked == 0 {
		if testName != "" && c.Discovery != nil && c.DiscoverRuns {
			return Entry{}, fmt.Errorf("latest run of test %s: %w: no results store is set and Prometheus-discovered runs have no test name", testName, ErrNoCatalog)
		}
		return Entry{}, fmt.Errorf("latest run: %w: neither a results store nor Prometheus run discovery is set", ErrNoCatalog)
	}
	what := "any run"
	if testName != "" {
		what = "a run of test " + testName
	}
	return Entry{}, fmt.Errorf("latest run: %w: no catalog has %s", ErrRunNotFound, what)
}

// Range is the ad hoc run over [from, to]: the steady window comes from the
// user-count series when discovery's client is set, else it is the run
// window.
func (c *Catalogs) Range(ctx context.Context, from, to int64) (Entry, error) {
	if to < from {
		return Entry{}, fmt.Errorf("ad hoc run [%d, %d]: end before start", from, to)
	}
	if c.MaxRange > 0 && to-from > c.MaxRange {
		const day = 24 * 3600
		return Entry{}, fmt.Errorf("ad hoc run over %.1f days: %w (%d days at most)", float64(to-from)/day, ErrRangeTooLong, c.MaxRange/day)
	}
	if c.Discovery == nil {
		e := Entry{Run: Run{ID: IDRange, Start: from, End: to, SteadyStart: from, SteadyEnd: to},
			Source: SourceRange, EndKnown: true, WindowFrom: "the dashboard time range", SteadyWhy: SteadyNoSamples}
		return e, nil
	}
	return c.Discovery.Range(ctx, from, to)
}

// Tests lists the test names of the results store, sorted.
func (c *Catalogs) Tests(ctx context.Context) ([]string, error) {
	if c.Store == nil {
		return []string{}, nil
	}
	return c.Store.Tests(ctx)
}

// Close releases the results store.
func (c *Catalogs) Close() error {
	if c.Store != nil {
		return c.Store.Close()
	}
	return nil
}
