package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// The demo store: a month of nightly runs of two tests written from the
// demo export's artifacts (the template), values varied per run.
const (
	// StoreTest is the test with two cohorts (gVisor and microVM nodes)
	// and two planted regressions.
	StoreTest = "actor-density"
	// StoreChurnTest is the second test: one cohort, an improvement
	// (checkpoint_p*_s −20 %) from ImprovementNight on.
	StoreChurnTest = "snapshot-churn"
	// StoreNights is how many nightly runs each series has.
	StoreNights = 30
	// RegressionNight is the first gVisor run with slower restores
	// (restore_p*_s +40 %): the unacknowledged regression, among the newest
	// --min-runs (3) runs of its cohort, so `density regressions` exits 4.
	RegressionNight = StoreNights - 3
	// AckedNight is the first microVM run with larger snapshots at the tail
	// (snapshot_size_p99_mb +25 %): a regression as recent, acknowledged.
	AckedNight = StoreNights - 3
	// ImprovementNight is the first faster-checkpoint snapshot-churn run.
	ImprovementNight = 10
	// RegressionKey and AckedKey are the planted regressions' keys.
	RegressionKey = "restore_p99_s"
	AckedKey      = "snapshot_size_p99_mb"
)

// StoreRun is one run written into the demo store.
type StoreRun struct {
	ID, TestName, Tag, Sandbox string
	Start                      int64
	Dir                        string
}

// Store is what WriteStore wrote.
type Store struct {
	Root string // the store's directory
	URL  string // file://Root
	Runs []StoreRun
}

// Newest returns the newest run of a test and sandbox class.
func (s *Store) Newest(testName, sandbox string) (StoreRun, bool) {
	var out StoreRun
	found := false
	for _, r := range s.Runs {
		if r.TestName == testName && r.Sandbox == sandbox && (!found || r.Start > out.Start) {
			out, found = r, true
		}
	}
	return out, found
}

// Series is one cohort of nightly runs.
type Series struct {
	Test, Sandbox string
	Hour          int64   // UTC hour of the nightly start
	Seed          uint64  // noise stream
	Scale         float64 // cohort level relative to the template
}

// Template is a run's artifacts that stored runs are written from: its
// server_summary.json, its stats.jsonl rows other than server_summary
// (trial, ladder, phase, Locust rows as it has them) and its psi_series.json.
type Template struct {
	summary *artifact.StoredSummary
	rows    []artifact.Row
	psi     []byte
}

// ReadTemplate reads the template run in dir.
func ReadTemplate(dir string) (*Template, error) {
	sumData, err := os.ReadFile(filepath.Join(dir, runs.FileServerSummary)) // #nosec G304 -- a fixed artifact name inside the run the caller named
	if err != nil {
		return nil, fmt.Errorf("reading the template run: %w", err)
	}
	tmpl, err := artifact.ReadServerSummary(sumData)
	if err != nil {
		return nil, fmt.Errorf("reading the template run: %w", err)
	}
	jsonl, err := os.ReadFile(filepath.Join(dir, runs.FileStatsJSONL)) // #nosec G304 -- a fixed artifact name inside the run the caller named
	if err != nil {
		return nil, fmt.Errorf("reading the template run: %w", err)
	}
	lines, err := artifact.ReadRows(bytes.NewReader(jsonl))
	if err != nil {
		return nil, fmt.Errorf("reading the template's stats.jsonl: %w", err)
	}
	var rows []artifact.Row
	for _, l := range lines {
		if l.Err == nil && l.Row != nil && l.Row.Metric != artifact.MetricServerSummary {
			rows = append(rows, *l.Row)
		}
	}
	psi, err := os.ReadFile(filepath.Join(dir, runs.FilePSISeries)) // #nosec G304 -- a fixed artifact name inside the run the caller named
	if err != nil {
		return nil, fmt.Errorf("reading the template run: %w", err)
	}
	return &Template{summary: tmpl, rows: rows, psi: psi}, nil
}

