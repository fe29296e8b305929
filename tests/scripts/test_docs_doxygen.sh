#!/usr/bin/env bash
# `make docs` without warnings: doxygen (Debian's) over include/quiver with
# docs/Doxyfile, whose WARN_AS_ERROR makes any warning fail it: a malformed
# command, an unknown tag, a documented parameter that does not exist, and
# (WARN_IF_UNDOCUMENTED) a struct, member, typedef, enum or macro without a
# comment. Enum values, which doxygen does not warn about, are checked on the
# XML of the same run (check_doxygen_enums.py). Then a copy of the headers
# with one member's and one enum value's comment removed must fail both
# checks, so this test can fail. Skipped (77) when doxygen or python3 is
# not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${QV_SOURCE_DIR:-$here/../..}
command -v doxygen > /dev/null || { echo "skipped: doxygen not installed (apt-get install doxygen)"; exit 77; }
py=$(command -v python3 || true)
[ -n "$py" ] || { echo "skipped: python3 not available"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# doxygen with docs/Doxyfile plus XML output, run in directory $1 (whose
# include/quiver it reads) into $2; its messages go to $2/log.
run_doxygen() {
  mkdir -p "$2"
  (cd "$1" && { cat "$src/docs/Doxyfile"; echo "GENERATE_XML = YES"; } |
     QV_DOCS_OUT="$2" doxygen - > "$2/log" 2>&1)
}

# 1. The real headers: no warning at all, every enum value described.
if ! run_doxygen "$src" "$out/doc"; then
  echo "FAIL: doxygen reported warnings:"; cat "$out/doc/log"; exit 1
fi
if [ -s "$out/doc/log" ]; then
  echo "FAIL: doxygen printed:"; cat "$out/doc/log"; exit 1
fi
"$py" "$here/check_doxygen_enums.py" "$out/doc/xml"
for page in index.html quiver_8h.html tensor__ipc_8h.html; do
  [ -s "$out/doc/html/$page" ] || { echo "FAIL: $page was not generated"; exit 1; }
done
grep -q qv_tensor_read "$out/doc/html/tensor__ipc_8h.html" || { echo "FAIL: qv_tensor_read is not in the reference"; exit 1; }

# 2. The checks refuse a header whose comments are missing: QvError's `code`
#    member and QV_OK lose theirs in a copy of the headers.
mkdir -p "$out/bad/include"
cp -r "$src/include/quiver" "$out/bad/include/"
sed -i -e 's|^\(  QvStatus code;\) *\/\*\*<.*\*\/$|\1|' -e 's|^\(  QV_OK = 0,\) *\/\*\*<.*\*\/$|\1|' \
  "$out/bad/include/quiver/error.h"
grep -q '^  QvStatus code;$' "$out/bad/include/quiver/error.h" && grep -q '^  QV_OK = 0,$' "$out/bad/include/quiver/error.h" \
  || { echo "FAIL: could not remove the comments of QvError::code and QV_OK from a copy of error.h"; exit 1; }
if run_doxygen "$out/bad" "$out/bad/doc"; then
  echo "FAIL: doxygen accepted an undocumented struct member:"; cat "$out/bad/doc/log"; exit 1
fi
grep -Eq 'error.h:[0-9]+: (warning|error): Member code \(variable\) of struct QvError is not documented' "$out/bad/doc/log" \
  || { echo "FAIL: doxygen failed without naming QvError::code:"; cat "$out/bad/doc/log"; exit 1; }
if "$py" "$here/check_doxygen_enums.py" "$out/bad/doc/xml" > "$out/bad/enums"; then
  echo "FAIL: the enum check accepted an undocumented value:"; cat "$out/bad/enums"; exit 1
fi
grep -q 'error.h:[0-9]*: QV_OK$' "$out/bad/enums" && [ "$(grep -c ': QV_' "$out/bad/enums")" -eq 1 ] \
  || { echo "FAIL: the enum check's report is wrong:"; cat "$out/bad/enums"; exit 1; }
echo "ok: doxygen $(doxygen --version), no warnings, $(ls "$out/doc/html" | wc -l) files; an undocumented member and enum value are refused"
