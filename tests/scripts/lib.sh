# The preamble the script tests share; each sources it first:
#   . "$QV_SOURCE_DIR/tests/scripts/lib.sh"
# ctest sets QV_CLI, QV_SOURCE_DIR, QV_BINARY_DIR and QV_SHARED_DIR, and
# counts exit 77 as skipped (never as passed).
set -uo pipefail
cli=${QV_CLI:?QV_CLI must point at the quiver CLI}

# Ends the script as skipped, saying why.
qv_skip() {
  echo "$*: skipped"
  exit 77
}

# Sets $tmp to a new directory, removed when the script exits.
qv_tmpdir() {
  tmp=$(mktemp -d) || exit 1
  trap 'rm -rf "$tmp"' EXIT
}

# Sets $py to Debian's python3 (the first python3 on PATH may be another
# interpreter, without NumPy) when it can import every module named, or
# skips; its scripts find tests/scripts/checks.py.
qv_need_python() {
  py=/usr/bin/python3
  local module
  for module in "$@"; do
    "$py" -c "import $module" 2>/dev/null || qv_skip "python3 with $* not available"
  done
  export PYTHONPATH="$QV_SOURCE_DIR/tests/scripts${PYTHONPATH:+:$PYTHONPATH}"
}

# Sets $data to the Arrow C++ files of ../shared/testdata, or skips.
qv_need_arrow_cpp_data() {
  data=${QV_SHARED_DIR:-}/testdata/arrow-cpp
  [ -n "${QV_SHARED_DIR:-}" ] && [ -d "$data" ] || qv_skip "shared Arrow C++ test data not found"
}

# Sets $js to tests/interop/js when node and its npm packages are there
# (`npm ci` from the committed lockfile; make test runs it), or skips.
qv_need_node() {
  js="$QV_SOURCE_DIR/tests/interop/js"
  command -v node >/dev/null 2>&1 || qv_skip "node is not installed"
  [ -f "$js/node_modules/apache-arrow/package.json" ] ||
    qv_skip "$js/node_modules is missing (run: cd tests/interop/js && npm ci)"
}

# Sets $tool to tests/interop's tool NAME, or skips when the build found no
# jansson to build the tools with (QV_INTEROP_TOOLS=0, tests/CMakeLists.txt);
# a tool that should have been built and was not is a failure.
qv_need_interop_tool() {
  tool="${QV_BINARY_DIR:?QV_BINARY_DIR must point at the build tree}/tests/interop/$1"
  [ "${QV_INTEROP_TOOLS:-1}" = 0 ] &&
    qv_skip "jansson (libjansson-dev) not found: tests/interop's $1 is not built"
  [ -x "$tool" ] || { echo "FAIL: $tool was not built" >&2; exit 1; }
}

# The shell checks: check DESCRIPTION COMMAND... counts COMMAND's success as
# a passed check and prints a failed one at once.
pass=0 fail=0
check() {
  local what=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

# run ARGS...: the CLI, setting rc, out and err (needs qv_tmpdir first).
run() {
  "$cli" "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

# has TEXT NEEDLE: TEXT contains NEEDLE, as a fixed string.
has() { grep -qF -- "$2" <<<"$1"; }

# Prints the counts and exits: 1 on any failure, and when nothing was checked
# (a loop over no files proves nothing).
qv_finish() {
  echo "${1:+$1: }$pass passed, $fail failed"
  [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ] && exit 0
  exit 1
}
