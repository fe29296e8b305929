#!/usr/bin/env bash
# `make install` layout: a consumer builds against the installed library via
# pkg-config and via find_package(quiver), and runs.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
cmake --install "$QV_BINARY_DIR" --prefix "$prefix" > /dev/null
for f in include/quiver/format.h include/quiver/ipc.h bin/quiver; do
  test -e "$prefix/$f" || { echo "missing $f after install"; exit 1; }
done
libdir=$(dirname "$(find "$prefix" -name libquiver.so | head -n 1)")
test -f "$libdir/libquiver.a" || { echo "missing libquiver.a"; exit 1; }
extra=()
if grep -q '^QV_SANITIZE:BOOL=ON' "$QV_BINARY_DIR/CMakeCache.txt"; then
  extra=(-fsanitize=address,undefined)
fi
cat > "$tmp/consumer.c" <<'C'
#include <quiver/format.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  QvMessage m = {0};
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_SCHEMA;
  uint8_t *buf; size_t n; QvError err;
  if (qv_message_encode(&m, &buf, &n, &err)) return 1;
  QvMessage back;
  if (qv_message_decode(buf, n, NULL, &back, &err)) { puts(err.message); return 1; }
  int ok = back.header_type == QV_HEADER_SCHEMA && back.version == QV_METADATA_V5;
  qv_message_reset(&back);
  free(buf);
  puts(ok ? "consumer ok" : "consumer mismatch");
  return ok ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc "${extra[@]}" "$tmp/consumer.c" $(pkg-config --cflags --libs quiver) -Wl,-rpath,"$libdir" -o "$tmp/consumer_pc"
"$tmp/consumer_pc"
mkdir -p "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(quiver REQUIRED)
add_executable(consumer_cmake $tmp/consumer.c)
target_link_libraries(consumer_cmake PRIVATE quiver::quiver)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="${extra[*]:-}" -DCMAKE_EXE_LINKER_FLAGS="${extra[*]:-}" > /dev/null
cmake --build "$tmp/cm/build" > /dev/null
"$tmp/cm/build/consumer_cmake"
"$prefix/bin/quiver" --help | grep -q inspect
echo "install: 3 passed, 0 failed"
