#!/usr/bin/env bash
# Runs every fuzz target (one per fuzz/fuzz_*.c) for a bounded time, starting
# from its seed corpus fuzz/corpus/<name>/ (copied, so the committed seeds are
# never modified). Fails on the first crash, leak, sanitizer report or timeout
# the fuzzer finds, and before fuzzing at all when a source has no built
# target or a target has no seeds: fuzzing from nothing spends the time on
# finding the file format instead of exercising the reader behind it.
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
seconds=${2:-20}
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shopt -s nullglob
names=()
for source in "$src"/fuzz_*.c; do
  name=$(basename "$source" .c)
  if [ ! -x "$build/fuzz/$name" ]; then
    echo "fuzz: $name was not built ($build/fuzz/$name missing)"; exit 1
  fi
  seeds=("$src/corpus/$name"/*)
  if [ ${#seeds[@]} -eq 0 ]; then
    echo "fuzz: $name has no seed corpus: add seeds to fuzz/corpus/$name/"; exit 1
  fi
  names+=("$name")
done
[ ${#names[@]} -gt 0 ] || { echo "fuzz: no fuzz/fuzz_*.c sources in $src"; exit 1; }
for name in "${names[@]}"; do
  target="$build/fuzz/$name"
  mkdir -p "$work/$name"
  cp -r "$src/corpus/$name/." "$work/$name/"
  echo "fuzz: $name for ${seconds}s ($(ls "$work/$name" | wc -l) seeds)"
  (cd "$work" && "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -print_final_stats=0 "$work/$name" >"$work/$name.log" 2>&1) || {
    echo "fuzz: $name FAILED"; tail -n 60 "$work/$name.log"; exit 1; }
  # libFuzzer says how many seed files it read; with none it starts from an
  # empty input and says "A corpus is not provided" instead
  if ! grep -qE '^INFO: seed corpus: files: [1-9]' "$work/$name.log"; then
    echo "fuzz: $name did not load its seeds:"; head -n 20 "$work/$name.log"; exit 1
  fi
  grep -E '^(Done|#[0-9]+ +DONE)' "$work/$name.log" | tail -n 1 || true
done
echo "fuzz: ${#names[@]} targets ran without findings"
