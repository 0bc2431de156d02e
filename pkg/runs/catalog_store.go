package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/endpoint"

	// file:// stores work in every importer; the gs://, s3:// and
	// azblob:// drivers are blank-imported by the binaries' main packages
	// only (cmd/density, pkg/main.go), so a library importer links no
	// cloud SDK.
	_ "gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"
)

// Store layout segments (runs.md "Run catalogs").
const (
	storeRunsDir  = "runs/"
	storeDateKey  = "run_date="
	storeTSKey    = "run_ts="
	storeTagKey   = "run_tag="
	storeDateForm = "2006-01-02"
)

// StorePath is what a run's prefix in the store layout names:
// runs/<test_name>/run_date=<date>/run_ts=<run_ts>/run_tag=<tag>/.
type StorePath struct {
	TestName, Tag string
	RunTS         int64
}

// ParseStorePath reads the store layout at the end of a path (a store
// prefix, or a run directory synced from the store; "/" or the OS
// separator): ok false when the path does not end in that layout.
func ParseStorePath(path string) (StorePath, bool) {
	segs := strings.Split(strings.TrimSuffix(filepath.ToSlash(path), "/"), "/")
	if len(segs) < 5 {
		return StorePath{}, false
	}
	segs = segs[len(segs)-5:]
	date, okD := strings.CutPrefix(segs[2], storeDateKey)
	ts, okT := strings.CutPrefix(segs[3], storeTSKey)
	tag, okG := strings.CutPrefix(segs[4], storeTagKey)
	if segs[0]+"/" != storeRunsDir || segs[1] == "" || !okD || date == "" || !okT || !okG || tag == "" || !allDigits(ts) {
		return StorePath{}, false
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return StorePath{}, false
	}
	return StorePath{TestName: segs[1], Tag: tag, RunTS: n}, true
}

// Prefix is the run's prefix in the store layout (the inverse of
// ParseStorePath): runs/<test_name>/run_date=<date>/run_ts=<run_ts>/run_tag=<tag>/,
// run_date being run_ts's UTC date.
func (p StorePath) Prefix() string {
	return storeRunsDir + p.TestName + "/" + storeDateKey + time.Unix(p.RunTS, 0).UTC().Format(storeDateForm) + "/" +
		storeTSKey + strconv.FormatInt(p.RunTS, 10) + "/" + storeTagKey + p.Tag + "/"
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// Limits of the store catalog.
const (
	storeCacheSize  = 4096 // finished runs kept described
	describeWorkers = 4
	// storeListPage is the entries asked for per list request (gocloud's
	// own default; GCS and S3 return at most 1,000).
	storeListPage = 1000
)

// Store is the results-store catalog on gocloud.dev/blob. Listing reads
// prefixes only; a run's small files are read when the run is described,
// and the description of a finished run (immutable) is cached.
type Store struct {
	bucket *blob.Bucket
	// where is the store URL without credentials or query, for messages.
	where string

	// listPage is the entries asked for per list request (0:
	// storeListPage); tests make it small to page a listing.
	listPage int

	mu    sync.Mutex
	cache fifo[Entry] // finished runs by id
	// read are the rows of finished runs whose stats.jsonl describe read
	// (a run without server_summary.json), kept until Read takes them so
	// that listing then reading a run opens the file once.
	read fifo[artifact.RunRows]
	// rowsRead, when set (OnRowsRead), takes those rows instead of read.
	rowsRead func(Entry, artifact.RunRows)
	// opened counts the objects opened for reading (Opened).
	opened atomic.Int64
}

// Opened is how many stored objects this store has opened for reading
// (listings are not counted): what the stored-run cache saves.
func (s *Store) Opened() int64 { return s.opened.Load() }

// OpenStore opens a results store: file://, gs://, s3://, azblob:// or an
// absolute local path. For the object stores a path after the bucket is the
// store prefix (gs://bucket/benchmarks == gs://bucket?prefix=benchmarks/);
// the layout below it is runs/<test_name>/run_date=…/run_ts=…/run_tag=…/.
func OpenStore(ctx context.Context, rawURL string) (*Store, error) {
	u, where, err := storeURL(rawURL)
	if err != nil {
		return nil, err
	}
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("opening results store %s: %w", where, err)
	}
	return &Store{bucket: b, where: where}, nil
}

