#!/usr/bin/env bash
# The include graph follows the layers (docs/development.md, "Layout of the
# code"), checked on every quoted #include of src/, cli/ and python/src/:
#  - the wire layers (src/flatbuf, src/protobuf, src/grpc) know nothing of
#    Arrow: no src/format, src/adapters, src/tensor, src/sparse, src/array,
#    src/ipc, src/flight, src/numpy, src/integration, and of the public
#    headers only the Arrow-free ones (common, error, buffer, io, advanced,
#    version);
#  - the models (src/tensor, src/sparse, src/array) include neither src/ipc
#    nor src/format, nor the IPC public headers;
#  - the clients (cli/, python/src/, src/numpy, src/integration, src/flight)
#    include public headers (quiver/...), their own folder and src/util only;
#    src/flight also the wire layers it speaks (src/grpc, src/protobuf).
# Any crossing fails (issue 21 removed the last known ones).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${QV_SOURCE_DIR:-$here/../..}
cd "$src"
arrow_free_public='quiver/(common|error|buffer|io|advanced|version)\.h'
found=$(mktemp)
trap 'rm -f "$found"' EXIT
# file:include for every quoted include
list() { grep -H -o -E '^#include "[^"]+"' "$@" 2>/dev/null | sed -E 's/:#include "/:/; s/"$//'; }
check() { # layer-name file:include lines on stdin; prints the crossings
  while IFS=: read -r file inc; do
    dir=$(dirname "$file")
    own=$(basename "$dir")
    case "$1" in
      wire)
        if [[ "$inc" =~ ^(format|adapters|tensor|sparse|array|ipc|flight|numpy|integration)/ ]] ||
           { [[ "$inc" =~ ^quiver/ ]] && ! [[ "$inc" =~ ^$arrow_free_public$ ]]; }; then
          echo "$file:$inc"
        fi ;;
      model)
        if [[ "$inc" =~ ^(ipc|format)/ ]] || [[ "$inc" =~ ^quiver/(ipc|format|tensor_ipc|sparse_ipc|recordbatch_ipc)\.h$ ]]; then
          echo "$file:$inc"
        fi ;;
      client)
        if ! [[ "$inc" =~ ^quiver/ ]] && ! [[ "$inc" =~ ^util/ ]] && ! [[ "$inc" =~ ^$own/ ]] && [[ "$inc" == */* ]] &&
           ! { [ "$own" = flight ] && [[ "$inc" =~ ^(grpc|protobuf)/ ]]; }; then
          echo "$file:$inc"
        fi ;;
    esac
  done
}
{
  list src/flatbuf/* src/protobuf/* src/grpc/* | check wire
  list src/tensor/* src/sparse/* src/array/* | check model
  list cli/* python/src/* src/numpy/* src/integration/* src/flight/* | check client
  # the model check also covers adapters reaching into a model's internals
  list src/adapters/* | while IFS=: read -r file inc; do
    [[ "$inc" =~ ^(tensor|sparse|array)/.*_internal\.h$ ]] && echo "$file:$inc"; true
  done
} | sort -u > "$found"
status=0
if [ -s "$found" ]; then
  echo "FAIL: includes that cross the layers:"; sed 's/^/  /' "$found"; status=1
fi
[ "$status" -eq 0 ] && echo "ok: $(cat src/*/* cli/* python/src/* 2>/dev/null | grep -c '^#include "') quoted includes follow the layers"
exit $status
