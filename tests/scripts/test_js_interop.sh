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
if [ "${QV_INTEROP_TOOLS:-1}" = 0 ]; then
  echo "SKIP: jansson (libjansson-dev) not found: tests/interop's qv_metadata_tool is not built"
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

# Tensor and SparseTensor messages as the quiver CLI writes them: the fb
# classes and quiver must read the same metadata from the same files.
cli=${QV_CLI:?QV_CLI must point at the quiver binary}
w="$work/written"
mkdir -p "$w"
ex="$src/examples/data"
run "$cli" tensor from-npy "$ex/temperature_4x6x3_fortran.npy" "$w/dense.arrow"
for fmt in coo csr csc csf; do
  run "$cli" tensor from-npy "$ex/sparse_8x10.npy" "$w/sparse_$fmt.arrow" --sparse=$fmt --index-type=int32
done
run "$cli" tensor from-npy "$ex/sparse_8x10.npy" "$w/sparse_csf_bytes.arrow" --sparse=csf --csf-lengths=bytes
for f in "$w"/*.arrow; do
  run node "$js/interop.mjs" frames "$f" "$w/frames"
done
run dump_all "$w/frames"
run node "$js/interop.mjs" compare "$w/frames"
if ! grep -q '"headerType": "Tensor"' "$w/frames/dense_0.json" 2>/dev/null ||
   ! grep -q '"headerType": "SparseTensor"' "$w/frames/sparse_csf_0.json" 2>/dev/null; then
  echo "FAIL: apache-arrow did not see the Tensor / SparseTensor headers" >&2
  failed=1
fi

n_q=$(find "$q" -name '*.bin' | wc -l)
n_j=$(find "$j" -name '*.bin' | wc -l)
if [ "$failed" -ne 0 ]; then
  echo "js interop: FAILED (details above; $n_q quiver->js, $n_j js->quiver messages)" >&2
  exit 1
fi
n_w=$(find "$w/frames" -name '*.bin' | wc -l)
echo "js interop: $n_q quiver->js messages, $n_j js->quiver messages, $n_w CLI-written tensor messages checked"
