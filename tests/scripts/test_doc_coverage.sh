#!/usr/bin/env bash
# Every QV_API declaration in include/quiver/ has a Doxygen comment
# (/** ... */ right above it): tests/scripts/check_doc_coverage.py. The
# checker is first shown a header with an undocumented declaration and a
# plain /* */ one, which it must refuse, so this test can fail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${QV_SOURCE_DIR:-$here/../..}
py=$(command -v python3 || true)
[ -n "$py" ] || { echo "skipped: python3 not available"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/bad.h" <<'H'
/** Documented. */
QV_API int qv_good(void);
/* A plain comment Doxygen does not see. */
QV_API int qv_plain(void);
QV_API int qv_bare(void);
H
if "$py" "$here/check_doc_coverage.py" "$tmp/bad.h" > "$tmp/out"; then
  echo "FAIL: the checker accepted undocumented declarations"; cat "$tmp/out"; exit 1
fi
grep -q 'bad.h:4: qv_plain' "$tmp/out" && grep -q 'bad.h:5: qv_bare' "$tmp/out" && ! grep -q qv_good "$tmp/out" \
  || { echo "FAIL: the checker's report is wrong:"; cat "$tmp/out"; exit 1; }
"$py" "$here/check_doc_coverage.py" "$src"/include/quiver/*.h
# quiver/quiver.h includes every public header.
missing=0
for h in "$src"/include/quiver/*.h; do
  name=$(basename "$h")
  [ "$name" = quiver.h ] && continue
  grep -q "^#include \"quiver/$name\"" "$src/include/quiver/quiver.h" || { echo "FAIL: quiver/quiver.h does not include quiver/$name"; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
echo "ok: quiver/quiver.h includes every public header"
