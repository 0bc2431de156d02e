package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// Truth is what the export must find in the generated data (truth.json).
type Truth struct {
	Params      Params `json:"params"`
	StartTS     int64  `json:"start_ts"`
	EndTS       int64  `json:"end_ts"`
	SteadyStart int64  `json:"steady_start_ts"`
	SteadyEnd   int64  `json:"steady_end_ts"`
	// Expected export figures.
	Nodes                 int   `json:"nodes"`   // node_psi.nodes
	Pods                  int   `json:"pods"`    // pod_psi.pods
	Atelets               int   `json:"atelets"` // active_actors.atelets
	CheckpointsInWindow   int64 `json:"checkpoints_in_window"`
	CheckpointsCumulative int64 `json:"checkpoints_cumulative"`
	MemRestartedSeries    int   `json:"mem_restarted_series"`
	// Size and cost of the generation.
	Series      int64   `json:"series"`
	Samples     int64   `json:"samples"`
	GenSeconds  float64 `json:"gen_seconds"`
	FlushSecs   float64 `json:"flush_seconds"`
	BlockBytes  int64   `json:"block_bytes"`
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
	WorkersUsed int     `json:"workers"`
}

// tsdbSink appends whole series to a head appender.
type tsdbSink struct{ app storage.Appender }

func (s tsdbSink) add(ls labels.Labels, ts []int64, vs []float64) error {
	var ref storage.SeriesRef
	var err error
	for i, t := range ts {
		if ref, err = s.app.Append(ref, ls, t*1000, vs[i]); err != nil {
			return fmt.Errorf("appending %s at %d: %w", ls, t, err)
		}
	}
	return nil
}

func cmdGenerate(ctx context.Context, args []string) error {
	p := DefaultParams()
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (data/, run/, truth.json)")
	fs.IntVar(&p.Nodes, "nodes", p.Nodes, "worker nodes (one atelet each)")
	fs.IntVar(&p.Pods, "pods", p.Pods, "worker pods")
	fs.Float64Var(&p.Hours, "hours", p.Hours, "run length in hours")
	fs.Int64Var(&p.StepS, "step", p.StepS, "scrape interval, seconds")
	fs.IntVar(&p.Restarts, "restarts", p.Restarts, "atelets restarting inside the steady window")
	fs.IntVar(&p.Capacity, "capacity", p.Capacity, "actors per worker pod")
	fs.Uint64Var(&p.Seed, "seed", p.Seed, "random seed")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "generator goroutines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	tr, err := Generate(ctx, p, *out, *workers, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("generated %d series, %d samples in %.0f s (+%.0f s block write), block %.0f MiB; steady [%d, %d]; expect checkpoints_in_window=%d checkpoints_cumulative=%d\n",
		tr.Series, tr.Samples, tr.GenSeconds, tr.FlushSecs, float64(tr.BlockBytes)/(1<<20), tr.SteadyStart, tr.SteadyEnd,
		tr.CheckpointsInWindow, tr.CheckpointsCumulative)
	return nil
}

