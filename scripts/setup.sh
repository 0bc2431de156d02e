#!/usr/bin/env bash
# Installs what the demo, builds and tests need on a fresh Debian machine of
# this kind (root, Go, Node 20, npm). Two parts, each idempotent (a second
# run only checks), in either order:
#
#   bash scripts/setup.sh demo   what `mage demo` needs: Prometheus and promtool
#                                (Debian's, unless on PATH or PROMETHEUS_BIN /
#                                PROMTOOL_BIN name them) and the Go modules the
#                                Magefile and the demo compile
#   bash scripts/setup.sh [all]  the demo's part, then everything the tests need:
#                                VictoriaMetrics, etcd, Chromium, the Inter font and
#                                python3-junitparser from Debian, every Go module,
#                                golangci-lint, frontend dependencies from npm, and a
#                                cached kube-apiserver and Thanos (built once per
#                                machine, cached outside the clone)
set -euo pipefail
cd "$(dirname "$0")/.."

part=${1:-all}
case "$part" in
demo | all) ;;
*)
  echo "usage: bash scripts/setup.sh [demo|all]" >&2
  exit 2
  ;;
esac

apt_install() {
  [ $# -gt 0 ] || return 0
  echo "setup: apt-get install $*"
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "$@"
}

# has_bin NAME VAR: VAR names an executable, or NAME is on PATH.
has_bin() {
  local override=${!2:-}
  if [ -n "$override" ]; then [ -x "$override" ]; else command -v "$1" >/dev/null; fi
}

# The demo's part.
if ! has_bin prometheus PROMETHEUS_BIN || ! has_bin promtool PROMTOOL_BIN; then
  apt_install prometheus
fi
# Loading the packages downloads exactly the modules they need: the
# Magefile's closure (the mage tag; it imports internal/demo) and mage itself.
echo "setup: go modules of the demo"
go list -deps -tags mage . github.com/magefile/mage >/dev/null
if [ "$part" = demo ]; then
  echo "setup: demo part done; next: go run github.com/magefile/mage demo"
  exit 0
fi

apt_pkgs=()
command -v victoria-metrics >/dev/null || apt_pkgs+=(victoria-metrics)
command -v etcd >/dev/null || apt_pkgs+=(etcd-server)
# The editor gallery test (mage gallery) drives Debian's headless Chromium;
# Inter is the first font of Grafana's theme, so the screenshots use it.
command -v chromium >/dev/null || apt_pkgs+=(chromium)
dpkg -s fonts-inter >/dev/null 2>&1 || apt_pkgs+=(fonts-inter)
# The report's browser test counts its printed pages with pdfinfo.
command -v pdfinfo >/dev/null || apt_pkgs+=(poppler-utils)
# The JUnit output of the gates is read back by an independent parser.
dpkg -s python3-junitparser >/dev/null 2>&1 || apt_pkgs+=(python3-junitparser)
apt_install "${apt_pkgs[@]}"
# The Debian packages start services on install where systemd runs; the tests
# start their own servers on free loopback ports, so nothing else is needed.

if ! command -v golangci-lint >/dev/null && [ ! -x "$(go env GOPATH)/bin/golangci-lint" ]; then
  echo "setup: go install golangci-lint"
  go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
fi

# mage security: gosec (what Grafana's plugin validator runs) and govulncheck
# (with the offline database in ../shared/vulndb).
if ! command -v gosec >/dev/null && [ ! -x "$(go env GOPATH)/bin/gosec" ]; then
  echo "setup: go install gosec"
  go install github.com/securego/gosec/v2/cmd/gosec@v2.30.0
fi
if ! command -v govulncheck >/dev/null && [ ! -x "$(go env GOPATH)/bin/govulncheck" ]; then
  echo "setup: go install govulncheck"
  go install golang.org/x/vuln/cmd/govulncheck@v1.9.0
fi

echo "setup: go mod download"
go mod download

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi

if [ -x scripts/kube-apiserver.sh ]; then
  echo "setup: kube-apiserver (cached build)"
  scripts/kube-apiserver.sh >/dev/null
fi
if [ -x scripts/thanos.sh ]; then
  echo "setup: thanos (cached build)"
  scripts/thanos.sh >/dev/null
fi
echo "setup: done"
