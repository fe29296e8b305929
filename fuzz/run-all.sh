#!/usr/bin/env bash
# Runs every built fuzz target for a bounded time, starting from its seed
# corpus (copied, so the committed seeds are never modified). Fails on the
# first crash, leak, sanitizer report or timeout the fuzzer finds.
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
seconds=${2:-20}
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shopt -s nullglob
n=0
for target in "$build"/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  mkdir -p "$work/$name"
  if [ -d "$src/corpus/$name" ]; then cp -r "$src/corpus/$name/." "$work/$name/"; fi
  echo "fuzz: $name for ${seconds}s ($(ls "$work/$name" | wc -l) seeds)"
  (cd "$work" && "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -print_final_stats=0 "$work/$name" >"$work/$name.log" 2>&1) || {
    echo "fuzz: $name FAILED"; tail -n 60 "$work/$name.log"; exit 1; }
  grep -E '^(Done|#[0-9]+ +DONE)' "$work/$name.log" | tail -n 1 || true
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "fuzz: no fuzz targets were built in $build/fuzz"; exit 1; }
echo "fuzz: $n targets ran without findings"
