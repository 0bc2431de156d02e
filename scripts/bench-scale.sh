#!/usr/bin/env bash
# Scale run (not part of CI): a simulated large cluster written straight
# into a Prometheus TSDB block by tools/tsdbgen, a Prometheus 2.42 started
# over it, `density export` run once through a recording proxy, a results
# table with checks against the generator's ground truth, and the
# datasource's run-overview dashboard over the same run, with the export's
# artifacts in a file:// results store and without them.
#
# Size (environment, defaults = the issue's cluster):
#   NODES=500 PODS=5000 HOURS=24 STEP=10 RESTARTS=20
# Other knobs:
#   WORK=/tmp/density-bench-scale   work directory (emptied first; needs
#                                   ~1.7 GiB per 100 M samples of disk)
#   EXPORT_ARGS="--timeout 60s"      extra `density export` flags
#   KEEP=1                          keep WORK (blocks, logs) afterwards
#   REUSE=1                         reuse WORK's generated block if present
#                                   (e.g. a second export with other flags)
#   REPORT=WORK/report.md           where the table goes
#   DATASOURCE=0                    skip the datasource panel latency
#                                   (pkg/plugin TestScalePanelLatency,
#                                   appended to REPORT)
#   SOURCES=stored,stored-nopsi,harvested,trend
#                                   which datasource loads to measure (all
#                                   by default): the run stored with
#                                   psi_series.json, stored without it, not
#                                   stored (harvested), and the Runs over
#                                   time summary over 30 stored copies
#   DS_TIMEOUT=60                    the datasource's timeoutSeconds for
#                                   those loads (default: its 5 s / 8 s)
# Output: REPORT (also printed). Exit 1 when a check fails.
#
# Measured on the 2-core, 24 GiB machine (docs/performance.md): the full
# size generates in ~2.5 min (1.2 G samples, 3.3 GiB block, 5.6 GiB RSS).
# Careful with long timeouts at full size: Prometheus 2.42 evaluating eight
# 24 h x 5,000-series range queries at once passed 19 GiB RSS; add
# --max-concurrency 2 to EXPORT_ARGS (peak ~9.5 GiB) on a machine this size.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

NODES=${NODES:-500}
PODS=${PODS:-5000}
HOURS=${HOURS:-24}
STEP=${STEP:-10}
RESTARTS=${RESTARTS:-20}
WORK=${WORK:-/tmp/density-bench-scale}
REPORT=${REPORT:-$WORK/report.md}
EXPORT_ARGS=${EXPORT_ARGS:-}
PROM=${PROMETHEUS_BIN:-/usr/bin/prometheus}

[ -x "$PROM" ] || { echo "bench-scale: $PROM missing: apt-get install -y --no-install-recommends prometheus" >&2; exit 2; }

if [ "${REUSE:-}" != 1 ] || [ ! -f "$WORK/truth.json" ]; then
  rm -rf "$WORK"
fi
mkdir -p "$WORK/bin"
rm -rf "$WORK/out" "$WORK/proxy.addr" "$WORK"/requests.jsonl "$WORK"/prom-*.metrics "$WORK"/export.* "$WORK/prom.log"

echo "bench-scale: building tsdbgen and density"
(cd tools/tsdbgen && go build -o "$WORK/bin/tsdbgen" .)
go build -o "$WORK/bin/density" ./cmd/density
tsdbgen=$WORK/bin/tsdbgen

if [ ! -f "$WORK/truth.json" ]; then
  echo "bench-scale: generating $NODES nodes, $PODS pods, ${HOURS} h at ${STEP} s, $RESTARTS restarts"
  "$tsdbgen" generate --out "$WORK" --nodes "$NODES" --pods "$PODS" --hours "$HOURS" --step "$STEP" --restarts "$RESTARTS"
fi
field() { sed -n "s/^  \"$1\": \([0-9]*\),*$/\1/p" "$WORK/truth.json"; }
start=$(field start_ts)
end=$(field end_ts)

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-}" != 1 ]; then rm -rf "$WORK/data" "$WORK/bin"; fi
}
trap cleanup EXIT

port=19090
while (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1h
  evaluation_interval: 1h
EOF
echo "bench-scale: starting Prometheus on 127.0.0.1:$port over $WORK/data"
t0=$(date +%s)
"$PROM" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
  --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" \
  --log.level=warn >"$WORK/prom.log" 2>&1 &
pids+=($!)
"$tsdbgen" fetch --wait 15m "http://127.0.0.1:$port/-/ready" >/dev/null
echo "bench-scale: Prometheus ready after $(($(date +%s) - t0)) s"

"$tsdbgen" proxy --upstream "http://127.0.0.1:$port" --log "$WORK/requests.jsonl" --addr-file "$WORK/proxy.addr" &
pids+=($!)
for _ in $(seq 100); do [ -s "$WORK/proxy.addr" ] && break; sleep 0.1; done
proxy=$(cat "$WORK/proxy.addr")

"$tsdbgen" fetch "http://127.0.0.1:$port/metrics" >"$WORK/prom-before.metrics"
echo "bench-scale: density export --start $start --end $end $EXPORT_ARGS"
# shellcheck disable=SC2086 # EXPORT_ARGS is a list of flags
"$tsdbgen" exec --rusage "$WORK/export.rusage.json" -- "$WORK/bin/density" export \
  --run-dir "$WORK/run" --out "$WORK/out" --start "$start" --end "$end" \
  --prometheus-url "$proxy" --test-name scale --tag bench --no-cluster-facts --no-wait $EXPORT_ARGS \
  >"$WORK/export.log" 2>&1 || true
"$tsdbgen" fetch "http://127.0.0.1:$port/metrics" >"$WORK/prom-after.metrics"
sed -n '1,40p' "$WORK/export.log"

status=0
"$tsdbgen" report --dir "$WORK" | tee "$REPORT" || status=$?
if [ "${DATASOURCE:-1}" != 0 ]; then
  echo "bench-scale: datasource panels, cold and cached (TestScalePanelLatency)"
  DENSITY_SCALE_DIR="$WORK" DENSITY_SCALE_PROM="http://127.0.0.1:$port" DENSITY_SCALE_REPORT="$WORK/datasource.md" \
    DENSITY_SCALE_SOURCES="${SOURCES:-}" DENSITY_SCALE_TIMEOUT="${DS_TIMEOUT:-}" \
    go test ./pkg/plugin -run '^TestScalePanelLatency$' -count=1 -timeout 30m >"$WORK/datasource.log" 2>&1 || status=1
  { echo; cat "$WORK/datasource.md" 2>/dev/null || tail -20 "$WORK/datasource.log"; } | tee -a "$REPORT"
fi
echo "bench-scale: report in $REPORT"
exit $status