// WriteStore writes the demo store into root (replacing its runs/) from the
// demo export's artifacts in templateDir: nightly runs over the 30 nights
// before now, per series. The runs' values are the template's, scaled per
// cohort, with ±1 % deterministic noise and the planted steps. The demo run
// itself is stored too, and the exported ladder run in ladderDir unless it
// is empty.
func WriteStore(templateDir, ladderDir, root string, now time.Time) (*Store, error) {
	tmpl, err := ReadTemplate(templateDir)
	if err != nil {
		return nil, fmt.Errorf("%w (run `mage demo` first)", err)
	}
	if err := os.RemoveAll(filepath.Join(root, "runs")); err != nil {
		return nil, fmt.Errorf("clearing the demo store: %w", err)
	}
	st := &Store{Root: root, URL: "file://" + root}
	last := now.UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour).Unix() // last night, 00:00 UTC
	for _, s := range []Series{
		{StoreTest, "gvisor", 2, 1, 1},
		{StoreTest, "microvm", 3, 2, 0.93},
		{StoreChurnTest, "gvisor", 4, 3, 1.05},
	} {
		for n := range StoreNights {
			start := last - int64(StoreNights-1-n)*86400 + s.Hour*3600
			r, err := tmpl.WriteRun(root, s, n, start, atomicWrite)
			if err != nil {
				return nil, err
			}
			st.Runs = append(st.Runs, r)
		}
	}
	// The demo run itself, as exported: the run the Prometheus of `mage
	// demoServe` and the compose stack holds, for the run overview.
	tr, err := copyTemplate(templateDir, root, tmpl.summary.Meta)
	if err != nil {
		return nil, err
	}
	st.Runs = append(st.Runs, tr)
	if ladderDir != "" {
		sum, err := os.ReadFile(filepath.Join(ladderDir, runs.FileServerSummary)) // #nosec G304 -- a fixed artifact name inside the ladder run the demo wrote
		if err != nil {
			return nil, fmt.Errorf("reading the ladder run: %w", err)
		}
		lt, err := artifact.ReadServerSummary(sum)
		if err != nil {
			return nil, fmt.Errorf("reading the ladder run: %w", err)
		}
		lr, err := copyTemplate(ladderDir, root, lt.Meta)
		if err != nil {
			return nil, err
		}
		st.Runs = append(st.Runs, lr)
	}
	// The microVM snapshot growth was expected (a larger guest image):
	// acknowledged.
	var acked StoreRun
	for _, r := range st.Runs {
		if r.TestName == StoreTest && r.Sandbox == "microvm" && r.Start >= last-int64(StoreNights-1-AckedNight)*86400 {
			acked = r
			break
		}
	}
	acks := fmt.Sprintf("- key: %s\n  run: %s\n  reason: expected, the microVM guest image grew\n", AckedKey, acked.ID)
	if err := artifact.WriteFileAtomic(filepath.Join(root, "runs", StoreTest, "acks.yaml"), []byte(acks), 0o644); err != nil {
		return nil, fmt.Errorf("writing acks.yaml: %w", err)
	}
	return st, nil
}