// StoreSchemes are the results-store URL schemes OpenStore takes (an
// absolute path is a file:// store); the datasource settings check them too.
func StoreSchemes() []string { return []string{"file", "gs", "s3", "azblob"} }

// storeURL normalises a store URL for blob.OpenBucket and returns a form
// safe for messages.
func storeURL(raw string) (string, string, error) {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "/") {
		raw = "file://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("results store URL: not a URL")
	}
	where := endpoint.Redact(raw)
	switch {
	case u.Scheme == "file":
		return u.String(), where, nil
	case slices.Contains(StoreSchemes(), u.Scheme):
		if p := strings.Trim(u.Path, "/"); p != "" {
			q := u.Query()
			prefix := p + "/"
			if old := q.Get("prefix"); old != "" {
				prefix += old
			}
			q.Set("prefix", prefix)
			u.Path, u.RawPath, u.RawQuery = "", "", q.Encode()
		}
		return u.String(), where, nil
	}
	return "", "", fmt.Errorf("results store URL %s: unsupported scheme %q (want file, gs, s3 or azblob)", where, u.Scheme)
}

// Where is the store URL without credentials, for messages.
func (s *Store) Where() string { return s.where }

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Check lists the runs/ prefix (one page of one entry): the health check's
// "results store listable".
func (s *Store) Check(ctx context.Context) error {
	_, _, err := s.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: storeRunsDir, Delimiter: "/"})
	if err != nil {
		return fmt.Errorf("listing %s in results store %s: %w", storeRunsDir, s.where, err)
	}
	return nil
}

// list returns what lies directly under prefix: the "directories" (names
// without the trailing "/") and the objects.
func (s *Store) list(ctx context.Context, prefix string) (dirs []string, files []File, err error) {
	size := s.listPage
	if size <= 0 {
		size = storeListPage
	}
	opts := &blob.ListOptions{Prefix: prefix, Delimiter: "/"}
	for token := blob.FirstPageToken; ; {
		var objs []*blob.ListObject
		objs, token, err = s.bucket.ListPage(ctx, token, size, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("listing %s in results store %s: %w", prefix, s.where, err)
		}
		for _, obj := range objs {
			name := strings.TrimPrefix(obj.Key, prefix)
			if obj.IsDir {
				dirs = append(dirs, strings.TrimSuffix(name, "/"))
			} else {
				files = append(files, File{Name: name, Size: obj.Size})
			}
		}
		if len(token) == 0 {
			return dirs, files, nil
		}
	}
}

// listDirs returns the names of the "directories" directly under prefix.
func (s *Store) listDirs(ctx context.Context, prefix string) ([]string, error) {
	dirs, _, err := s.list(ctx, prefix)
	return dirs, err
}

