// Package engine is the one whole-run read both adapters use, by parts: a
// run's server_summary blocks (from Prometheus, or the datasource's cache
// of them), its Kubernetes part (the cluster facts and the four OOM
// counts, read after the run or as a stored run recorded them), its load
// ladder (logs.txt's steps evaluated over Prometheus) and its phase
// breakdown (the timing records of the pod logs or of log files), read
// concurrently and returned as typed values in one Result. The export asks
// for every part, a panel for the one it shows.
//
// It is the only place that turns pkg/cluster's readings into
// pkg/harvest's types, so harvest stays free of client-go and knows
// nothing of Kubernetes access; like harvest it knows nothing of Grafana
// or of files written.
package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/ladder"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// Parts says which parts of a run Run reads.
type Parts uint8

// The parts of a run.
const (
	PartBlocks Parts = 1 << iota
	PartKubernetes
	PartLadder
	PartPhases

	// AllParts is the export's read.
	AllParts = PartBlocks | PartKubernetes | PartLadder | PartPhases
)

// Blocks harvests a run's server_summary blocks.
type Blocks interface {
	Harvest(ctx context.Context, p harvest.Params) *harvest.Result
}

// Prometheus harvests every block at once with harvest.Harvest (the
// export).
type Prometheus struct{ Client *promql.Client }

// Harvest is harvest.Harvest over the client.
func (h Prometheus) Harvest(ctx context.Context, p harvest.Params) *harvest.Result {
	return harvest.Harvest(ctx, h.Client, p)
}

// BlocksFunc is a Blocks of a function (the datasource assembles a run
// from its cached blocks).
type BlocksFunc func(ctx context.Context, p harvest.Params) *harvest.Result

// Harvest calls f.
func (f BlocksFunc) Harvest(ctx context.Context, p harvest.Params) *harvest.Result { return f(ctx, p) }

// Kubernetes is where a run's Kubernetes part comes from; its client also
// reads the phase part's pod logs.
type Kubernetes struct {
	// Recorded, when set, is the four counts as the run's stored
	// server_summary.json recorded them (nil counts with the reason when it
	// did not): nothing is read, and the cluster facts are left unread.
	Recorded *harvest.KubernetesOOM
	// Client reads the cluster after the run. Nil makes no call: every fact
	// and count is null, with Why as the reason when it is set.
	Client  kubernetes.Interface
	Why     string
	Options cluster.Options
	// Before is the "before" snapshot of the worker pods
	// (cluster_before.json); nil nulls the four counts.
	Before *cluster.Snapshot
}

// Ladder is the ladder part of a run: logs.txt's steps evaluated with a
// profile (expanded and validated) over Prometheus.
type Ladder struct {
	Client  *promql.Client
	Log     runs.Ladder
	Profile ladder.Profile
	Options ladder.Options
}

// Input is what Run reads: the run and where each part comes from. A part
// asked for whose source is nil (Blocks, Ladder, Phases) is left nil in
// the Result.
type Input struct {
	Params harvest.Params
	Blocks Blocks
	Kube   Kubernetes
	Ladder *Ladder
	Phases *PhaseSource
}

// Result is one run's read, by part.
type Result struct {
	// Harvest is the blocks, with the Kubernetes oom_events fields set when
	// the Kubernetes part was read too.
	Harvest *harvest.Result
	// Cluster is the Kubernetes read after the run: the facts, their
	// notices and the OOM counts (zero when Kubernetes.Recorded was used).
	Cluster cluster.AfterRun
	// Ladder is the evaluation, its values rounded as the artifact writes
	// them (after the summary was computed on the unrounded ones).
	Ladder *ladder.Result
	// Phases is the phase breakdown.
	Phases *Phases
}

// Run reads the parts of the run in asked for, concurrently: the blocks,
// the ladder, and on one goroutine the Kubernetes part then the phase
// part's pod logs (one Kubernetes reader at a time). With both the blocks
// and the Kubernetes part, the oom_events Kubernetes fields are set.
func Run(ctx context.Context, in Input, parts Parts) Result {
	var r Result
	var wg sync.WaitGroup
	if parts&PartBlocks != 0 && in.Blocks != nil {
		wg.Go(func() { r.Harvest = in.Blocks.Harvest(ctx, in.Params) })
	}
	if parts&PartLadder != 0 && in.Ladder != nil {
		wg.Go(func() { r.Ladder = evaluateLadder(ctx, *in.Ladder) })
	}
	kube := parts&PartKubernetes != 0 && in.Kube.Recorded == nil
	phased := parts&PartPhases != 0 && in.Phases != nil
	if kube || phased {
		wg.Go(func() {
			if kube {
				r.Cluster = readCluster(ctx, in.Kube, in.Params.Start, in.Params.End)
			}
			if phased {
				r.Phases = readPhases(ctx, in.Kube, *in.Phases)
			}
		})
	}
	wg.Wait()
	if r.Harvest != nil && parts&PartKubernetes != 0 {
		if in.Kube.Recorded != nil {
			r.Harvest.SetKubernetes(*in.Kube.Recorded)
		} else {
			r.Harvest.SetKubernetes(kubernetesOOM(r.Cluster.OOM))
		}
	}
	return r
}

// evaluateLadder evaluates the ladder and rounds its values.
func evaluateLadder(ctx context.Context, l Ladder) *ladder.Result {
	res := ladder.Evaluate(ctx, l.Client, l.Log, l.Profile, l.Options).Rounded()
	return &res
}

// readCluster reads the facts after the run and the OOM counts against
// the before snapshot, in [start, end].
func readCluster(ctx context.Context, k Kubernetes, start, end int64) cluster.AfterRun {
	if k.Client == nil {
		r := cluster.ReadAfterRun(ctx, nil, k.Options, nil, time.Time{}, time.Time{})
		if k.Why != "" {
			for i := range r.Notices {
				r.Notices[i].Reason = k.Why
			}
			for i := range r.OOM.Notices {
				r.OOM.Notices[i].Reason = k.Why
			}
		}
		return r
	}
	return cluster.ReadAfterRun(ctx, k.Client, k.Options, k.Before, time.Unix(start, 0), time.Unix(end, 0))
}

// kubernetesOOM is the four counts as harvest holds them, the reasons of
// the null ones joined.
func kubernetesOOM(o cluster.OOM) harvest.KubernetesOOM {
	k := harvest.KubernetesOOM{
		WorkerRestarts:      int64p(o.WorkerRestarts),
		WorkerOOMKilledPods: int64p(o.WorkerOOMKilledPods),
		Evicted:             int64p(o.Evicted),
		WorkerPodsLost:      int64p(o.WorkerPodsLost),
	}
	var reasons []string
	for _, n := range o.Notices {
		reasons = append(reasons, n.Reason)
	}
	k.Reason = strings.Join(reasons, "; ")
	return k
}

func int64p(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}
