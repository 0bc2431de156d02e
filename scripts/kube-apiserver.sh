#!/usr/bin/env bash
# Builds kube-apiserver from the pinned tools module (tools/kube) and prints the
# path of the binary on stdout; progress goes to stderr.
#
# The binary is cached outside the clone, keyed by the sha256 of tools/kube/go.sum,
# so every clone on the same machine (CI included) reuses it: a cold build takes
# 12-15 minutes on 2 cores and ~3 GB of RAM, a cached one returns at once.
#
#   KUBE_APISERVER=$(scripts/kube-apiserver.sh) go test ./pkg/cluster/...
#
# Environment:
#   SUBSTRATE_DENSITY_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/substrate-density)
#   KUBE_BUILD_NICE=1        build under `nice -n 19` with one package at a time,
#                            for a machine shared with other work (slower).
set -euo pipefail

# shellcheck source=scripts/toolcache.sh
. "$(dirname "${BASH_SOURCE[0]}")/toolcache.sh"
toolcache_begin kube-apiserver kube

# Version stamped the way the Kubernetes release build does, so /version and the
# kubelet-version checks see v1.37.x rather than v0.0.0-master.
ver=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$mod/go.mod")
[ -n "$ver" ] || { echo "kube-apiserver.sh: no k8s.io/kubernetes version in $mod/go.mod" >&2; exit 1; }
major=${ver#v}; major=${major%%.*}
minor=${ver#v*.}; minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$ver -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"

wrap=()
if [ "${KUBE_BUILD_NICE:-}" = 1 ]; then
	wrap=(nice -n 19)
	export GOFLAGS="${GOFLAGS:-} -p=1"
fi

echo "kube-apiserver.sh: building kube-apiserver $ver into $dir (cold: 12-15 min on 2 cores)" >&2
start=$(date +%s)
tmp="$dir/kube-apiserver.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$mod" && CGO_ENABLED=0 GOWORK=off "${wrap[@]}" go build -mod=readonly -trimpath \
	-ldflags "$ldflags" -o "$tmp" k8s.io/kubernetes/cmd/kube-apiserver) >&2
mv -f "$tmp" "$bin"
echo "kube-apiserver.sh: built in $(( $(date +%s) - start ))s: $bin" >&2
echo "$bin"
