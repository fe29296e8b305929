#!/usr/bin/env bash
# Runs every benchmark built in BUILD/ (see bench/README.md for the figures).
set -euo pipefail
build=${1:?build dir}
for b in "$build"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
done
