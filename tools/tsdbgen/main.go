// Command tsdbgen is the scale-test helper of scripts/bench-scale.sh and
// scripts/bench-export.sh:
//
//	tsdbgen generate --out DIR [--nodes 500 --pods 5000 --hours 24 ...]
//	    writes a simulated cluster's telemetry straight into one Prometheus
//	    TSDB block (DIR/data), the run's Locust files (DIR/run) and the
//	    ground truth the export must find (DIR/truth.json);
//	tsdbgen proxy --upstream URL --log FILE --addr-file FILE
//	    a recording reverse proxy: one JSON line per request (query, range,
//	    step, status, answer bytes, refused for the sample budget);
//	tsdbgen exec --rusage FILE -- CMD ARGS...
//	    runs CMD and writes its wall time, CPU time and peak RSS;
//	tsdbgen fetch [--wait D] URL
//	    prints a URL's body, retrying until it answers 200 (readiness, /metrics);
//	tsdbgen report --dir DIR
//	    prints the results table and checks the export against truth.json
//	    (exit 1 on a failed check).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tsdbgen generate|proxy|exec|fetch|report [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "generate":
		err = cmdGenerate(ctx, os.Args[2:])
	case "proxy":
		err = cmdProxy(ctx, os.Args[2:])
	case "exec":
		err = cmdExec(ctx, os.Args[2:])
	case "fetch":
		err = cmdFetch(ctx, os.Args[2:])
	case "report":
		err = cmdReport(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tsdbgen %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
