#!/usr/bin/env bash
# The ABI of libquiver.so is what include/quiver/ declares: every dynamic
# symbol the library defines must be a name declared (with QV_API) in a public
# header, and every QV_API name must be exported.
set -euo pipefail
lib=$(find "$QV_BINARY_DIR" -maxdepth 1 -name 'libquiver.so' | head -n 1)
if [ -z "$lib" ]; then echo "libquiver.so not built"; exit 1; fi
command -v nm > /dev/null || { echo "nm not available: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Defined, global, dynamic symbols (functions and data), without versions; a
# sanitizer build adds its own instrumentation symbols (__odr_asan.*), which are
# not part of the ABI.
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' \
  | grep -v -E '^(_init|_fini|__bss_start|_edata|_end)$' \
  | grep -v -E '^__(odr_asan|asan|ubsan|sanitizer)' | sort -u > "$tmp/exported"
# Names declared with QV_API: the identifier before '(' or '[' on the line.
grep -h -E '^QV_API ' "$QV_SOURCE_DIR"/include/quiver/*.h \
  | sed -E 's/^QV_API //; s/\(.*//; s/\[.*//' | grep -o -E '[A-Za-z_][A-Za-z0-9_]*$' \
  | sort -u > "$tmp/declared"
n_exp=$(wc -l < "$tmp/exported")
n_dec=$(wc -l < "$tmp/declared")
status=0
undeclared=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$undeclared" ]; then
  echo "exported by libquiver.so but declared in no public header:"
  echo "$undeclared" | sed 's/^/  /'
  status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
  echo "declared QV_API but not exported (no definition?):"
  echo "$missing" | sed 's/^/  /'
  status=1
fi
# Every exported name carries the library's prefix.
unprefixed=$(grep -v -E '^qv_' "$tmp/exported" || true)
if [ -n "$unprefixed" ]; then
  echo "exported without the qv_ prefix:"; echo "$unprefixed" | sed 's/^/  /'; status=1
fi
# A symbol's name says whether it is public: the static library's global
# symbols are the public qv_ names declared in include/quiver/ and the
# internal qvi_ ones, nothing else (no internal function with the public
# prefix, no unprefixed name to clash with a program's own).
nm -g --defined-only "$QV_BINARY_DIR/libquiver.a" 2> /dev/null \
  | awk 'NF == 3 && $2 ~ /^[TDBRVW]$/ {print $3}' \
  | grep -v -E '^__(odr_asan|asan|ubsan|sanitizer)' | sort -u > "$tmp/static_all" || true
if [ ! -s "$tmp/static_all" ]; then echo "libquiver.a has no symbols (not built?)"; status=1; fi
grep -v -E '^(qv_|qvi_)' "$tmp/static_all" > "$tmp/static_unprefixed" || true
if [ -s "$tmp/static_unprefixed" ]; then
  echo "libquiver.a defines global symbols with neither the qv_ nor the qvi_ prefix:"
  sed 's/^/  /' "$tmp/static_unprefixed"; status=1
fi
grep -E '^qv_' "$tmp/static_all" | comm -23 - "$tmp/declared" > "$tmp/static_undeclared" || true
if [ -s "$tmp/static_undeclared" ]; then
  echo "libquiver.a defines qv_ symbols no public header declares (internal ones are qvi_):"
  sed 's/^/  /' "$tmp/static_undeclared"; status=1
fi
n_int=$(grep -c -E '^qvi_' "$tmp/static_all" || true)
if [ $status -eq 0 ]; then
  echo "libquiver.so exports $n_exp symbols, all declared in include/quiver/ ($n_dec declared); libquiver.a adds $n_int internal qvi_ symbols"
fi
exit $status
