#!/usr/bin/env bash
# Builds thanos from the pinned tools module (tools/thanos) and prints the path
# of the binary on stdout; progress goes to stderr.
#
# tools/thanos/build.flags holds the release build's tags (its .promu.yml):
# netgo, and slicelabels, without which the sidecar's gRPC codec reads
# labels in the wrong layout and panics. The binary is cached outside the
# clone, keyed by the sha256 of tools/thanos/go.sum and build.flags, so every clone on the same machine (CI included) reuses
# it: a cold build takes about 25 minutes on 2 shared cores (see
# docs/backends.md), a cached one returns at once.
#
#   THANOS=$(scripts/thanos.sh) go test ./internal/thanostest/...
#
# Environment:
#   SUBSTRATE_DENSITY_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/substrate-density)
#   THANOS_BUILD_NICE=1      build under `nice -n 19` with one package at a time,
#                            for a machine shared with other work (slower).
set -euo pipefail

# shellcheck source=scripts/toolcache.sh
. "$(dirname "${BASH_SOURCE[0]}")/toolcache.sh"
toolcache_begin thanos thanos

# Version stamped the way the Thanos release build does, so `thanos --version`
# and the build_info metric report the pinned release.
ver=$(awk '$1 == "require" && $2 == "github.com/thanos-io/thanos" {print $3}' "$mod/go.mod")
[ -n "$ver" ] || { echo "thanos.sh: no github.com/thanos-io/thanos version in $mod/go.mod" >&2; exit 1; }
pkg=github.com/prometheus/common/version
ldflags="-s -w -X $pkg.Version=${ver#v} -X $pkg.Branch=HEAD -X $pkg.Revision=$ver"
ldflags="$ldflags -X $pkg.BuildUser=substrate-density -X $pkg.BuildDate=19700101-00:00:00"

wrap=()
if [ "${THANOS_BUILD_NICE:-}" = 1 ]; then
	wrap=(nice -n 19)
	export GOFLAGS="${GOFLAGS:-} -p=1"
fi

echo "thanos.sh: building thanos $ver into $dir (cold: about 25 min on 2 shared cores)" >&2
start=$(date +%s)
tmp="$dir/thanos.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# shellcheck disable=SC2086 # build.flags is a list of go build arguments
(cd "$mod" && CGO_ENABLED=0 GOWORK=off "${wrap[@]}" go build -mod=readonly -trimpath $flags \
	-ldflags "$ldflags" -o "$tmp" github.com/thanos-io/thanos/cmd/thanos) >&2
mv -f "$tmp" "$bin"
echo "thanos.sh: built in $(( $(date +%s) - start ))s: $bin" >&2
echo "$bin"
