// Package engine is the one whole-run read both adapters use: a run's
// server_summary blocks (from Prometheus, or the datasource's cache of
// them) and its Kubernetes part (the cluster facts and the four OOM
// counts, read after the run or as a stored run recorded them), read
// concurrently and joined into one Result.
//
// It is the only place that turns pkg/cluster's readings into
// pkg/harvest's types, so harvest stays free of client-go and knows
// nothing of Kubernetes access; like harvest it knows nothing of Grafana
// or of files.
package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
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

// Kubernetes is where a run's Kubernetes part comes from.
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
	// Then, when set, makes more Kubernetes reads after the facts, on the
	// same goroutine, so that one Kubernetes reader runs at a time (the
	// export's pod logs) while the blocks are harvested.
	Then func(ctx context.Context)
}

// Result is one run's whole read.
type Result struct {
	// Harvest is the blocks with the Kubernetes oom_events fields set.
	Harvest *harvest.Result
	// Cluster is the Kubernetes read after the run: the facts, their
	// notices and the OOM counts (zero when Kubernetes.Recorded was used).
	Cluster cluster.AfterRun
}

// Run harvests the blocks of the run p describes and reads its Kubernetes
// part concurrently, then sets the oom_events Kubernetes fields.
func Run(ctx context.Context, p harvest.Params, blocks Blocks, kube Kubernetes) Result {
	var r Result
	if kube.Recorded != nil {
		r.Harvest = blocks.Harvest(ctx, p)
		r.Harvest.SetKubernetes(*kube.Recorded)
		return r
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.Harvest = blocks.Harvest(ctx, p) })
	wg.Go(func() {
		r.Cluster = readCluster(ctx, kube, p.Start, p.End)
		if kube.Then != nil {
			kube.Then(ctx)
		}
	})
	wg.Wait()
	r.Harvest.SetKubernetes(kubernetesOOM(r.Cluster.OOM))
	return r
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
