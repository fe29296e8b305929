#!/usr/bin/env bash
# Record batch interop with the apache-arrow npm package (tests/interop/js):
#   quiver -> js: rb_tool writes a stream and a file of every type both sides
#                 support (with a JSON description of every value); arrow-js
#                 (tableFromIPC and RecordBatchReader) must read the same values.
#   js -> quiver: rb_write.mjs writes a stream (replacement dictionaries) and a
#                 file (delta dictionaries) with their JSON; `rb_tool dump`
#                 (full validation) must produce the same JSON, and the CLI
#                 must validate them.
# Skips (77) only when node or the npm packages are missing, or jansson
# (rb_tool's) is.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
src=$QV_SOURCE_DIR
bin=${QV_BINARY_DIR:?QV_BINARY_DIR must point at the build tree}

qv_need_node
qv_need_interop_tool rb_tool
[ -x "$cli" ] || { echo "FAIL: $cli was not built" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every step runs even after a failure, so one run reports every difference.
passed=0
failed=0
step() {
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $what" >&2
    failed=$((failed + 1))
  fi
}

# Runs rb_tool dump FILE and compares the output with WANT.json.
dump_equals() {
  local file=$1 want=$2
  "$tool" dump "$file" >"$file.dump.json" && node "$js/rb_check.mjs" compare "$file.dump.json" "$want"
}

# quiver -> js
q="$work/quiver"
step "rb_tool write-stream" "$tool" write-stream "$q.arrows"
step "rb_tool write-file" "$tool" write-file "$q.arrow"
step "arrow-js reads quiver's stream" node "$js/rb_check.mjs" check "$q.arrows" "$q.arrows.json"
step "arrow-js reads quiver's file" node "$js/rb_check.mjs" check "$q.arrow" "$q.arrow.json"
# quiver's own reading of what it wrote
step "quiver reads its stream" dump_equals "$q.arrows" "$q.arrows.json"
step "quiver reads its file" dump_equals "$q.arrow" "$q.arrow.json"
step "quiver validate (its file)" "$cli" validate "$q.arrow"

# js -> quiver
j="$work/js"
step "rb_write.mjs" node "$js/rb_write.mjs" "$work"
step "arrow-js reads its own stream" node "$js/rb_check.mjs" check "$j.arrows" "$j.arrows.json"
step "arrow-js reads its own file" node "$js/rb_check.mjs" check "$j.arrow" "$j.arrow.json"
step "quiver reads arrow-js's stream" dump_equals "$j.arrows" "$j.arrows.json"
step "quiver reads arrow-js's file" dump_equals "$j.arrow" "$j.arrow.json"
step "quiver validate --stream (arrow-js stream)" "$cli" validate --stream "$j.arrows"
step "quiver validate --stream - (arrow-js stream on stdin)" "$cli" validate --stream - <"$j.arrows"
# arrow-js files carry no Schema message before their dictionaries and
# batches (the schema is only in the footer): validate reads them through
# the footer, and file-to-stream turns them into a complete stream.
step "quiver validate (arrow-js file)" "$cli" validate "$j.arrow"
step "quiver file-to-stream (arrow-js file)" "$cli" file-to-stream "$j.arrow" >"$work/js_from_file.arrows"
step "quiver validate --stream (converted arrow-js file)" "$cli" validate --stream "$work/js_from_file.arrows"
step "arrow-js reads quiver's conversion of its file" \
  node "$js/rb_check.mjs" check "$work/js_from_file.arrows" "$j.arrow.json"
# cat reads that file as validate does, through its footer: the same table as
# the converted stream (not "RecordBatch (values not shown)"), from a path
# and from a pipe (which holds the file in memory to reach its footer).
same_table() {
  "$cli" cat "$j.arrow" >"$work/cat_file.txt" &&
    "$cli" cat - <"$work/js_from_file.arrows" >"$work/cat_stream.txt" &&
    cat "$j.arrow" | "$cli" cat - >"$work/cat_pipe.txt" &&
    grep -q '^schema: ' "$work/cat_file.txt" &&
    cmp -s "$work/cat_file.txt" "$work/cat_stream.txt" &&
    cmp -s "$work/cat_file.txt" "$work/cat_pipe.txt"
}
step "quiver cat (arrow-js file) prints the table file-to-stream gives" same_table

# apache-arrow writes null_count = -1 ("unknown") for the Null column of a
# sliced table; Arrow C++ reads it as unknown, and so does quiver
null_slice() {
  node "$js/null_slice.mjs" "$work" >"$work/ns.json" &&
    grep -q '"nullCounts":\[-1,0\]' "$work/ns.json" &&
    "$cli" validate "$work/null_slice.arrows" &&
    "$cli" validate "$work/null_slice.arrow" &&
    "$cli" cat "$work/null_slice.arrow" >"$work/ns.txt" &&
    [ "$(tail -n +3 "$work/ns.txt" | head -3 | tr -s ' ')" = "$(printf 'null 20\nnull 30\nnull 40')" ] &&
    "$cli" file-to-stream "$work/null_slice.arrow" >"$work/ns2.arrows" &&
    "$cli" cat "$work/ns2.arrows" | cmp -s - "$work/ns.txt"
}
step "arrow-js null_count -1 (a sliced Null column) reads as unknown" null_slice

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
