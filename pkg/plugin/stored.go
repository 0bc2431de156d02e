package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/runs"
)

// maxStoredFile bounds what is read of one stored artifact.
const maxStoredFile = 64 << 20

// stored is what a stored run's own artifacts recorded: the Kubernetes
// oom_events fields of server_summary.json and the last trial_summary row
// of stats.jsonl. Both are immutable once written, so they are cached with
// the run's blocks.
type stored struct {
	oom      harvest.KubernetesOOM
	hasOOM   bool
	trial    *artifact.Row
	problems []string
}

// storedArtifacts reads (once per finished run) a stored run's recorded
// facts. For runs outside the store it returns the zero value.
func (d *Datasource) storedArtifacts(ctx context.Context, e runs.Entry) stored {
	if e.Source != runs.SourceStore || d.catalogs.Store == nil {
		return stored{}
	}
	now := d.now()
	v, _ := d.cache.get(ctx, d.blockKey(e, "stored"), now, func() (any, time.Duration) {
		s := d.readStored(ctx, e)
		switch {
		case ctx.Err() != nil:
			return s, 0
		case e.Artifacts.ServerSummary || e.Artifacts.Status:
			return s, -1 // the orchestrator uploads these last: the run is complete
		}
		return s, liveTTL
	})
	s, _ := v.(stored)
	return s
}

func (d *Datasource) readStored(ctx context.Context, e runs.Entry) stored {
	var s stored
	if e.Artifacts.ServerSummary {
		b, err := d.catalogs.Store.ReadFile(ctx, e, runs.FileServerSummary, maxStoredFile)
		if err != nil {
			s.problems = append(s.problems, err.Error())
		} else {
			var doc struct {
				OOM *struct {
					WorkerRestarts      *int64 `json:"worker_restarts"`
					WorkerOOMKilledPods *int64 `json:"worker_oomkilled_pods"`
					Evicted             *int64 `json:"evicted"`
					WorkerPodsLost      *int64 `json:"worker_pods_lost"`
				} `json:"oom_events"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || doc.OOM == nil {
				s.problems = append(s.problems, fmt.Sprintf("%s of run %s has no readable oom_events", runs.FileServerSummary, e.ID))
			} else {
				s.hasOOM = true
				s.oom = harvest.KubernetesOOM{WorkerRestarts: doc.OOM.WorkerRestarts, WorkerOOMKilledPods: doc.OOM.WorkerOOMKilledPods,
					Evicted: doc.OOM.Evicted, WorkerPodsLost: doc.OOM.WorkerPodsLost,
					Reason: "not recorded in the run's stored " + runs.FileServerSummary}
			}
		}
	}
	if e.Artifacts.StatsJSONL {
		b, err := d.catalogs.Store.ReadFile(ctx, e, runs.FileStatsJSONL, maxStoredFile)
		if err != nil {
			s.problems = append(s.problems, err.Error())
		} else {
			_ = artifact.ScanRows(bytes.NewReader(b), func(l artifact.Line) error {
				if l.Row != nil && l.Row.Metric == artifact.MetricTrialSummary {
					s.trial = l.Row // the last row wins
				}
				return nil
			})
		}
	}
	return s
}

// kubernetesOOM is the Kubernetes part of oom_events for a run: a stored
// run's recorded values (never today's cluster); other runs have no
// "before" snapshot, without which the four counts are unknown.
func (d *Datasource) kubernetesOOM(ctx context.Context, e runs.Entry) harvest.KubernetesOOM {
	if e.Source == runs.SourceStore {
		s := d.storedArtifacts(ctx, e)
		if s.hasOOM {
			return s.oom
		}
		return harvest.KubernetesOOM{Reason: "the run's " + runs.FileServerSummary + " is not in the results store (`density export` records these counts)"}
	}
	if d.settings.Kube.Access == KubeOff {
		return harvest.KubernetesOOM{Reason: "Kubernetes access is off in the datasource settings"}
	}
	return harvest.KubernetesOOM{Reason: "a run outside the results store has no \"before\" snapshot of the worker pods, without which restarts, OOM-killed pods, evictions and lost pods cannot be counted"}
}
