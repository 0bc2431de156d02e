#!/usr/bin/env bash
# Installs what builds and tests need on a fresh Debian machine of this kind
# (root, Go, Node 20, npm): Prometheus, VictoriaMetrics, etcd, Chromium, the
# Inter font and python3-junitparser from Debian, frontend dependencies from npm, and a cached
# kube-apiserver and Thanos for the Kubernetes and Thanos tests (built once per
# machine, cached outside the clone). Idempotent: a second run only
# checks.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=()
command -v prometheus >/dev/null && command -v promtool >/dev/null || apt_pkgs+=(prometheus)
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
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  echo "setup: apt-get install ${apt_pkgs[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${apt_pkgs[@]}"
fi
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
