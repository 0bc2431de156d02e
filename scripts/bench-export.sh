#!/usr/bin/env bash
# Export performance (not part of CI): the Go benchmarks of
# pkg/export against a local Prometheus 2.42, reported as tables for
# docs/performance.md.
#
#   1. BenchmarkExportDemo: full export of the 1-hour demo run at 1, 2, 4 and
#      8 requests in flight (requests, answer bytes, export CPU share of wall,
#      Prometheus CPU share, speed-up over 1 in flight). Medians of COUNT runs.
#   2. BenchmarkExportLarge: simrun's "large" run (LARGE=<hours>:<worker
#      pods>, default 6:500 at a 10 s scrape), backfilled with promtool, one
#      `density export` subprocess through a recording proxy: wall time,
#      requests, answer bytes, peak RSS, most points per series asked in one
#      range request (the benchmark fails above 11,000); with the export's
#      defaults and with --timeout 60s. LARGE= skips it.
#      LARGE_VIA=tsdbgen writes the same size straight into TSDB blocks with
#      tools/tsdbgen instead (scripts/bench-scale.sh), for when the
#      OpenMetrics backfill is too slow.
#
# Knobs: COUNT=3 BENCHTIME=5x LARGE=6:500 LARGE_VIA=promtool OUT=/tmp/density-bench-export
# The machine is shared and has 2 cores: read ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-3}
BENCHTIME=${BENCHTIME:-5x}
LARGE=${LARGE-6:500}
LARGE_VIA=${LARGE_VIA:-promtool}
OUT=${OUT:-/tmp/density-bench-export}
mkdir -p "$OUT"

# field NAME: the value before unit NAME on a benchmark line ($0).
awk_lib='
function field(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "" }
function median(arr, n,   i, j, t) {
  for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j+1] = arr[j]; arr[j+1] = t }
  return (n % 2) ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2
}'

echo "== BenchmarkExportDemo (count $COUNT, benchtime $BENCHTIME)"
go test -run '^$' -bench '^BenchmarkExportDemo$' -benchtime "$BENCHTIME" -count "$COUNT" -timeout 30m ./pkg/export/ | tee "$OUT/demo.txt"

awk "$awk_lib"'
/^BenchmarkExportDemo\/inflight=/ && NF > 4 {
  split($1, a, /[=-]/); k = a[2]
  if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
  n[k]++
  wall[k, n[k]] = field("ns/op") / 1e6; cpu[k, n[k]] = field("export-cpu-%"); pcpu[k, n[k]] = field("prom-cpu-%")
  cms[k, n[k]] = field("export-cpu-ms/op"); req[k] = field("requests/op"); kib[k] = field("resp-KiB/op"); fail[k, n[k]] = field("failed-reads/op")
}
END {
  print ""
  print "| in flight | wall ms (median) | speed-up vs 1 | requests/export | answer KiB/export | export CPU ms | export CPU % of wall | Prometheus CPU % of wall | failed reads |"
  print "|---|---|---|---|---|---|---|---|---|"
  for (o = 1; o <= nk; o++) {
    k = order[o]
    for (i = 1; i <= n[k]; i++) { w[i] = wall[k, i]; c[i] = cpu[k, i]; p[i] = pcpu[k, i]; m[i] = cms[k, i]; f[i] = fail[k, i] }
    mw = median(w, n[k]); if (o == 1) base = mw
    printf "| %s | %.0f | %.2f | %s | %s | %.0f | %.1f | %.1f | %s |\n", k, mw, base / mw, req[k], kib[k], median(m, n[k]), median(c, n[k]), median(p, n[k]), median(f, n[k])
  }
}' "$OUT/demo.txt" | tee "$OUT/demo.md"

if [ -z "$LARGE" ]; then
  echo "== large run skipped (LARGE is empty)"
  exit 0
fi
hours=${LARGE%%:*}
pods=${LARGE##*:}

if [ "$LARGE_VIA" = tsdbgen ]; then
  echo "== large run ${hours} h, $pods worker pods via tools/tsdbgen"
  NODES=$(((pods + 19) / 20)) PODS=$pods HOURS=$hours STEP=10 RESTARTS=1 WORK="$OUT/large-tsdbgen" \
    scripts/bench-scale.sh | tee "$OUT/large.txt"
  exit "${PIPESTATUS[0]}"
fi

echo "== BenchmarkExportLarge ${hours} h, $pods worker pods (generation + promtool backfill first; minutes)"
go build -o "$OUT/density" ./cmd/density
mkdir -p "$OUT/large-work"
rm -rf "${OUT:?}/large-work/"*
DENSITY_BIN="$OUT/density" DENSITY_BENCH_DIR="$OUT/large-work" DENSITY_BENCH_LARGE="$LARGE" \
  go test -run '^$' -bench '^BenchmarkExportLarge$' -benchtime 1x -timeout 3h -v ./pkg/export/ | tee "$OUT/large.txt"
status=${PIPESTATUS[0]}
rm -rf "${OUT:?}/large-work"

awk "$awk_lib"'
/^BenchmarkExportLarge\// && NF > 4 {
  split($1, a, "/"); v = a[2]; sub(/-[0-9]+$/, "", v); names[++n] = v
  om = field("om-MiB"); gen = field("gen-s"); bf = field("backfill-s")
  wall[n] = field("export-wall-s"); cpu[n] = field("export-cpu-s"); rss[n] = field("peak-rss-MiB")
  req[n] = field("requests"); rng[n] = field("range-requests"); mib[n] = field("resp-MiB"); big[n] = field("max-resp-MiB")
  pts[n] = field("max-points"); ref[n] = field("refused"); bad[n] = field("failed"); nul[n] = field("failed-read-notices")
  pcpu[n] = field("prom-cpu-s"); prss[n] = field("prom-rss-MiB")
}
END {
  if (n == 0) exit
  printf "\nOpenMetrics generated: %.0f MiB in %.0f s; promtool backfill: %.0f s\n\n", om, gen, bf
  printf "| large run |"; for (i = 1; i <= n; i++) printf " %s |", names[i]; print ""
  printf "|---|"; for (i = 1; i <= n; i++) printf "---|"; print ""
  printf "| export wall time (s) |"; for (i = 1; i <= n; i++) printf " %.1f |", wall[i]; print ""
  printf "| export CPU (s) |"; for (i = 1; i <= n; i++) printf " %.1f |", cpu[i]; print ""
  printf "| export peak RSS (MiB) |"; for (i = 1; i <= n; i++) printf " %.0f |", rss[i]; print ""
  printf "| Prometheus requests (range) |"; for (i = 1; i <= n; i++) printf " %d (%d) |", req[i], rng[i]; print ""
  printf "| answer MiB on the wire (gzip) total / largest |"; for (i = 1; i <= n; i++) printf " %.1f / %.1f |", mib[i], big[i]; print ""
  printf "| most points per series in one range request |"; for (i = 1; i <= n; i++) printf " %d |", pts[i]; print ""
  printf "| refused (too many samples) / non-200 answers |"; for (i = 1; i <= n; i++) printf " %d / %d |", ref[i], bad[i]; print ""
  printf "| failed-read notices (null fields) |"; for (i = 1; i <= n; i++) printf " %d |", nul[i]; print ""
  printf "| Prometheus CPU during the export (s) / RSS after (MiB) |"; for (i = 1; i <= n; i++) printf " %.1f / %.0f |", pcpu[i], prss[i]; print ""
}' "$OUT/large.txt" | tee "$OUT/large.md"
exit "$status"