// copyTemplate stores the template run's artifacts as they are.
func copyTemplate(templateDir, root string, md artifact.ServerMetadata) (StoreRun, error) {
	dir := filepath.Join(root, filepath.FromSlash(runs.StorePath{TestName: md.TestName, Tag: md.Tag, RunTS: md.Start}.Prefix()))
	if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- a results store is for others to read, like the export's artifacts
		return StoreRun{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, name := range []string{runs.FileServerSummary, runs.FileStatsJSONL, runs.FilePSISeries, runs.FileNotices, runs.FileStatsHistory, runs.FileStats, runs.FileLogs} {
		b, err := os.ReadFile(filepath.Join(templateDir, name)) // #nosec G304 -- a fixed artifact name inside the demo run the caller named
		if errors.Is(err, fs.ErrNotExist) && name != runs.FileServerSummary && name != runs.FileStatsJSONL {
			continue
		}
		if err != nil {
			return StoreRun{}, fmt.Errorf("reading %s: %w", templateDir, err)
		}
		if err := artifact.WriteFileAtomic(filepath.Join(dir, name), b, 0o644); err != nil {
			return StoreRun{}, fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return StoreRun{ID: runs.StoreRunID(md.TestName, md.Start, md.Tag), TestName: md.TestName, Tag: md.Tag, Start: md.Start, Dir: dir}, nil
}

// WriteFunc writes one artifact file.
type WriteFunc func(path string, data []byte) error

// atomicWrite is how the demo store writes: each file whole or not at all.
func atomicWrite(path string, data []byte) error {
	return artifact.WriteFileAtomic(path, data, 0o644)
}

// PlainWrite writes a file without the atomic rename and sync, for a
// fixture of many runs in a temporary directory.
func PlainWrite(path string, data []byte) error {
	return os.WriteFile(path, data, 0o644) // #nosec G306 G703 -- a results store is for others to read; the path is built from the caller's own directory
}

// WriteRun writes night n of series s, starting at start, into the store
// at root: the template's artifacts with the run's identity, window and
// values (±1 % noise from the series' seed and the night; the demo store's
// planted steps for its series).
func (t *Template) WriteRun(root string, s Series, n int, start int64, write WriteFunc) (StoreRun, error) {
	tmpl, rows, psi := t.summary, t.rows, t.psi
	night := uint64(n) // #nosec G115 -- n is a night index, never negative
	tag := fmt.Sprintf("%07x", (0xd000000+night*0x1f3+s.Seed*0x10000)&0xfffffff)
	shift := start - tmpl.Meta.Start
	md := tmpl.Meta
	md.TestName, md.Tag, md.PromURL = s.Test, tag, ""
	md.Start, md.End = md.Start+shift, md.End+shift
	md.SteadyStart, md.SteadyEnd = md.SteadyStart+shift, md.SteadyEnd+shift

	noise := func(k uint64) float64 { return 1 + 0.01*(2*unit(s.Seed*1_000_003+night*7919+k)-1) }
	packing := s.Scale * noise(1)
	restore, checkpoint, sizeP99 := noise(2)/s.Scale, noise(3), noise(6)
	switch {
	case s.Test == StoreTest && s.Sandbox == "gvisor" && n >= RegressionNight:
		restore *= 1.4
	case s.Test == StoreTest && s.Sandbox == "microvm" && n >= AckedNight:
		sizeP99 *= 1.25
	case s.Test == StoreChurnTest && n >= ImprovementNight:
		checkpoint *= 0.8
	}
	r := *tmpl.Result
	r.Packing.Summary = scaleSummary(r.Packing.Summary, packing, true)
	r.Packing.Timeseries = shiftPacking(r.Packing.Timeseries, shift, packing)
	r.ActiveActors.Summary = scaleSummary(r.ActiveActors.Summary, packing, false)
	r.ActiveActors.Timeseries = shiftActors(r.ActiveActors.Timeseries, shift, packing)
	snap := r.Snapshots
	for _, p := range []**float64{&snap.RestoreP50S, &snap.RestoreP90S, &snap.RestoreP95S, &snap.RestoreP99S, &snap.RestoreMeanS} {
		*p = scaled(*p, restore, 4)
	}
	for _, p := range []**float64{&snap.CheckpointP50S, &snap.CheckpointP90S, &snap.CheckpointP95S, &snap.CheckpointP99S, &snap.CheckpointMeanS} {
		*p = scaled(*p, checkpoint, 4)
	}
	snap.SizeP99MB = scaled(snap.SizeP99MB, sizeP99, 2)
	r.Snapshots = snap
	ws := r.WorkingSet
	for _, b := range []*harvest.WSBlock{&ws.Node, &ws.Worker, &ws.Atelet, &ws.Actor, &ws.PerActor} {
		b.Summary = scaleSummary(b.Summary, noise(4), false)
		b.Timeseries = shiftWS(b.Timeseries, shift)
	}
	r.WorkingSet = ws

	dir := filepath.Join(root, filepath.FromSlash(runs.StorePath{TestName: s.Test, Tag: tag, RunTS: start}.Prefix()))
	if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- a results store is for others to read, like the export's artifacts
		return StoreRun{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	sum, err := artifact.ServerSummaryJSON(md, &r)
	if err != nil {
		return StoreRun{}, fmt.Errorf("encoding server_summary.json: %w", err)
	}
	out := []artifact.Row{artifact.ServerSummaryRow(md, &r)}
	for _, row := range rows {
		row.Timestamp, row.Tag, row.TestName = artifact.DataTimestamp(start), tag, s.Test
		row.Measurements = varyRow(row, s, shift, packing, noise(5))
		out = append(out, row)
	}
	jsonl, err := artifact.EncodeRows(out)
	if err != nil {
		return StoreRun{}, fmt.Errorf("encoding %s: %w", runs.FileStatsJSONL, err)
	}
	for name, data := range map[string][]byte{
		runs.FileServerSummary: sum, runs.FileStatsJSONL: jsonl, runs.FilePSISeries: psi,
		runs.FileStatus: []byte(`{"locust_exit_code": 0, "stats_generated": true}` + "\n"),
	} {
		if err := write(filepath.Join(dir, name), data); err != nil {
			return StoreRun{}, fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return StoreRun{ID: runs.StoreRunID(s.Test, start, tag), TestName: s.Test, Tag: tag, Sandbox: s.Sandbox, Start: start, Dir: dir}, nil
}

// varyRow is a template row for this run: the trial_summary with the
// cohort's sandbox class, the run's window and frontiers scaled with
// packing; other rows' numbers with the run's noise.
func varyRow(row artifact.Row, s Series, shift int64, packing, noise float64) artifact.Object {
	m := make(artifact.Object, len(row.Measurements))
	for i, f := range row.Measurements {
		m[i] = f
		text, ok := measurementText(f.Value)
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(text, 64)
		if row.Metric != artifact.MetricTrialSummary {
			if err == nil {
				m[i].Value = artifact.FormatFloat(round(x*noise, 4))
			}
			continue
		}
		switch {
		case f.Key == "sandbox_class":
			m[i].Value = s.Sandbox
		case f.Key == "run_start" || f.Key == "run_end":
			if err == nil {
				m[i].Value = strconv.FormatInt(int64(x)+shift, 10)
			}
		case len(f.Key) > 11 && f.Key[:11] == "actors_per_":
			if err == nil {
				m[i].Value = artifact.FormatFloat(round(x*packing, 2))
			}
		}
	}
	return m
}

func measurementText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case *string:
		if t != nil {
			return *t, true
		}
	}
	return "", false
}

func scaled(p *float64, f float64, digits int) *float64 {
	if p == nil {
		return nil
	}
	v := round(*p*f, digits)
	return &v
}

// scaleSummary scales every percentile, capped at 1 for a ratio.
func scaleSummary(s percentile.Summary, f float64, ratio bool) percentile.Summary {
	out := s
	for _, p := range []**float64{&out.Min, &out.P50, &out.P90, &out.P95, &out.P99, &out.Max, &out.Avg} {
		*p = scaled(*p, f, 4)
		if ratio && *p != nil && **p > 1 {
			one := 1.0
			*p = &one
		}
	}
	return out
}

func shiftPacking(ts []harvest.PackingPoint, shift int64, f float64) []harvest.PackingPoint {
	out := make([]harvest.PackingPoint, len(ts))
	for i, p := range ts {
		p.Timestamp += shift
		p.Busy = math.Min(p.Total, math.Round(p.Busy*f))
		if p.Total > 0 {
			v := round(p.Busy/p.Total, 4)
			p.Ratio = &v
		}
		out[i] = p
	}
	return out
}

func shiftActors(ts []harvest.ActorsPoint, shift int64, f float64) []harvest.ActorsPoint {
	out := make([]harvest.ActorsPoint, len(ts))
	for i, p := range ts {
		p.Timestamp += shift
		p.ActiveActors = math.Round(p.ActiveActors * f)
		out[i] = p
	}
	return out
}

func shiftWS(ts []harvest.WSPoint, shift int64) []harvest.WSPoint {
	out := make([]harvest.WSPoint, len(ts))
	for i, p := range ts {
		p.Timestamp += shift
		out[i] = p
	}
	return out
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// unit is a deterministic value in [0, 1) from k (splitmix64).
func unit(k uint64) float64 {
	k += 0x9e3779b97f4a7c15
	k = (k ^ k>>30) * 0xbf58476d1ce4e5b9
	k = (k ^ k>>27) * 0x94d049bb133111eb
	k ^= k >> 31
	return float64(k>>11) / (1 << 53)
}

// LadderScenario is the simulator scenario of the demo store's ladder run.
const LadderScenario = "ladder-steps"

// exportLadder generates the ladder scenario into dir, loads it into a
// Prometheus on loopback and exports it (ladder rows from its logs.txt).
func exportLadder(ctx context.Context, dir string, stderr io.Writer) error {
	sc, ok := simrun.ByName(LadderScenario)
	if !ok {
		return fmt.Errorf("simulator has no %q scenario", LadderScenario)
	}
	tr, err := simrun.Generate(sc, dir)
	if err != nil {
		return fmt.Errorf("generating the ladder run: %w", err)
	}
	work, err := os.MkdirTemp("", "density-demo-ladder-prometheus-")
	if err != nil {
		return err
	}
	srv, err := promtest.Launch(ctx, filepath.Join(dir, simrun.OMFile), work)
	if err != nil {
		os.RemoveAll(work)
		return fmt.Errorf("starting Prometheus: %w", err)
	}
	defer stop(srv)
	var out bytes.Buffer
	code := export.Main(ctx, []string{"--run-dir", dir, "--prometheus-url", srv.URL,
		"--test-name", tr.TestName, "--tag", tr.Tag,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10),
		"--atelet-lag-s", strconv.FormatInt(tr.LagS, 10), "--no-cluster-facts", "--no-report", "--no-wait"},
		export.DefaultEnv(&out, &out))
	if code != cli.ExitOK {
		return fmt.Errorf("exporting the ladder run: exit %d: %s", code, out.String())
	}
	return nil
}

// DemoStore exports the demo run into runDir (the template) and a ladder
// run, writes the demo store into storeDir, then prints what it holds and
// what to try.
func DemoStore(ctx context.Context, runDir, storeDir string, stdout, stderr io.Writer) int {
	t0 := time.Now()
	code := Export(ctx, runDir, io.Discard, stderr)
	if code != cli.ExitOK {
		return code
	}
	abs, err := filepath.Abs(storeDir)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return cli.ExitWrite
	}
	ladderDir, err := os.MkdirTemp("", "density-demo-ladder-")
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return cli.ExitWrite
	}
	defer os.RemoveAll(ladderDir)
	if err := exportLadder(ctx, ladderDir, stderr); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return cli.ExitWrite
	}
	st, err := WriteStore(runDir, ladderDir, abs, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return cli.ExitWrite
	}
	newest, _ := st.Newest(StoreTest, "gvisor")
	base := st.Runs[0]
	fmt.Fprintf(stdout, "demo store: the demo run, a ladder run and %d nightly runs of %s (gVisor and microVM cohorts) and %s in %s, written in %s\n",
		len(st.Runs)-2, StoreTest, StoreChurnTest, abs, time.Since(t0).Round(time.Millisecond))
	fmt.Fprintf(stdout, "  planted: restore_p*_s +40 %% on the gVisor runs from night %d (unacknowledged), %s +25 %% on the microVM runs from night %d (acknowledged in runs/%s/acks.yaml), %s checkpoint_p*_s −20 %% from night %d\n",
		RegressionNight+1, AckedKey, AckedNight+1, StoreTest, StoreChurnTest, ImprovementNight+1)
	fmt.Fprintln(stdout, "\nTry:")
	fmt.Fprintf(stdout, "  go run ./cmd/density regressions --store %s --test-name %s   # exit 4: the restore regression\n", abs, StoreTest)
	fmt.Fprintf(stdout, "  go run ./cmd/density compare --store %s %s %s\n", abs, base.ID, newest.ID)
	fmt.Fprintf(stdout, "  go run ./cmd/density report --store %s --run %s --baseline-run %s --out /tmp/density-report\n", abs, newest.ID, base.ID)
	fmt.Fprintln(stdout, "  go run github.com/magefile/mage demoServe   # Prometheus with the demo run, for Grafana (docker compose up)")
	return cli.ExitOK
}
