#!/usr/bin/env bash
# Arrow metadata interop with the apache-arrow npm package's generated
# FlatBuffers classes (tests/interop/js, installed by `npm ci`):
#   quiver -> js: qv_metadata_tool writes messages encoded by quiver with a JSON
#                 description; the apache-arrow classes must read the same values.
#   js -> quiver: the apache-arrow builders write messages with a JSON
#                 description; quiver's decoder (qv_metadata_tool dump) must
#                 produce the same JSON.
# Skips (77) only when node or the npm packages are missing.
set -euo pipefail

src=${QV_SOURCE_DIR:?QV_SOURCE_DIR must point at the source tree}
bin=${QV_BINARY_DIR:?QV_BINARY_DIR must point at the build tree}
js="$src/tests/interop/js"
tool="$bin/tests/interop/qv_metadata_tool"

if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
if [ ! -f "$js/node_modules/apache-arrow/fb/message.mjs" ] || [ ! -d "$js/node_modules/flatbuffers" ]; then
  echo "SKIP: $js/node_modules is missing; run: (cd tests/interop/js && npm ci)"
  exit 77
fi
if [ ! -x "$tool" ]; then
  echo "FAIL: $tool was not built" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
q="$work/quiver"
j="$work/js"

# Every step runs even after a failure, so one run reports every difference.
failed=0
run() {
  "$@" || failed=1
}

dump_all() {
  local dir=$1 f rc=0
  for f in "$dir"/*.bin; do
    if ! "$tool" dump "$f" >"${f%.bin}.dump.json"; then
      echo "FAIL: quiver could not decode $(basename "$f")" >&2
      rc=1
    fi
  done
  return $rc
}

# quiver -> js
"$tool" write "$q"
run node "$js/interop.mjs" check "$q"
run node "$js/interop.mjs" selftest "$q"
# quiver's own decoding of what it wrote, described the same way
run dump_all "$q"
run node "$js/interop.mjs" compare "$q"

# js -> quiver
node "$js/interop.mjs" build "$j"
run dump_all "$j"
run node "$js/interop.mjs" compare "$j"

n_q=$(find "$q" -name '*.bin' | wc -l)
n_j=$(find "$j" -name '*.bin' | wc -l)
if [ "$failed" -ne 0 ]; then
  echo "js interop: FAILED (details above; $n_q quiver->js, $n_j js->quiver messages)" >&2
  exit 1
fi
echo "js interop: $n_q quiver->js messages, $n_j js->quiver messages checked"
