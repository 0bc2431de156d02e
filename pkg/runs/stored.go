package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/substrate/density/pkg/artifact"
)

// Part is a part of a stored run the reader reads (a panel reads only
// what it shows: the Runs over time trend reads stats.jsonl alone, never
// the time series of server_summary.json or psi_series.json).
type Part uint8

// The parts of a stored run.
const (
	PartSummary Part = 1 << iota // server_summary.json
	PartPSI                      // psi_series.json
	PartRows                     // stats.jsonl: the run's row sets
	PartNotices                  // notices.json
	PartAll     = PartSummary | PartPSI | PartRows | PartNotices
)

// MaxStoredFile bounds what is read of one stored artifact.
const MaxStoredFile = 256 << 20

// SourceDir is Entry.Source of a run read from a run directory (Dir).
const SourceDir = "dir"

// ProblemKind says what was wrong with a stored run's file.
type ProblemKind int

// The kinds of FileProblem.
const (
	// Unreadable: the file is listed but could not be read (I/O, access,
	// larger than MaxStoredFile, gone since the listing).
	Unreadable ProblemKind = iota + 1
	// Malformed: the file was read but does not parse as its artifact.
	Malformed
)

// FileProblem is one file of a stored run that exists but could not be
// used. A file the run does not have is no problem: Entry.Artifacts says
// which it has.
type FileProblem struct {
	File string // FileServerSummary, FilePSISeries, FileStatsJSONL or FileNotices
	Kind ProblemKind
	Err  error
}

func (p *FileProblem) Error() string {
	what := "could not be read"
	if p.Kind == Malformed {
		what = "does not parse"
	}
	return fmt.Sprintf("%s %s: %v", p.File, what, p.Err)
}

func (p *FileProblem) Unwrap() error { return p.Err }

// Stored is a stored run read as one value (design.md "A run is a value"):
// its entry, server summary, PSI series and row sets. A part that was not
// asked for, or that the run does not have, or that has a problem, is
// zero.
type Stored struct {
	Entry   Entry
	Summary *artifact.StoredSummary
	PSI     *artifact.PSISeries
	// Rows are the run's rows of stats.jsonl by the one row rule
	// (artifact.SelectRunRows), taken by Entry.RowKey.
	Rows artifact.RunRows
	// Notices are notices.json's entries: why each null field is null.
	// NoticesRecorded is false for a run without a readable notices.json
	// (written before the export kept its notices): nothing says why.
	Notices         []artifact.Notice
	NoticesRecorded bool
	Problems        []*FileProblem
}

// Problem is the problem of one file (nil: none).
func (s *Stored) Problem(file string) *FileProblem {
	for _, p := range s.Problems {
		if p.File == file {
			return p
		}
	}
	return nil
}

// opener opens one file of a run by name.
type opener func(ctx context.Context, name string) (io.ReadCloser, error)

// Find resolves "latest" (the newest run, of testName when not empty) or a
// store run id. A malformed id wraps ErrInvalidRunID, an unknown one
// ErrRunNotFound.
func (s *Store) Find(ctx context.Context, id, testName string) (Entry, error) {
	if id == IDLatest {
		return s.Latest(ctx, testName)
	}
	rid, err := ParseRunID(id)
	if err != nil {
		return Entry{}, fmt.Errorf("%q: %w", id, err)
	}
	return s.Get(ctx, rid)
}

// Run reads the parts of the run named id ("latest" or a store run id,
// see Find).
func (s *Store) Run(ctx context.Context, id string, parts Part) (*Stored, error) {
	e, err := s.Find(ctx, id, "")
	if err != nil {
		return nil, err
	}
	return s.Read(ctx, e, parts), nil
}

// Read reads the parts of a run the store described. The rows of a
// finished run whose stats.jsonl the description already read (a run
// without server_summary.json) are taken from that read, not read again,
// unless OnRowsRead took them.
func (s *Store) Read(ctx context.Context, e Entry, parts Part) *Stored {
	var (
		rows  artifact.RunRows
		taken bool
	)
	if parts&PartRows != 0 && e.RowKey == nil && e.Source == SourceStore && e.Artifacts.StatsJSONL {
		if rows, taken = s.takeRead(e.ID); taken {
			parts &^= PartRows
		}
	}
	st := read(ctx, e, parts, func(ctx context.Context, name string) (io.ReadCloser, error) {
		return s.OpenFile(ctx, e, name)
	})
	if taken {
		st.Rows = rows
	}
	return st
}

// Dir reads the parts of the run directory path. Its entry has the
// directory's files, the store layout's test name, tag and run_ts when the
// path has that layout (a directory synced from the store), else what
// server_summary.json's metadata recorded. The error is a directory that
// cannot be listed.
func Dir(path string, parts Part) (*Stored, error) {
	return readDir(path, parts, func(_ context.Context, name string) (io.ReadCloser, error) {
		// The run directory is the operator's; the name is one of ours,
		// never read through a symbolic link (export.md).
		return artifact.OpenNoFollow(filepath.Join(path, name))
	})
}