// Tests lists the test names, sorted (names that are not valid segments
// are skipped: they could never be addressed by an id).
func (s *Store) Tests(ctx context.Context) ([]string, error) {
	names, err := s.listDirs(ctx, storeRunsDir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if ValidSegment(n) == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// storedRun is one run found by listing, not yet described.
type storedRun struct {
	test, tag string
	ts        int64
	prefix    string // key prefix ending in "/"
}

func (r storedRun) id() string { return StoreRunID(r.test, r.ts, r.tag) }

// List finds the runs passing opts and describes them (newest first).
// run_date prefixes more than a day away from [From, To] are not listed.
func (s *Store) List(ctx context.Context, opts ListOptions) ([]Entry, error) {
	es, _, err := s.ListNewest(ctx, opts, 0)
	return es, err
}

// ListNewest is List reading at most limit runs (0: no bound): the runs are
// found from the store's directory names alone, and only the newest limit
// of them are read. found is how many passed opts.
func (s *Store) ListNewest(ctx context.Context, opts ListOptions, limit int) (entries []Entry, found int, err error) {
	var tests []string
	switch {
	case opts.TestName == "":
		if tests, err = s.Tests(ctx); err != nil {
			return nil, 0, err
		}
	case ValidSegment(opts.TestName) == nil:
		// One test's runs: its directory is listed, not every test's name.
		tests = []string{opts.TestName}
	}
	var all []storedRun
	for _, t := range tests {
		rs, err := s.listTest(ctx, t, opts)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, rs...)
	}
	found = len(all)
	if limit > 0 && found > limit {
		slices.SortStableFunc(all, func(a, b storedRun) int {
			if c := cmp.Compare(b.ts, a.ts); c != 0 {
				return c
			}
			return strings.Compare(a.id(), b.id())
		})
		all = all[:limit]
	}
	entries, err = s.describeAll(ctx, all)
	if err != nil {
		return nil, 0, err
	}
	SortNewestFirst(entries)
	return entries, found, nil
}

// listTest lists one test's runs whose run_ts passes opts.
func (s *Store) listTest(ctx context.Context, test string, opts ListOptions) ([]storedRun, error) {
	testPrefix := storeRunsDir + test + "/"
	dates, err := s.listDirs(ctx, testPrefix)
	if err != nil {
		return nil, err
	}
	var out []storedRun
	for _, d := range dates {
		if !strings.HasPrefix(d, storeDateKey) || !dateMayHold(strings.TrimPrefix(d, storeDateKey), opts.From, opts.To) {
			continue
		}
		rs, err := s.listDate(ctx, test, testPrefix+d+"/", opts)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func (s *Store) listDate(ctx context.Context, test, datePrefix string, opts ListOptions) ([]storedRun, error) {
	tsDirs, err := s.listDirs(ctx, datePrefix)
	if err != nil {
		return nil, err
	}
	var out []storedRun
	for _, d := range tsDirs {
		ts, err := parseUnixSeconds(strings.TrimPrefix(d, storeTSKey))
		if !strings.HasPrefix(d, storeTSKey) || err != nil {
			continue
		}
		if (opts.From != 0 && ts < opts.From) || (opts.To != 0 && ts > opts.To) {
			continue
		}
		tsPrefix := datePrefix + d + "/"
		tags, err := s.listDirs(ctx, tsPrefix)
		if err != nil {
			return nil, err
		}
		for _, tg := range tags {
			tag := strings.TrimPrefix(tg, storeTagKey)
			if !strings.HasPrefix(tg, storeTagKey) || ValidSegment(tag) != nil || (opts.Tag != "" && tag != opts.Tag) {
				continue
			}
			out = append(out, storedRun{test: test, tag: tag, ts: ts, prefix: tsPrefix + tg + "/"})
		}
	}
	return out, nil
}

// dateMayHold reports whether a run_date directory can hold a run starting
// in [from, to]. A day of slack on each side covers an orchestrator that
// dates runs in local time; an unparsable date is always listed.
func dateMayHold(date string, from, to int64) bool {
	d, err := time.Parse(storeDateForm, date)
	if err != nil {
		return true
	}
	dayStart := d.Unix()
	const day = 24 * 3600
	if from != 0 && dayStart+2*day <= from {
		return false
	}
	if to != 0 && dayStart-day > to {
		return false
	}
	return true
}

// Get describes the run named by a store id. The run_date directory is
// computed from run_ts (UTC) first; if the run is not there every date of
// the test is searched.
func (s *Store) Get(ctx context.Context, id RunID) (Entry, error) {
	if id.Kind != KindStore {
		return Entry{}, fmt.Errorf("%w %q: not a results-store id", ErrInvalidRunID, id)
	}
	if e, ok := s.cached(id.String()); ok {
		return e, nil
	}
	testPrefix := storeRunsDir + id.TestName + "/"
	tsPart := storeTSKey + strconv.FormatInt(id.RunTS, 10) + "/" + storeTagKey + id.Tag + "/"
	guess := StorePath{TestName: id.TestName, Tag: id.Tag, RunTS: id.RunTS}.Prefix()
	run := storedRun{test: id.TestName, tag: id.Tag, ts: id.RunTS}
	ok, err := s.hasObjects(ctx, guess)
	if err != nil {
		return Entry{}, err
	}
	if ok {
		run.prefix = guess
	} else {
		dates, err := s.listDirs(ctx, testPrefix)
		if err != nil {
			return Entry{}, err
		}
		for _, d := range dates {
			p := testPrefix + d + "/" + tsPart
			if ok, err := s.hasObjects(ctx, p); err != nil {
				return Entry{}, err
			} else if ok {
				run.prefix = p
				break
			}
		}
	}
	if run.prefix == "" {
		return Entry{}, fmt.Errorf("run %s: %w in results store %s", id, ErrRunNotFound, s.where)
	}
	return s.describe(ctx, run)
}

func (s *Store) hasObjects(ctx context.Context, prefix string) (bool, error) {
	objs, _, err := s.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: prefix})
	if err != nil {
		return false, fmt.Errorf("listing %s in results store %s: %w", prefix, s.where, err)
	}
	return len(objs) > 0, nil
}

// Latest is the stored run with the largest run_ts (of testName when not
// empty). Only the two newest run_date directories of each test are
// listed.
func (s *Store) Latest(ctx context.Context, testName string) (Entry, error) {
	tests, err := s.Tests(ctx)
	if err != nil {
		return Entry{}, err
	}
	var best *storedRun
	for _, t := range tests {
		if testName != "" && t != testName {
			continue
		}
		testPrefix := storeRunsDir + t + "/"
		dates, err := s.listDirs(ctx, testPrefix)
		if err != nil {
			return Entry{}, err
		}
		dates = slices.DeleteFunc(dates, func(d string) bool { return !strings.HasPrefix(d, storeDateKey) })
		slices.Sort(dates)
		for _, d := range dates[max(0, len(dates)-2):] {
			rs, err := s.listDate(ctx, t, testPrefix+d+"/", ListOptions{})
			if err != nil {
				return Entry{}, err
			}
			for _, r := range rs {
				if best == nil || r.ts > best.ts || (r.ts == best.ts && r.id() > best.id()) {
					r := r
					best = &r
				}
			}
		}
	}
	if best == nil {
		return Entry{}, fmt.Errorf("latest run: %w in results store %s", ErrRunNotFound, s.where)
	}
	return s.describe(ctx, *best)
}

func (s *Store) describeAll(ctx context.Context, found []storedRun) ([]Entry, error) {
	out := make([]Entry, len(found))
	errs := make([]error, len(found))
	sem := make(chan struct{}, describeWorkers)
	var wg sync.WaitGroup
	for i, r := range found {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = s.describe(ctx, r)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) cached(id string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.cache.m[id]
	return e, ok
}

func (s *Store) remember(e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.put(e.ID, e)
}

// fifo is a map of at most storeCacheSize values by id that forgets the
// oldest put first; the Store's mutex guards it.
type fifo[V any] struct {
	m     map[string]V
	order []string // insertion order, for eviction
}

// put keeps v under id unless id is already kept.
func (f *fifo[V]) put(id string, v V) {
	if _, ok := f.m[id]; ok {
		return
	}
	if f.m == nil {
		f.m = map[string]V{}
	}
	if len(f.order) >= storeCacheSize {
		delete(f.m, f.order[0])
		f.order = f.order[1:]
	}
	f.m[id] = v
	f.order = append(f.order, id)
}

// take returns and forgets the value kept under id.
func (f *fifo[V]) take(id string) (V, bool) {
	v, ok := f.m[id]
	if ok {
		delete(f.m, id)
		f.order = slices.DeleteFunc(f.order, func(x string) bool { return x == id })
	}
	return v, ok
}

// describe reads what a run's listing row needs: its file names, status.json,
// the window from server_summary.json metadata, else the last trial_summary
// row of stats.jsonl, else stats_history.csv, and the peak user count.
// A run with server_summary.json, a trial_summary row or status.json has
// finished (the orchestrator uploads those last); its description is cached.
func (s *Store) describe(ctx context.Context, r storedRun) (Entry, error) {
	id := r.id()
	if e, ok := s.cached(id); ok {
		return e, nil
	}
	e, err := s.describeFiles(ctx, r)
	if err != nil {
		return Entry{}, err
	}
	finished := s.describeStatus(ctx, r, &e)
	hist := s.describeHistory(ctx, r, &e)
	rows, ended := s.describeWindow(ctx, r, &e, hist)
	if finished || ended {
		s.keepFinished(e, rows)
	}
	return e, nil
}

// describeFiles is a run's entry from its place in the store and its file
// names, before any file is read.
func (s *Store) describeFiles(ctx context.Context, r storedRun) (Entry, error) {
	e := Entry{
		Run: Run{ID: r.id(), TestName: r.test, Tag: r.tag, Start: r.ts, End: r.ts,
			SteadyStart: r.ts, SteadyEnd: r.ts, StorePath: r.prefix},
		Source: SourceStore,
	}
	_, files, err := s.list(ctx, r.prefix)
	if err != nil {
		return Entry{}, err
	}
	e.Files = files
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	e.Artifacts = ArtifactsFromNames(names)
	return e, nil
}

// addProblem notes an artifact that could not be read.
func (e *Entry) addProblem(name string, err error) {
	e.Problems = append(e.Problems, fmt.Sprintf("%s: %v", name, err))
}

// describeStatus reads status.json into e; a run with one has finished.
func (s *Store) describeStatus(ctx context.Context, r storedRun, e *Entry) (finished bool) {
	if !e.Artifacts.Status {
		return false
	}
	st, err := withReader(ctx, s, r.prefix+FileStatus, func(rd io.Reader) (Status, error) { return ReadStatus(rd) })
	if err != nil {
		e.addProblem(FileStatus, err)
	} else {
		e.ExitCode = st.LocustExitCode
	}
	return true
}

// describeHistory reads stats_history.csv (nil: absent or unreadable).
func (s *Store) describeHistory(ctx context.Context, r storedRun, e *Entry) *History {
	if !e.Artifacts.StatsHistory {
		return nil
	}
	h, err := withReader(ctx, s, r.prefix+FileStatsHistory, func(rd io.Reader) (History, error) { return ReadHistory(rd) })
	if err != nil {
		e.addProblem(FileStatsHistory, err)
		return nil
	}
	return &h
}

// describeWindow resolves the window (ResolveWindow, RuleStoredRun):
// server_summary.json metadata, else the last trial_summary row (stats.jsonl
// is read only then), else the last stats_history.csv timestamp. It returns
// the rows of stats.jsonl when they were read and taken, and whether the
// window came from an artifact the orchestrator uploads last.
func (s *Store) describeWindow(ctx context.Context, r storedRun, e *Entry, hist *History) (*artifact.RunRows, bool) {
	in := WindowInputs{Rule: RuleStoredRun, RunTS: r.ts, History: hist}
	var summaryErr, trialErr error
	if e.Artifacts.ServerSummary {
		m, err := withReader(ctx, s, r.prefix+FileServerSummary, PeekServerSummaryMeta)
		if err != nil {
			summaryErr = err
		} else {
			in.Summary, e.RowKey = &m, m.RowKey()
		}
	}
	var rows *artifact.RunRows
	if e.Artifacts.StatsJSONL {
		in.Trial = func() *Recorded {
			tr, err := withReader(ctx, s, r.prefix+FileStatsJSONL, readTrialRows)
			if err != nil {
				trialErr = err
				return nil
			}
			if tr.ok {
				rows = &tr.rows
			}
			return &tr.rec
		}
	}
	w, _ := ResolveWindow(in) // RuleStoredRun describes every run
	switch {
	case summaryErr != nil:
		e.addProblem(FileServerSummary, summaryErr)
	case in.Summary != nil && w.EndFrom != FromSummary:
		e.addProblem(FileServerSummary, errors.New("metadata lacks a usable end_ts/steady window"))
	}
	if trialErr != nil {
		e.addProblem(FileStatsJSONL, trialErr)
	}
	e.End, e.EndKnown, e.WindowFrom = w.End, w.EndKnown, storedWindowFrom(w.EndFrom)
	e.SteadyStart, e.SteadyEnd, e.SteadyFromSamples, e.SteadyWhy = w.Steady.Start, w.Steady.End, w.Steady.FromSamples, w.Steady.Why
	e.PeakUsers = w.PeakUsers
	return rows, w.EndFrom == FromSummary || w.EndFrom == FromTrial
}

// keepFinished caches a finished run's description and hands on the rows
// of stats.jsonl read for its window (a run with a row key is read by it
// instead).
func (s *Store) keepFinished(e Entry, rows *artifact.RunRows) {
	s.remember(e)
	if rows != nil && e.RowKey == nil {
		if s.rowsRead != nil {
			s.rowsRead(e, *rows)
		} else {
			s.keepRead(e.ID, *rows)
		}
	}
}

// trialRows are a stats.jsonl read once for both the trial window and the
// run's rows (what Read would take with no row key).
type trialRows struct {
	rec  Recorded
	rows artifact.RunRows
	ok   bool // rows were taken (the file is within MaxStoredFile)
}

func readTrialRows(r io.Reader) (trialRows, error) {
	var (
		out trialRows
		fam []artifact.Row
	)
	cr := &countingReader{r: r}
	err := artifact.ScanRows(cr, func(l artifact.Line) error {
		if l.Row == nil {
			return nil
		}
		if rec, ok := trialWindow(l.Row); ok {
			out.rec = rec
		}
		if artifact.FamilyOf(l.Row.Metric) != artifact.FamilyNone {
			fam = append(fam, *l.Row)
		}
		return nil
	})
	if err != nil {
		return trialRows{}, fmt.Errorf("reading %s: %w", FileStatsJSONL, err)
	}
	if cr.n <= MaxStoredFile { // a larger file is Read's to refuse
		out.rows = artifact.SelectRunRows(nil, fam)
		out.ok = true
	}
	return out, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// keepRead keeps the rows describe read of a finished run until Read
// takes them.
func (s *Store) keepRead(id string, rows artifact.RunRows) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read.put(id, rows)
}

// OnRowsRead hands the rows of a finished run whose stats.jsonl a
// description read (a run without server_summary.json) to f instead of
// keeping them until Read takes them: a caller with a cache of its own
// (the datasource's stored-run cache) keeps them there, under its one
// bound, so that listing then reading a run opens the file once and no
// second holder of rows exists. Set it before the store is used.
func (s *Store) OnRowsRead(f func(Entry, artifact.RunRows)) { s.rowsRead = f }

// takeRead returns (and forgets) the rows describe read of run id.
func (s *Store) takeRead(id string) (artifact.RunRows, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read.take(id)
}

// storedWindowFrom is Entry.WindowFrom of a stored run: where its end
// and steady window came from.
func storedWindowFrom(from WindowSource) string {
	switch from {
	case FromSummary:
		return FileServerSummary + " metadata"
	case FromTrial:
		return "the trial_summary row of " + FileStatsJSONL
	case FromHistory:
		return "the last " + FileStatsHistory + " timestamp"
	}
	return "unknown: no server_summary.json, trial_summary row or stats_history.csv timestamp"
}

// OpenFile streams one file of a stored run; the caller closes it.
func (s *Store) OpenFile(ctx context.Context, e Entry, name string) (io.ReadCloser, error) {
	if e.Source != SourceStore || e.StorePath == "" {
		return nil, fmt.Errorf("run %s is not in the results store", e.ID)
	}
	if err := ValidSegment(name); err != nil {
		return nil, fmt.Errorf("file name %q: %w", name, err)
	}
	s.opened.Add(1)
	r, err := s.bucket.NewReader(ctx, e.StorePath+name, nil)
	if err != nil {
		return nil, s.readErr(e.StorePath+name, err)
	}
	return r, nil
}

func (s *Store) readErr(key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("reading %s from results store %s: not found", key, s.where)
	}
	return fmt.Errorf("reading %s from results store %s: %w", key, s.where, err)
}

// withReader opens key and hands the stream to f.
func withReader[T any](ctx context.Context, s *Store, key string, f func(io.Reader) (T, error)) (T, error) {
	var zero T
	s.opened.Add(1)
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return zero, s.readErr(key, err)
	}
	defer r.Close()
	v, err := f(r)
	if err != nil {
		return zero, fmt.Errorf("reading %s from results store %s: %w", key, s.where, err)
	}
	return v, nil
}

// ReadTestFile reads a file kept beside a test's runs
// (runs/<test_name>/<name>, e.g. acks.yaml), at most limit bytes. A file
// that does not exist gives nil and no error.
func (s *Store) ReadTestFile(ctx context.Context, testName, name string, limit int64) ([]byte, error) {
	if err := ValidSegment(testName); err != nil {
		return nil, fmt.Errorf("test name %q: %w", testName, err)
	}
	if err := ValidSegment(name); err != nil {
		return nil, fmt.Errorf("file name %q: %w", name, err)
	}
	key := storeRunsDir + testName + "/" + name
	s.opened.Add(1)
	r, err := s.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, s.readErr(key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s from results store %s: %w", key, s.where, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s in results store %s: larger than %d bytes", key, s.where, limit)
	}
	return b, nil
}
