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

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$repo/tools/kube"
[ -f "$mod/go.sum" ] || { echo "kube-apiserver.sh: $mod/go.sum not found" >&2; exit 1; }

hash=$(sha256sum "$mod/go.sum" | cut -c1-16)
root=${SUBSTRATE_DENSITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/substrate-density}
dir="$root/kube-apiserver-$hash"
bin="$dir/kube-apiserver"

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
# One build at a time per key: a second caller waits and then reuses the result.
exec 9>"$dir/.lock"
if command -v flock >/dev/null; then flock 9; fi
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

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
