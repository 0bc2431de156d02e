package kubefake

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/substrate/density/internal/simrun"
)

// SimulatedLogPods are the pods of a simulated run's phase logs (written
// into dir by simrun with PhaseLogs), as a LogServer serves them: atelet
// pods labelled app=atelet, worker pods with the pool label, an unreadable
// pod answering 500, restarted containers with their previous log.
func SimulatedLogPods(dir string, tr *simrun.Truth) ([]LogPod, error) {
	if tr.Phases == nil {
		return nil, fmt.Errorf("the simulated run has no phase logs (Scenario.PhaseLogs)")
	}
	var pods []LogPod
	for _, l := range tr.Phases.Logs {
		p := LogPod{Namespace: l.Namespace, Name: l.Pod, Node: "node-1", Logs: map[string]string{}, Restarts: map[string]int32{}}
		if l.Namespace == simrun.AteletNamespace {
			p.Labels = map[string]string{"app": "atelet"}
		} else {
			p.Labels = map[string]string{"ate.dev/worker-pool": simrun.PoolName}
		}
		if l.Unreadable {
			p.Status = 500
		} else {
			b, err := os.ReadFile(filepath.Join(dir, l.Current)) // #nosec G304 -- reads a path the operator or the test harness named
			if err != nil {
				return nil, err
			}
			p.Logs[l.Container] = string(b)
		}
		if l.Previous != "" {
			b, err := os.ReadFile(filepath.Join(dir, l.Previous)) // #nosec G304 -- reads a path the operator or the test harness named
			if err != nil {
				return nil, err
			}
			p.Logs[l.Container+"/previous"] = string(b)
			p.Restarts[l.Container] = int32(l.Restarts) // #nosec G115 -- a simulated restart count
		}
		pods = append(pods, p)
	}
	return pods, nil
}
