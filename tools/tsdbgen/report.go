package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// cmdReport reads what bench-scale.sh left in --dir (truth.json,
// requests.jsonl, export.rusage.json, out/server_summary.json and, when
// present, prom-before.metrics / prom-after.metrics) and prints the results
// table and the checks. A failed check makes it exit 1.
func cmdReport(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	dir := fs.String("dir", "", "bench-scale work directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var tr Truth
	if err := readJSON(filepath.Join(*dir, "truth.json"), &tr); err != nil {
		return err
	}
	var use Usage
	if err := readJSON(filepath.Join(*dir, "export.rusage.json"), &use); err != nil {
		return err
	}
	reqs, err := readRequests(filepath.Join(*dir, "requests.jsonl"))
	if err != nil {
		return err
	}
	var summary map[string]any
	summaryErr := readJSON(filepath.Join(*dir, "out", "server_summary.json"), &summary)

	var total, maxBytes, maxPoints int64
	var ranges, instants, refused, failed int
	for _, r := range reqs {
		total += r.Bytes
		maxBytes = max(maxBytes, r.Bytes)
		if p := r.Points(); p > 0 {
			ranges++
			maxPoints = max(maxPoints, p)
		} else {
			instants++
		}
		if r.Refused {
			refused++
		}
		if r.Status != 200 {
			failed++
		}
	}
	p := tr.Params
	fmt.Fprintf(w, "| scale run | value |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(w, "| %s | %v |\n", k, v) }
	row("size", fmt.Sprintf("%d nodes, %d worker pods, %.4g h at %d s, %d atelet restarts", p.Nodes, p.Pods, p.Hours, p.StepS, p.Restarts))
	row("series / samples written", fmt.Sprintf("%d / %d", tr.Series, tr.Samples))
	row("generation (append + block write)", fmt.Sprintf("%.0f s + %.0f s, block %.0f MiB, generator peak RSS %.0f MiB", tr.GenSeconds, tr.FlushSecs, float64(tr.BlockBytes)/(1<<20), tr.PeakRSSMiB))
	row("export exit code", use.ExitCode)
	row("export wall time", fmt.Sprintf("%.1f s", use.WallS))
	row("export CPU (user+sys)", fmt.Sprintf("%.1f s (%.0f %% of wall)", use.UserS+use.SysS, 100*(use.UserS+use.SysS)/use.WallS))
	row("export peak RSS", fmt.Sprintf("%.0f MiB", use.PeakRSSMiB))
	row("Prometheus requests (range / instant)", fmt.Sprintf("%d (%d / %d)", len(reqs), ranges, instants))
	row("answer bytes on the wire (gzip) total / largest", fmt.Sprintf("%.1f MiB / %.1f MiB", float64(total)/(1<<20), float64(maxBytes)/(1<<20)))
	row("most points per series in one range request", maxPoints)
	row("requests refused for too many samples", refused)
	row("requests answered non-200", failed)
	if before, after := readProm(filepath.Join(*dir, "prom-before.metrics")), readProm(filepath.Join(*dir, "prom-after.metrics")); after != nil {
		row("Prometheus CPU during the export", fmt.Sprintf("%.1f s", after["process_cpu_seconds_total"]-before["process_cpu_seconds_total"]))
		row("Prometheus RSS after the export", fmt.Sprintf("%.0f MiB", after["process_resident_memory_bytes"]/(1<<20)))
	}

	// The largest answers, to show where the bytes go.
	sorted := append([]Request(nil), reqs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Bytes > sorted[j].Bytes })
	fmt.Fprintf(w, "\nlargest answers:\n")
	for _, r := range sorted[:min(8, len(sorted))] {
		q := r.Query
		if len(q) > 110 {
			q = q[:110] + "..."
		}
		note := ""
		if r.Status != 200 {
			note = fmt.Sprintf(" [HTTP %d: %.80s]", r.Status, strings.TrimSpace(r.Error))
		}
		fmt.Fprintf(w, "  %8.1f MiB %7.0f ms %s%s\n", float64(r.Bytes)/(1<<20), r.Millis, q, note)
	}

	fmt.Fprintf(w, "\nchecks:\n")
	bad := 0
	check := func(name string, ok bool, detail string) {
		verdict := "PASS"
		if !ok {
			verdict = "FAIL"
			bad++
		}
		fmt.Fprintf(w, "  %s %s: %s\n", verdict, name, detail)
	}
	check("export exit code", use.ExitCode == 0, strconv.Itoa(use.ExitCode))
	check("no range request over 11,000 points per series", maxPoints <= 11000, strconv.FormatInt(maxPoints, 10))
	check("no request refused for its sample budget", refused == 0, strconv.Itoa(refused))
	if summaryErr != nil {
		check("server_summary.json", false, summaryErr.Error())
	} else {
		want := []struct {
			path string
			v    int64
		}{
			{"node_psi.nodes", int64(tr.Nodes)},
			{"pod_psi.pods", int64(tr.Pods)},
			{"active_actors.atelets", int64(tr.Atelets)},
			{"snapshots.checkpoints_in_window", tr.CheckpointsInWindow},
			{"snapshots.checkpoints_cumulative", tr.CheckpointsCumulative},
		}
		for _, c := range want {
			got := lookup(summary, c.path)
			check(c.path, got == strconv.FormatInt(c.v, 10), fmt.Sprintf("got %s, want %d", got, c.v))
		}
		for _, k := range []string{"cluster_packing.summary.p50", "node_psi.cpu_stall_pct.p50", "pod_psi.cpu_stall_pct.p50",
			"working_set.node.summary.p50", "working_set.worker.summary.p50", "working_set.atelet.summary.p50",
			"working_set.actor.summary.p50", "working_set.per_actor.summary.p50", "snapshots.restore_p99_s"} {
			got := lookup(summary, k)
			check(k+" measured", got != "null", got)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d check(s) failed", bad)
	}
	return nil
}

func lookup(m map[string]any, path string) string {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "null"
		}
		cur = mm[k]
	}
	switch v := cur.(type) {
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

func readRequests(path string) ([]Request, error) {
	f, err := os.Open(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// readProm reads un-labelled samples of a /metrics dump (nil if absent).
func readProm(path string) map[string]float64 {
	b, err := os.ReadFile(path) // #nosec G304 -- reads a path the operator or the test harness named
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[name] = f
		}
	}
	return out
}
