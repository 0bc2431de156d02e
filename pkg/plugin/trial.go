package plugin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/runs"
)

// trialRow is a run's trial_summary measurements in key order, with the
// notices saying where they came from and why some are null.
type trialRow struct {
	keys    []string
	values  map[string]*string
	notices []runNote
}

func (t *trialRow) put(k string, v *string) {
	if t.values == nil {
		t.values = map[string]*string{}
	}
	if _, ok := t.values[k]; !ok {
		t.keys = append(t.keys, k)
	}
	t.values[k] = v
}

// trialTextKeys are trial_summary keys whose values are text, not numbers
// (sets of values are comma-joined text too). metadata_* keys are text.
var trialTextKeys = map[string]bool{
	"machine_type": true, "kubernetes_version": true, "worker_actor_capacity": true,
	"worker_memory_limit_gb": true, "sandbox_class": true, "multi_actor_worker": true,
}

func isTextKey(k string) bool { return trialTextKeys[k] || strings.HasPrefix(k, "metadata_") }

// frontierKeys are the density frontiers of a trial_summary row, in row
// order (failure ratios follow, named per operation).
var frontierKeys = []string{"actors_per_node", "actors_per_vcpu", "actors_per_gb_ram",
	"actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99", "multi_actor_worker"}

// frontierCaveat is said wherever frontiers are shown (cluster-facts.md).
const frontierCaveat = "frontiers assume actors = users × actors-per-user, all alive at once, over the cluster as read once after the run (a cluster that autoscaled mid-run is measured at its final size)"

// trialSummary is a run's trial_summary row. A stored run's comes from its
// stored stats.jsonl row, never from today's cluster; any other run is
// computed from the live cluster (only while the run ended less than
// liveFactsMaxAgeSeconds ago; null otherwise) and its user-count series
// (there is no stats.csv, so no failure ratios).
func (d *Datasource) trialSummary(ctx context.Context, e runs.Entry) trialRow {
	if e.Source == runs.SourceStore {
		return d.storedTrial(ctx, e)
	}
	t, _, err := d.cache.trials.get(ctx, d.key(keyTrial, e, ""), func(ctx context.Context) (trialRow, outcome) {
		return d.liveTrial(ctx, e, d.now().Unix())
	})
	if err != nil {
		t.notices = append(t.notices, runNote{run: e.ID, text: fmt.Sprintf("the trial_summary read was cancelled: %v", err)})
	}
	return t
}

func (d *Datasource) storedTrial(ctx context.Context, e runs.Entry) trialRow {
	var t trialRow
	s := d.storedHead(ctx, e)
	t.notices = append(t.notices, notesOf(e.ID, problems(s.problem))...)
	if s.trial == nil {
		for _, k := range clusterfacts.Keys() {
			t.put(k, nil)
		}
		for _, k := range frontierKeys {
			t.put(k, nil)
		}
		t.notices = append(t.notices, runNote{run: e.ID, text: fmt.Sprintf("no trial_summary row in its stored %s: cluster facts and frontiers are null (they are never read from today's cluster for a stored run)", runs.FileStatsJSONL)})
		return t
	}
	for _, f := range artifact.FlatTrialMeasurements(s.trial.Measurements) {
		switch v := f.Value.(type) {
		case string:
			t.put(f.Key, &v)
		default:
			t.put(f.Key, nil)
		}
	}
	t.notices = append(t.notices, runNote{run: e.ID, text: "cluster facts and frontiers from its stored trial_summary row"})
	return t
}

// liveTrial computes the row of a run outside the store, and its outcome:
// live while it reads today's cluster or the run may change, failed when a
// read failed.
func (d *Datasource) liveTrial(ctx context.Context, e runs.Entry, now int64) (trialRow, outcome) {
	var t trialRow
	var facts clusterfacts.Facts
	o := finishedOK
	if !d.finished(e, now) {
		o = liveRun
	}
	switch reason := d.liveFactsUnavailable(e, now); {
	case reason != "":
		t.notices = append(t.notices, runNote{run: e.ID, text: "cluster facts are null: " + reason})
	default:
		o = liveRun // today's cluster: it changes
		r := cluster.Discover(ctx, d.kube, d.settings.clusterOptions())
		facts = r.Facts
		if len(r.Notices) > 0 {
			o = failedRead
		}
		for _, n := range r.Notices {
			t.notices = append(t.notices, runNote{run: e.ID, text: fmt.Sprintf("%s null: %s", strings.Join(n.Fields, ", "), n.Reason)})
		}
		t.notices = append(t.notices, runNote{run: e.ID, text: "cluster facts read from the live cluster now"})
	}
	in := frontier.Inputs{Facts: facts, RunStart: e.Start, RunEnd: e.End,
		StatsErr: errors.New("no stats.csv: the run is not in the results store")}
	if d.catalogs.Discovery != nil {
		samples, err := d.catalogs.Discovery.Samples(ctx, e.Start, e.End)
		if err != nil {
			o = failedRead
			t.notices = append(t.notices, runNote{run: e.ID, text: fmt.Sprintf("user counts unavailable: %v", err)})
		}
		for _, s := range samples {
			in.ObservedUsers = append(in.ObservedUsers, s.Users)
		}
	}
	m, notices := frontier.TrialSummary(in)
	for _, x := range m {
		t.put(x.Key, x.Value)
	}
	for _, n := range notices {
		if n.Field == "aggregate_failure_ratio" {
			continue // said once above: no stats.csv outside the store
		}
		t.notices = append(t.notices, runNote{run: e.ID, text: fmt.Sprintf("%s null: %s", n.Field, n.Reason)})
	}
	return t, o
}

// liveFactsUnavailable says why today's cluster must not describe a run
// ("" when it may).
func (d *Datasource) liveFactsUnavailable(e runs.Entry, now int64) string {
	switch {
	case d.settings.Kube.Access == cluster.ModeOff:
		return "Kubernetes access is off in the datasource settings"
	case d.kube == nil:
		return fmt.Sprintf("the Kubernetes client could not be built: %v", d.kubeErr)
	case !e.Live && now-e.End > d.settings.LiveFactsMaxAgeSeconds:
		return fmt.Sprintf("the run ended %s ago, more than liveFactsMaxAgeSeconds (%d s): today's cluster no longer describes it",
			time.Duration(now-e.End)*time.Second, d.settings.LiveFactsMaxAgeSeconds)
	}
	return ""
}

// number parses a trial measurement as a number (nil stays nil).
func number(v *string) (*float64, error) {
	if v == nil {
		return nil, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(*v), 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a number", *v)
	}
	return &f, nil
}
