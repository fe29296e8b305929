#!/usr/bin/env bash
# `make docs` without warnings: doxygen (Debian's) over include/quiver with
# docs/Doxyfile, whose WARN_AS_ERROR makes any warning (a malformed command,
# an unknown tag, a documented parameter that does not exist) fail it.
# Skipped (77) when doxygen is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${QV_SOURCE_DIR:-$here/../..}
command -v doxygen > /dev/null || { echo "skipped: doxygen not installed (apt-get install doxygen)"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$src"
if ! QV_DOCS_OUT="$out" doxygen docs/Doxyfile > "$out/log" 2>&1; then
  echo "FAIL: doxygen reported warnings:"; cat "$out/log"; exit 1
fi
if [ -s "$out/log" ]; then
  echo "FAIL: doxygen printed:"; cat "$out/log"; exit 1
fi
for page in index.html quiver_8h.html tensor__ipc_8h.html; do
  [ -s "$out/html/$page" ] || { echo "FAIL: $page was not generated"; exit 1; }
done
grep -q qv_tensor_read "$out/html/tensor__ipc_8h.html" || { echo "FAIL: qv_tensor_read is not in the reference"; exit 1; }
echo "ok: doxygen $(doxygen --version), no warnings, $(ls "$out/html" | wc -l) files"
