# Sourced by the scripts that build a test binary once from a pinned module
# under tools/ (kube-apiserver.sh, thanos.sh); internal/toolcache finds the
# result. toolcache_begin NAME MODULE sets repo, mod, dir and bin
# (<cache>/NAME-<sha256(tools/MODULE/go.sum + build.flags)[:16]>/NAME, the
# flags file only where the module has one; it also sets flags to its
# contents); when bin is built
# it prints it and exits, else it takes the key's build lock (a second
# caller waits, then reuses the result) and returns.
toolcache_begin() {
	local name=$1 module=$2
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	mod="$repo/tools/$module"
	[ -f "$mod/go.sum" ] || { echo "$name: $mod/go.sum not found" >&2; exit 1; }
	local hash root
	flags=""
	if [ -f "$mod/build.flags" ]; then flags=$(cat "$mod/build.flags"); fi
	hash=$(cat "$mod/go.sum" ${flags:+"$mod/build.flags"} | sha256sum | cut -c1-16)
	root=${SUBSTRATE_DENSITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/substrate-density}
	dir="$root/$name-$hash"
	bin="$dir/$name"
	if [ -x "$bin" ]; then
		echo "$bin"
		exit 0
	fi
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	if command -v flock >/dev/null; then flock 9; fi
	if [ -x "$bin" ]; then
		echo "$bin"
		exit 0
	fi
}
