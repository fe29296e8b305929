#!/usr/bin/env bash
# Runs every benchmark built in BUILD/ (see bench/README.md for the figures),
# then bench_cheap_baseline.sh.
# Every benchmark runs even when an earlier one misses a target (a benchmark
# exits non-zero then); the names of those that did are listed at the end,
# and the exit status is non-zero if any did.
set -uo pipefail
build=${1:?build dir}
missed=()
for b in "$build"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b" || missed+=("$(basename "$b")")
done
# cheap checks from memory against the parent of issue 26's first commit,
# side by side (builds that commit's library in a temporary worktree)
echo "== bench_cheap_baseline.sh"
bash "$(dirname "$0")/bench_cheap_baseline.sh" "$build" || missed+=("bench_cheap_baseline.sh")
if [ ${#missed[@]} -gt 0 ]; then
  echo "== missed a target or failed: ${missed[*]}"
  exit 1
fi
echo "== every benchmark met its targets"
