package simrun

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File names written by Generate.
const (
	OMFile      = "metrics.om"
	HistoryFile = "stats_history.csv"
	StatsFile   = "stats.csv"
	RunFile     = "run.json"
)

func (s Scenario) validate() error {
	switch {
	case s.Name == "":
		return errors.New("scenario has no name")
	case len(s.Load) == 0 || s.Duration() <= 0:
		return errors.New("scenario has no load shape")
	case s.ScrapeS <= 0:
		return errors.New("scrape interval must be positive")
	case len(s.NodePods) == 0:
		return errors.New("scenario has no worker nodes")
	case s.PodCapacity <= 0 || s.PodCapacity > 32767:
		return errors.New("pod capacity must be in 1..32767")
	case s.LagS < 0:
		return errors.New("lag must not be negative")
	case s.Ladder != nil && (s.Lean || len(s.Ladder.Steps) == 0 || s.Ladder.LoadgenProcesses < 2):
		return errors.New("a ladder needs steps, two load-generator processes and per-sample truth (not lean)")
	case s.Redeploy != nil && s.AteapiDirect:
		return errors.New("a frozen re-export needs the collector: redeploy and AteapiDirect exclude each other")
	}
	for _, p := range s.Load {
		if p.DurS <= 0 || p.To < 0 {
			return fmt.Errorf("bad load phase %+v", p)
		}
	}
	inNodes := func(n int) bool { return n >= 0 && n < len(s.NodePods) }
	if r := s.AteletRestart; r != nil && !inNodes(r.Node) {
		return fmt.Errorf("atelet restart on unknown node %d", r.Node)
	}
	if d := s.DuplicateReplica; d != nil && !inNodes(d.Node) {
		return fmt.Errorf("duplicate replica of unknown node %d", d.Node)
	}
	if d := s.PodDeletion; d != nil && !inNodes(d.Node) {
		return fmt.Errorf("pod deletion on unknown node %d", d.Node)
	}
	for _, p := range s.PoolScales {
		if p.PinNode && !inNodes(p.Node) {
			return fmt.Errorf("pool scale pinned to unknown node %d", p.Node)
		}
	}
	for _, o := range s.OOMs {
		if !(inNodes(o.Node) || (o.Node == -1 && o.Kind == "node")) {
			return fmt.Errorf("OOM kill on unknown node %d", o.Node)
		}
		if o.Kind != "node" && o.Kind != "pod" && o.Kind != "container" {
			return fmt.Errorf("unknown OOM kind %q", o.Kind)
		}
	}
	return nil
}

// Generate writes the scenario's run into dir (metrics.om, stats_history.csv
// unless the scenario omits it, stats.csv, run.json) and returns its ground
// truth. The OpenMetrics file is streamed: series are generated one at a
// time from a compact per-second model of the cluster.
func Generate(s Scenario, dir string) (*Truth, error) {
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", s.Name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- output directories are for others to read
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	w := newWorld(s)
	t := &Truth{
		Scenario: s.Name, TestName: s.TestName, Tag: s.Tag, Start: s.Start, End: s.End(),
		LagS: s.LagS, Shift: s.Shift(), ScrapeS: s.ScrapeS, PoolName: PoolName,
		AteapiProcesses: w.ateapi, w0: w.w0,
	}
	if s.UnrelatedPool && !s.NoAteMetrics {
		t.UnrelatedPoolName = UnrelatedPool
	}
	if !s.Lean {
		t.nodeActors = w.nodeAct
	}
	if !s.NoAteMetrics {
		t.Collectors = []string{w.collectA}
		if s.DuplicateReplica != nil {
			t.Collectors = append(t.Collectors, w.collectB)
		}
	}
	if w.restart != nil {
		t.Restarts = []Restart{*w.restart}
	}
	for _, n := range w.nodes {
		t.Nodes = append(t.Nodes, NodeInfo{Instance: n.name, Worker: n.worker, Atelet: n.atelet, AteletPod: n.ateletPod})
	}
	for i, p := range w.pods {
		died := p.died
		if died == never {
			died = 0
		}
		t.Pods = append(t.Pods, PodInfo{Name: p.name, UID: p.uid, Namespace: p.ns, Container: p.container,
			Node: w.nodes[p.node].name, Worker: i < w.nWorker, MicroVM: p.microVM, Capacity: p.capacity, Born: p.born, Died: died})
	}

	path := filepath.Join(dir, OMFile)
	f, err := os.Create(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	g := &gen{w: w, o: &omWriter{w: bw, record: !s.Lean}, truth: t, lean: s.Lean, events: map[int][]event{}}
	g.run()
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("closing %s: %w", path, err)
	}
	t.Exported = g.o.out
	if st, err := os.Stat(path); err == nil {
		t.OMBytes = st.Size()
	}
	t.Files = append(t.Files, OMFile)

	if err := writeLocust(w, dir, t); err != nil {
		return nil, err
	}
	if !s.NoHistory {
		t.Files = append(t.Files, HistoryFile)
	}
	if s.PhaseLogs {
		if err := writePhaseLogs(w, dir, t); err != nil {
			return nil, fmt.Errorf("writing pod logs: %w", err)
		}
	}
	t.Files = append(t.Files, StatsFile)
	if err := writeRunJSON(s, dir); err != nil {
		return nil, err
	}
	t.Files = append(t.Files, RunFile)
	if s.Ladder != nil {
		if err := writeLadderLog(s, dir); err != nil {
			return nil, err
		}
		t.Files = append(t.Files, LogsFile)
		t.Ladder = ladderTruth(s, t.Exported)
	}
	t.SteadyStart, t.SteadyEnd, t.PeakUsers = SteadyWindow(t.Users, t.Start, t.End)
	return t, nil
}