// readDir is Dir with the run's files opened by open. Each file is opened
// at most once: when the summary is asked for, server_summary.json is read
// whole once, its metadata peeked from those bytes and the same bytes
// parsed as the summary.
func readDir(path string, parts Part, open opener) (*Stored, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("run directory %s: %w", path, err)
	}
	names := make([]string, 0, len(des))
	for _, de := range des {
		if !de.IsDir() {
			names = append(names, de.Name())
		}
	}
	e := Entry{Run: Run{ID: path, Dir: path, Artifacts: ArtifactsFromNames(names)}, Source: SourceDir}
	ctx := context.Background()
	var peekProblem *FileProblem
	if e.Artifacts.ServerSummary {
		var rec Recorded
		rec, open, peekProblem = peekDirSummary(ctx, open, parts)
		e.RowKey = rec.RowKey()
		if rec.TestName != nil {
			e.TestName = *rec.TestName
		}
		if rec.Tag != nil {
			e.Tag = *rec.Tag
		}
		if rec.Start != nil {
			e.Start = *rec.Start
		}
	}
	if l, ok := ParseStorePath(path); ok {
		e.TestName, e.Tag, e.Start = l.TestName, l.Tag, l.RunTS
	}
	st := read(ctx, e, parts, open)
	if peekProblem != nil {
		st.Problems = append(st.Problems, peekProblem)
	}
	return st, nil
}

// peekDirSummary reads server_summary.json's metadata. With PartSummary
// the file is read whole once and the returned opener serves those bytes
// to the summary's read (which reports a failed read as its problem; the
// bytes read before it still tell the metadata, which comes first);
// otherwise only the metadata is read, and a failure is the problem.
func peekDirSummary(ctx context.Context, open opener, parts Part) (Recorded, opener, *FileProblem) {
	if parts&PartSummary != 0 {
		b, readErr := readFile(ctx, open, FileServerSummary)
		rec, _ := PeekServerSummaryMeta(bytes.NewReader(b))
		return rec, servedOpener(open, FileServerSummary, b, readErr), nil
	}
	rc, err := open(ctx, FileServerSummary)
	var rec Recorded
	if err == nil {
		rec, err = PeekServerSummaryMeta(rc)
		_ = rc.Close()
	}
	if err != nil {
		return rec, open, &FileProblem{File: FileServerSummary, Kind: Unreadable, Err: err}
	}
	return rec, open, nil
}

// servedOpener is open with the file name served from b (or failing with
// readErr, the error of reading it) instead of opened again.
func servedOpener(open opener, name string, b []byte, readErr error) opener {
	return func(ctx context.Context, n string) (io.ReadCloser, error) {
		if n != name {
			return open(ctx, n)
		}
		if readErr != nil {
			return nil, readErr
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

// read reads the asked parts the run has.
func read(ctx context.Context, e Entry, parts Part, open opener) *Stored {
	st := &Stored{Entry: e}
	a := e.Artifacts
	if parts&PartSummary != 0 && a.ServerSummary {
		st.Summary = readDoc(ctx, st, open, FileServerSummary, artifact.ReadServerSummary)
	}
	if parts&PartPSI != 0 && a.PSISeries {
		st.PSI = readDoc(ctx, st, open, FilePSISeries, artifact.ReadPSISeries)
	}
	if parts&PartNotices != 0 && a.Notices {
		if ns := readDoc(ctx, st, open, FileNotices, readNotices); ns != nil {
			st.Notices, st.NoticesRecorded = *ns, true
		}
	}
	if parts&PartRows != 0 && a.StatsJSONL {
		rc, err := open(ctx, FileStatsJSONL)
		if err == nil {
			lr := &limitedReader{r: rc, left: MaxStoredFile}
			st.Rows, err = artifact.ReadRunRows(lr, e.RowKey)
			_ = rc.Close()
		}
		if err != nil {
			st.Problems = append(st.Problems, &FileProblem{File: FileStatsJSONL, Kind: Unreadable, Err: err})
		}
	}
	return st
}

// readDoc reads and parses one whole artifact; nil with a problem when it
// cannot.
func readDoc[T any](ctx context.Context, st *Stored, open opener, name string, parse func([]byte) (*T, error)) *T {
	b, err := readFile(ctx, open, name)
	if err != nil {
		st.Problems = append(st.Problems, &FileProblem{File: name, Kind: Unreadable, Err: err})
		return nil
	}
	v, err := parse(b)
	if err != nil {
		st.Problems = append(st.Problems, &FileProblem{File: name, Kind: Malformed, Err: err})
		return nil
	}
	return v
}

// readFile reads one whole artifact, at most MaxStoredFile bytes. On an
// error the bytes are those read before it.
func readFile(ctx context.Context, open opener, name string) ([]byte, error) {
	rc, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(&limitedReader{r: rc, left: MaxStoredFile})
	_ = rc.Close()
	return b, err
}

// readNotices is artifact.ReadNotices shaped for readDoc.
func readNotices(b []byte) (*[]artifact.Notice, error) {
	ns, err := artifact.ReadNotices(b)
	if err != nil {
		return nil, err
	}
	return &ns, nil
}

// ErrTooLarge is wrapped when a stored artifact is larger than
// MaxStoredFile.
var ErrTooLarge = errors.New("larger than the stored-artifact limit")

// limitedReader reads at most left bytes and fails beyond.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, MaxStoredFile)
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, fmt.Errorf("%w (%d bytes)", ErrTooLarge, MaxStoredFile)
	}
	return n, err
}
