#!/usr/bin/env bash
# `make demo`: quiver's main job on the bundled example data.
set -euo pipefail
cli=${1:?path to the quiver binary}
here=$(cd "$(dirname "$0")" && pwd)
data="$here/data"

step() { printf '\n== %s\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

step "Every message of Arrow files written by Arrow C++ (tensor, CSR sparse tensor, record batch file)" \
  "$cli" inspect "$data/arrow_cpp_tensor_3x4_colmajor.arrow"
step "" "$cli" inspect "$data/arrow_cpp_csr_6x4.arrow"
step "" "$cli" inspect "$data/arrow_cpp_record_batches.arrow"
echo
echo "== A damaged file gets a clear error and exit status 1, never a crash"
head -c 300 "$data/arrow_cpp_tensor_3x4_colmajor.arrow" > "${TMPDIR:-/tmp}/quiver-demo-truncated.arrow"
echo "\$ quiver inspect truncated.arrow"
if "$cli" inspect "${TMPDIR:-/tmp}/quiver-demo-truncated.arrow"; then
  echo "demo: expected a failure on the truncated file" >&2; exit 1
else
  echo "(exit status $?)"
fi
rm -f "${TMPDIR:-/tmp}/quiver-demo-truncated.arrow"
