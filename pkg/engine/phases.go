package engine

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/phases"
	"github.com/substrate/density/pkg/runs"
)

// PhaseSource is where the phase part's timing records come from: log
// files when FromFiles, else the pod logs over the Kubernetes client.
type PhaseSource struct {
	FromFiles bool
	// Files are the --phase-logs paths (files or directories, see
	// phases.LogFiles).
	Files []string
	// Logs are the pod logs read when not FromFiles.
	Logs cluster.LogOptions
	// DropAfterUS drops the records that ended after it (µs since the
	// epoch: the run end plus the atelet lag).
	DropAfterUS int64
	// Stats are the run's stats.csv rows, for the summary's Locust counts.
	Stats []runs.OperationStats
}

// Phases is a run's phase breakdown.
type Phases struct {
	// Read is false when no record could be looked for (no Kubernetes
	// client): Groups and Summary are then empty and Notices say why.
	Read bool
	// Groups are the percentile groups, dimensions as the rows write them
	// ("none" for an empty one).
	Groups  []phases.Group
	Summary phases.Summary
	Stats   phases.Stats
	// Notices are the reading's, the metric-name collisions' and the
	// summary's warnings, in that order.
	Notices []string
}

// readPhases reads the timing records and groups them.
func readPhases(ctx context.Context, k Kubernetes, src PhaseSource) *Phases {
	res := &Phases{}
	col := phases.NewCollector()
	col.DropAfter(src.DropAfterUS)
	var podsRead, podsFailed *int // nil when the records came from files
	if src.FromFiles {
		files, err := phases.LogFiles(src.Files)
		if err != nil { // validated before; the files may have gone since
			res.Notices = append(res.Notices, fmt.Sprintf("--phase-logs: %v", err))
		}
		for _, path := range files {
			if err := readPhaseFile(col, path); err != nil {
				res.Notices = append(res.Notices, err.Error())
			}
		}
	} else {
		if k.Client == nil {
			return &Phases{Notices: []string{"no phase rows: " + k.Why}}
		}
		lr := cluster.ReadPodLogs(ctx, k.Client, src.Logs,
			func(r io.Reader, s cluster.LogSource) error { return col.ReadWhole(r, s.String()) })
		podsRead, podsFailed = &lr.PodsRead, &lr.PodsFailed
		res.Notices = append(res.Notices, lr.Notices...)
	}
	res.Read = true
	res.Notices = append(res.Notices, col.Report()...)
	res.Stats = col.Stats

	phases.Analyze(col.Records)
	groups := phases.Groups(col.Records)
	res.Notices = append(res.Notices, phases.Collisions(groups)...)
	s := phases.Summarize(col.Records)
	s.PodsRead, s.PodsFailed = podsRead, podsFailed
	s.Suspend = locustCounts(src.Stats, phases.LocustSuspend)
	s.Resume = locustCounts(src.Stats, phases.LocustResume)
	res.Notices = append(res.Notices, phases.Warnings(s, len(groups))...)
	for i := range groups {
		groups[i] = groups[i].AsWritten()
	}
	res.Groups = groups
	res.Summary = s
	return res
}

func readPhaseFile(col *phases.Collector, path string) error {
	f, err := os.Open(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return fmt.Errorf("phase log: %w", err)
	}
	defer f.Close()
	if err := col.ReadWhole(f, path); err != nil {
		return fmt.Errorf("phase log %s skipped: %w", path, err)
	}
	return nil
}

// locustCounts is the last stats.csv row of the name; nil when absent or
// its counts do not parse.
func locustCounts(stats []runs.OperationStats, name string) *phases.Locust {
	var last *runs.OperationStats
	for i := range stats {
		if stats[i].Name == name {
			last = &stats[i]
		}
	}
	if last == nil {
		return nil
	}
	req, fail, err := last.Counts()
	if err != nil {
		return nil
	}
	return &phases.Locust{Requests: req, Failures: fail}
}
