#!/usr/bin/env bash
# The README's examples run as written: its C block is compiled against the
# built library and run, its command-line block runs with the built
# `quiver`, its Python block with the built module, each from a scratch
# folder in which examples/ is the repository's. Every relative link of the
# README and docs/*.md names a file that exists. The Python block is
# skipped (exit 77 after the rest has passed) when the module is not built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${QV_SOURCE_DIR:-$here/../..}
bin=${QV_BINARY_DIR:?the build folder}
cli=${QV_CLI:?the quiver binary}
# Debian's interpreter, the one the module is built for (as python/CMakeLists.txt)
if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=$(command -v python3 || true); fi
[ -n "$py" ] || { echo "skipped: python3 not available (it extracts the blocks)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# block LANG HEADING: the one fenced block of LANG under "## HEADING"
block() {
  "$py" - "$src/README.md" "$1" "$2" <<'PY'
import sys
path, lang, heading = sys.argv[1:]
blocks, section, cur = [], None, None
for line in open(path):
    if cur is not None:
        if line.startswith("```"):
            blocks.append((section, cur[0], "".join(cur[1])))
            cur = None
        else:
            cur[1].append(line)
    elif line.startswith("```"):
        cur = (line[3:].strip(), [])
    elif line.startswith("## "):
        section = line[3:].strip()
found = [b for s, l, b in blocks if s == heading and l == lang]
if len(found) != 1:
    sys.exit("README.md: %d %s blocks under '## %s', want 1" % (len(found), lang, heading))
sys.stdout.write(found[0])
PY
}
mkdir "$tmp/run"
ln -s "$src/examples" "$tmp/run/examples"

echo "== the C example"
block c C > "$tmp/app.c"
lib=$(find "$bin" -maxdepth 1 -name 'libquiver.so' | head -n 1)
[ -n "$lib" ] || { echo "FAIL: libquiver.so is not built in $bin"; exit 1; }
# a sanitizer build's library needs its runtime linked into the program too
san=()
if grep -q '^QV_SANITIZE:BOOL=ON' "$bin/CMakeCache.txt" 2> /dev/null; then
  san=(-fsanitize=address,undefined)
fi
${CC:-cc} -std=c11 -Wall -Wextra -Werror "${san[@]}" -I"$src/include" "$tmp/app.c" -o "$tmp/app" \
  -L"$(dirname "$lib")" -Wl,-rpath,"$(dirname "$lib")" -lquiver
out=$(cd "$tmp/run" && "$tmp/app")
echo "$out"
[ "$out" = "float64 [3 x 4], t[2][3] = 2.75" ] || { echo "FAIL: the C example printed something else"; exit 1; }

echo "== the command-line example"
block sh "Command line" > "$tmp/cli.sh"
mkdir "$tmp/path"
ln -s "$cli" "$tmp/path/quiver"
if [ "${QV_WITH_NUMPY:-1}" = 0 ]; then
  # its first command reads a .npy (from-npy), which this build leaves out
  # (-DQV_WITH_NUMPY=OFF): it must stop there with exit 3, saying so
  rc=0
  (cd "$tmp/run" && PATH="$tmp/path:$PATH" bash -euo pipefail "$tmp/cli.sh") > "$tmp/cli.out" 2> "$tmp/cli.err" || rc=$?
  cat "$tmp/cli.err"
  [ "$rc" -eq 3 ] && grep -q "left out the NumPy formats" "$tmp/cli.err" ||
    { echo "FAIL: from-npy in a build without the NumPy formats: exit $rc"; exit 1; }
  echo "skipped the rest of the command-line example (QV_WITH_NUMPY=OFF)"
else
  (cd "$tmp/run" && PATH="$tmp/path:$PATH" bash -euo pipefail "$tmp/cli.sh") > "$tmp/cli.out"
  cat "$tmp/cli.out"
  grep -q "SparseTensor" "$tmp/cli.out" || { echo "FAIL: inspect did not show the SparseTensor"; exit 1; }
  [ -s "$tmp/run/m_coo.arrow" ] || { echo "FAIL: convert wrote no m_coo.arrow"; exit 1; }
fi

echo "== the Arrow Flight example"
block sh "Arrow Flight" > "$tmp/flight.sh"
(cd "$tmp/run" && PATH="$tmp/path:$PATH" timeout 60 bash -euo pipefail "$tmp/flight.sh") > "$tmp/flight.out"
cat "$tmp/flight.out"
grep -q "arrow_cpp_record_batches.arrow" "$tmp/flight.out" || { echo "FAIL: flight list did not list the file"; exit 1; }
grep -q "rows in" "$tmp/flight.out" || { echo "FAIL: quiver cat printed no rows of the fetched flight"; exit 1; }
[ -s "$tmp/run/batches.arrows" ] || { echo "FAIL: flight get wrote no batches.arrows"; exit 1; }

echo "== links"
bad=0
for md in "$src/README.md" "$src"/docs/*.md; do
  dir=$(dirname "$md")
  for target in $(grep -o -E '\]\([^)#]+\)' "$md" | sed -E 's/^\]\(//; s/\)$//' | grep -v -E '^[a-z]+:'); do
    [ -e "$dir/$target" ] || { echo "FAIL: $(basename "$md") links to $target, which does not exist"; bad=1; }
  done
done
[ "$bad" -eq 0 ] || exit 1
echo "ok: every relative link resolves"

echo "== the Python example"
if [ ${#san[@]} -gt 0 ]; then
  # as python_pytest: an ASan module cannot load into a plain interpreter
  echo "skipped: the Python block runs in the plain build (sanitizer build); C and CLI examples passed"
  exit 77
fi
if [ ! -e "$bin/python/quiver/__init__.py" ] || ! "$py" -c 'import numpy, scipy' 2> /dev/null; then
  echo "skipped: the Python module is not built (or numpy/scipy missing); C and CLI examples passed"
  exit 77
fi
block python Python > "$tmp/example.py"
out=$(cd "$tmp/run" && PYTHONPATH="$bin/python" PYTHONDONTWRITEBYTECODE=1 "$py" "$tmp/example.py")
echo "$out"
[ "$out" = "66.0 $(cd "$tmp/run" && PYTHONPATH="$bin/python" "$py" -c 'import quiver; print(quiver.read_sparse("examples/data/arrow_cpp_csr_6x4.arrow").nnz)')" ] \
  || { echo "FAIL: the Python example printed something else"; exit 1; }
echo "ok: the README's examples run"
