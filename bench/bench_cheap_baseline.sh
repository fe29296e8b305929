#!/usr/bin/env bash
# Cheap checks from memory, this tree against "today's main" of issue 26 (the
# parent of the first #26 commit), side by side: builds that commit's
# libquiver.a from a detached worktree in a temporary directory (removed at
# the end), compiles bench/bench_cheap.c against both libraries with the
# same flags, writes one stream, and runs the two programs alternately N
# times on it. Prints both medians and the ratio (target: at most 0.6x).
#
#   bench/bench_cheap_baseline.sh BUILD [N] [BASE_COMMIT]
#
# BUILD is this tree's build directory (its libquiver.a); run from anywhere
# inside the repository. Exit status 1 when the ratio misses the target.
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
n=${2:-9}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
base=${3:-}
if [ -z "$base" ]; then
  first=$(git -C "$repo" log --format=%H --grep='^#26' | tail -1)
  [ -n "$first" ] || { echo "bench_cheap_baseline: no #26 commit in this history" >&2; exit 1; }
  base=$(git -C "$repo" rev-parse "$first^")
fi
[ -f "$build/libquiver.a" ] || { echo "bench_cheap_baseline: $build/libquiver.a missing (build first)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/qv_cheap_base.XXXXXX")
cleanup() {
  git -C "$repo" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  git -C "$repo" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT

git -C "$repo" worktree add -q --detach "$tmp/base" "$base"
cmake -S "$tmp/base" -B "$tmp/base-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQV_BUILD_TESTS=OFF \
  >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; exit 1; }
cmake --build "$tmp/base-build" --target quiver_static -j2 >"$tmp/build.log" 2>&1 ||
  { tail -30 "$tmp/build.log" >&2; exit 1; }

# the same source, flags and link line for both; only the library differs
libs=$(pkg-config --libs liblz4 libzstd jansson libdeflate libnghttp2 openssl)
cflags="-std=c11 -O2 -g -D_GNU_SOURCE"
compile() { # tree build out
  # shellcheck disable=SC2086
  cc $cflags -I"$1/include" -I"$2/include" -I"$1/src" "$repo/bench/bench_cheap.c" \
    "$2/libquiver.a" $libs -lpthread -lm -o "$3"
}
compile "$tmp/base" "$tmp/base-build" "$tmp/cheap_base"
compile "$repo" "$build" "$tmp/cheap_now"

stream="$tmp/stream.arrows"
"$tmp/cheap_now" --write "$stream"
base_t=() now_t=()
for ((i = 0; i < n; i++)); do
  base_t+=("$("$tmp/cheap_base" --read "$stream" 11)")
  now_t+=("$("$tmp/cheap_now" --read "$stream" 11)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
mb=$(median "${base_t[@]}")
mn=$(median "${now_t[@]}")
echo "cheap checks from memory, $(git -C "$repo" rev-parse --short "$base") (before #26) vs this tree," \
  "$n alternating runs, median CPU us a read of the 10-batch stream:"
echo "  base: ${base_t[*]}"
echo "  now:  ${now_t[*]}"
awk -v b="$mb" -v c="$mn" 'BEGIN {
  r = c / b
  printf "  median base %.2f us, now %.2f us: %.3fx (target <= 0.6x)%s\n", b, c, r, r <= 0.6 ? "" : "  MISSED"
  exit r <= 0.6 ? 0 : 1 }'