// Generate writes the TSDB block, the Locust files and truth.json under dir,
// reporting progress to progress (may be nil).
func Generate(ctx context.Context, p Params, dir string, workers int, progress io.Writer) (*Truth, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	data, runDir := filepath.Join(dir, "data"), filepath.Join(dir, "run")
	for _, d := range []string{data, runDir} {
		if err := os.MkdirAll(d, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	t0 := time.Now()
	w := newWorld(p)
	// One block over the whole telemetry window. The head refuses samples
	// older than maxt - chunkRange/2, and each series is appended whole, so
	// the chunk range must exceed twice the window.
	span := (w.telTo + p.shift() + 2*p.StepS - w.telFrom) * 1000
	blockSize := int64(math.Ceil(float64(2*span+1)/3.6e6)) * 3600 * 1000
	bw, err := newBlockWriter(data, dir, blockSize)
	if err != nil {
		return nil, err
	}
	defer bw.Close()

	tr := &Truth{Params: p, StartTS: p.Start, EndTS: p.end(), Nodes: p.Nodes, Pods: p.Pods, Atelets: p.Nodes, WorkersUsed: workers}
	tr.SteadyStart, tr.SteadyEnd = w.steady()
	jobs := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		memG     float64
		memE     float64
		done     int
	)
	for range max(workers, 1) {
		wg.Go(func() {
			for j := range jobs {
				app := bw.Appender(ctx)
				e := &emitter{w: w, out: tsdbSink{app}}
				if j < 0 {
					e.clusterJob()
				} else {
					e.nodeJob(j)
				}
				err := e.err
				if err == nil {
					err = app.Commit()
				} else {
					_ = app.Rollback()
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				tr.Series += e.truth.series
				tr.Samples += e.truth.samples
				memG += e.truth.memGrowth
				memE += e.truth.memEnd
				tr.MemRestartedSeries += e.truth.memRestarted
				done++
				if progress != nil && done%max(1, (p.Nodes+1)/10) == 0 {
					fmt.Fprintf(progress, "tsdbgen: %d/%d jobs, %d samples, %.0f s\n", done, p.Nodes+1, tr.Samples, time.Since(t0).Seconds())
				}
				mu.Unlock()
			}
		})
	}
	for j := -1; j < p.Nodes; j++ {
		select {
		case jobs <- j:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tr.CheckpointsInWindow = int64(math.Round(memG))
	tr.CheckpointsCumulative = int64(math.Round(memE))
	tr.GenSeconds = time.Since(t0).Seconds()
	t1 := time.Now()
	if err := bw.Flush(ctx); err != nil {
		return nil, fmt.Errorf("writing the block: %w", err)
	}
	tr.FlushSecs = time.Since(t1).Seconds()
	tr.BlockBytes = dirSize(data)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		tr.PeakRSSMiB = float64(ru.Maxrss) / 1024
	}
	if err := writeLocust(w, runDir); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "truth.json"), append(b, '\n'), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return nil, fmt.Errorf("writing truth.json: %w", err)
	}
	return tr, nil
}

func dirSize(dir string) int64 {
	var n int64
	// The walk skips what it cannot stat, so it returns no error.
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// writeLocust writes a stats_history.csv with one Aggregated row per step
// (the export takes the steady window from it) and a one-line stats.csv.
func writeLocust(w *world, dir string) error {
	f, err := os.Create(filepath.Join(dir, "stats_history.csv")) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return fmt.Errorf("creating stats_history.csv: %w", err)
	}
	buf := []byte("Timestamp,User Count,Type,Name,Requests/s,Failures/s\n")
	for t := w.p.Start; t <= w.p.end(); t += w.p.StepS {
		u := w.usersAt(t)
		buf = strconv.AppendInt(buf, t, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(u), 10)
		buf = append(buf, ",,Aggregated,"...)
		buf = strconv.AppendFloat(buf, float64(u)*0.62, 'f', 2, 64)
		buf = append(buf, ",0.0\n"...)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("writing stats_history.csv: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing stats_history.csv: %w", err)
	}
	stats := "Type,Name,Request Count,Failure Count\n,Aggregated,1000,0\n"
	if err := os.WriteFile(filepath.Join(dir, "stats.csv"), []byte(stats), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return fmt.Errorf("writing stats.csv: %w", err)
	}
	return nil
}

// blockWriter is tsdb.BlockWriter with isolation switched off. The
// library's writer keeps isolation on, and then every appended sample adds
// its append id to its series' transaction ring until the series' next
// commit; each series here is committed once, whole, so the rings never
// shrink (about 8 bytes per sample: 10 GB for the full scale run).
type blockWriter struct {
	dir      string
	chunkDir string
	head     *tsdb.Head
	size     int64
}

// newBlockWriter writes the block into dir; the head's chunks live in a
// temporary directory under tmpRoot meanwhile.
func newBlockWriter(dir, tmpRoot string, blockSize int64) (*blockWriter, error) {
	chunkDir, err := os.MkdirTemp(tmpRoot, "head")
	if err != nil {
		return nil, fmt.Errorf("creating the head chunk directory: %w", err)
	}
	opts := tsdb.DefaultHeadOptions()
	opts.ChunkRange = blockSize
	opts.ChunkDirRoot = chunkDir
	opts.IsolationDisabled = true
	h, err := tsdb.NewHead(nil, log.NewNopLogger(), nil, nil, opts, tsdb.NewHeadStats())
	if err != nil {
		os.RemoveAll(chunkDir)
		return nil, fmt.Errorf("creating the head: %w", err)
	}
	if err := h.Init(math.MinInt64); err != nil {
		os.RemoveAll(chunkDir)
		return nil, fmt.Errorf("initialising the head: %w", err)
	}
	return &blockWriter{dir: dir, chunkDir: chunkDir, head: h, size: blockSize}, nil
}

func (w *blockWriter) Appender(ctx context.Context) storage.Appender { return w.head.Appender(ctx) }

// Flush writes the head as one block (intervals are half-open, hence +1).
func (w *blockWriter) Flush(ctx context.Context) error {
	c, err := tsdb.NewLeveledCompactor(ctx, nil, log.NewNopLogger(), []int64{w.size}, chunkenc.NewPool(), nil)
	if err != nil {
		return fmt.Errorf("creating the compactor: %w", err)
	}
	if _, err := c.Write(w.dir, w.head, w.head.MinTime(), w.head.MaxTime()+1, nil); err != nil {
		return fmt.Errorf("writing the block: %w", err)
	}
	return nil
}

func (w *blockWriter) Close() error {
	defer os.RemoveAll(w.chunkDir)
	return w.head.Close()
}
