// Package demo runs the project on the built-in demo run: the simulator's
// "demo" scenario loaded into a real Prometheus on 127.0.0.1. `mage demo`
// exports it (the README's first command); `mage demoServe` keeps the
// Prometheus up for Grafana until Ctrl-C.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/internal/promtest"
	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/cli"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/export"
	"github.com/substrate/density/pkg/harvest"
)

// Scenario is the simulator scenario of the demo run.
const Scenario = "demo"

// Generate writes the demo run into dir (replacing an earlier one) and
// returns its ground truth.
func Generate(dir string) (*simrun.Truth, error) {
	sc, ok := simrun.ByName(Scenario)
	if !ok {
		return nil, fmt.Errorf("simulator has no %q scenario", Scenario)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clearing %s: %w", dir, err)
	}
	tr, err := simrun.Generate(sc, dir)
	if err != nil {
		return nil, fmt.Errorf("generating the demo run: %w", err)
	}
	return tr, nil
}

// start generates the run and launches Prometheus loaded with it; the
// Prometheus data lives outside the run directory.
func start(ctx context.Context, dir string) (*simrun.Truth, *promtest.Server, error) {
	tr, err := Generate(dir)
	if err != nil {
		return nil, nil, err
	}
	work, err := os.MkdirTemp("", "density-demo-prometheus-")
	if err != nil {
		return nil, nil, err
	}
	srv, err := promtest.Launch(ctx, filepath.Join(dir, simrun.OMFile), work)
	if err != nil {
		os.RemoveAll(work)
		return nil, nil, fmt.Errorf("starting Prometheus: %w", err)
	}
	return tr, srv, nil
}

// Export generates the demo run into dir, loads it into a Prometheus on
// loopback, runs the export against it and prints where the artifacts are
// with a short summary. It returns the export's exit code.
func Export(ctx context.Context, dir string, stdout, stderr io.Writer) int {
	t0 := time.Now()
	_, srv, code := exportDemo(ctx, dir, stdout, stderr)
	if srv != nil {
		stop(srv)
	}
	if code == cli.ExitOK {
		fmt.Fprintf(stdout, "\ndemo: done in %s\n", time.Since(t0).Round(time.Millisecond))
		nextSteps(stdout, dir)
	}
	return code
}

// GatesExample is the example gates file, relative to the repository root.
const GatesExample = "docs/examples/gates.yaml"

// nextSteps is the demo's closing lines: what to open and what to try.
func nextSteps(w io.Writer, dir string) {
	fmt.Fprintf(w, "\nOpen %s in a browser (one offline page: frontiers, packing, PSI, snapshots, OOM).\n", filepath.Join(dir, "report.html"))
	fmt.Fprintln(w, "Try next:")
	fmt.Fprintf(w, "  go run ./cmd/density check --run-dir %s --gates %s   # gates; exit 3: the run's pod OOM kills fail one\n", dir, GatesExample)
	fmt.Fprintln(w, "  go run github.com/magefile/mage demoStore   # a month of nightly runs in ./demo-store; prints compare, regressions and report commands")
	fmt.Fprintln(w, "  go run ./cmd/density regressions --store \"$PWD/demo-store\" --test-name actor-density   # after demoStore; exit 4: a planted regression")
	fmt.Fprintln(w, "  go run github.com/magefile/mage demoServe   # demoStore, then Prometheus with the demo run for Grafana (docker compose up)")
}

// exportDemo generates, loads and exports the demo run; the caller stops the
// returned server (nil when it never started).
func exportDemo(ctx context.Context, dir string, stdout, stderr io.Writer) (*simrun.Truth, *promtest.Server, int) {
	tr, srv, err := start(ctx, dir)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return nil, nil, cli.ExitWrite
	}
	fmt.Fprintf(stdout, "demo: run %q generated in %s, Prometheus at %s (loaded in %s)\n",
		tr.Scenario, dir, srv.URL, (srv.LoadTime + srv.ReadyTime).Round(time.Millisecond))

	args := []string{
		"--run-dir", dir, "--prometheus-url", srv.URL,
		"--test-name", tr.TestName, "--tag", tr.Tag,
		"--start", strconv.FormatInt(tr.Start, 10), "--end", strconv.FormatInt(tr.End, 10),
		"--atelet-lag-s", strconv.FormatInt(tr.LagS, 10),
		// The phase breakdown reads the pod logs the simulator wrote, as
		// for a run whose pods are gone.
		"--phase-logs", filepath.Join(dir, simrun.PhaseLogDir),
	}
	o, err := export.ParseFlags(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return tr, srv, cli.ExitUsage
	}
	// The cluster facts come from a fake Kubernetes API on loopback holding
	// the simulator's nodes and the pods alive at the end of the run.
	kube := kubefake.New(kubefake.SimulatedCluster(tr))
	defer kube.Close()
	env := export.DefaultEnv(stdout, stderr)
	env.Kube = func(a cluster.Access) (kubernetes.Interface, error) {
		return kubernetes.NewForConfig(&rest.Config{Host: kube.URL, Timeout: a.Timeout})
	}
	out, code := export.Execute(ctx, o, env)
	if code != cli.ExitOK {
		return tr, srv, code
	}
	fmt.Fprintf(stdout, "\nArtifacts:\n  %s\n  %s\n", out.ServerSummary, out.StatsJSONL)
	for _, f := range []string{out.PSISeries, out.Notices, out.Report} {
		if f != "" {
			fmt.Fprintf(stdout, "  %s\n", f)
		}
	}
	fmt.Fprintln(stdout)
	Summarize(stdout, out.Result)
	return tr, srv, cli.ExitOK
}

func stop(srv *promtest.Server) {
	srv.Close()
	os.RemoveAll(srv.Dir)
}

// Summarize prints the headline numbers of a harvest for a human.
func Summarize(w io.Writer, r *harvest.Result) {
	fmt.Fprintf(w, "  packing ratio       p50 %s  p99 %s\n", num(r.Packing.Summary.P50), num(r.Packing.Summary.P99))
	fmt.Fprintf(w, "  checkpoints         %s in the steady window (%s cumulative)\n",
		integer(r.Snapshots.CheckpointsInWindow), integer(r.Snapshots.CheckpointsCumulative))
	fmt.Fprintf(w, "  restore latency     p99 %s s\n", num(r.Snapshots.RestoreP99S))
	fmt.Fprintf(w, "  active actors       p50 %s\n", num(r.ActiveActors.Summary.P50))
}

func num(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

func integer(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

// Serve does what Export does (so ./demo-run holds the artifacts the
// Docker stack's results store shows) and then keeps the Prometheus up,
// printing its URL and the run's range, until ctx is done (Ctrl-C).
func Serve(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	tr, srv, code := exportDemo(ctx, dir, stdout, stderr)
	if srv != nil {
		defer stop(srv)
	}
	if code != cli.ExitOK {
		return fmt.Errorf("demo export: exit %d", code)
	}
	fmt.Fprintf(stdout, "\ndemo: Prometheus with the demo run at %s\n", srv.URL)
	fmt.Fprintf(stdout, "demo: run %s/%s from %s to %s (Unix %d..%d); dashboard range: from=%d000&to=%d000\n",
		tr.TestName, tr.Tag, time.Unix(tr.Start, 0).UTC().Format(time.RFC3339), time.Unix(tr.End, 0).UTC().Format(time.RFC3339),
		tr.Start, tr.End, tr.Start, tr.End)
	fmt.Fprintln(stdout, "demo: press Ctrl-C to stop")
	<-ctx.Done()
	fmt.Fprintln(stdout, "demo: stopping Prometheus")
	return nil
}
