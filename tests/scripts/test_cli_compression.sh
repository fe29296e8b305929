#!/usr/bin/env bash
# Compressed record batches through the CLI: --threads on stream-to-file,
# file-to-stream, validate and cat (the output is the same for any count),
# --level, usage errors, and a corrupt frame refused with the same message
# on any number of threads.
set -uo pipefail
cli=$QV_CLI
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # description, condition...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}
ex="$QV_SOURCE_DIR/examples/data/arrow_cpp_record_batches.arrow"

# three columns of 40000 rows (int64, float64, utf8): about 1 MB of
# buffers in several frames per batch, enough for the threads to run
/usr/bin/python3 - "$tmp/t.json" <<'PY'
import json, sys
n = 40000
cols = [
    ({"name": "id", "type": {"name": "int", "bitWidth": 64, "isSigned": True}},
     [str(i * 7) for i in range(n)]),
    ({"name": "x", "type": {"name": "floatingpoint", "precision": "DOUBLE"}},
     [((i * 7919) % 1013) * 0.5 for i in range(n)]),
    ({"name": "s", "type": {"name": "utf8"}}, ["n%d" % ((i * 31) % 5000) for i in range(n)]),
]
fields = [dict(f, nullable=False, children=[]) for f, _ in cols]
columns = []
for f, data in cols:
    c = {"name": f["name"], "count": n, "VALIDITY": [1] * n, "DATA": data}
    if f["type"]["name"] == "utf8":
        offs, o = [0], 0
        for v in data:
            o += len(v)
            offs.append(o)
        c["OFFSET"] = offs
    columns.append(c)
doc = {"schema": {"fields": fields}, "batches": [{"count": n, "columns": columns}] * 2}
json.dump(doc, open(sys.argv[1], "w"))
PY
"$cli" integration --mode=json-to-arrow --json="$tmp/t.json" --arrow="$tmp/t.arrow" || { echo "FAIL: json-to-arrow"; exit 1; }
"$cli" file-to-stream "$tmp/t.arrow" > "$tmp/t.arrows" || { echo "FAIL: file-to-stream"; exit 1; }
"$cli" file-to-stream "$ex" > "$tmp/ex.arrows" || { echo "FAIL: file-to-stream"; exit 1; }

for input in t ex; do
  for spec in "lz4" "lz4 --level 9" "zstd" "zstd --level 3"; do
    set -- $spec
    comp=$1; shift
    "$cli" stream-to-file --compression $comp "$@" --threads 1 < "$tmp/$input.arrows" > "$tmp/one.arrow"; rc=$?
    check "$input $spec, 1 thread: exit 0" test $rc -eq 0
    for n in 2 3; do
      "$cli" stream-to-file --compression $comp "$@" --threads $n < "$tmp/$input.arrows" > "$tmp/n.arrow"
      check "$input $spec: stream-to-file --threads $n writes the same bytes" cmp -s "$tmp/one.arrow" "$tmp/n.arrow"
      "$cli" file-to-stream --compression $comp "$@" --threads $n "$tmp/one.arrow" > "$tmp/n.arrows"
      "$cli" file-to-stream --compression $comp "$@" --threads 1 "$tmp/one.arrow" > "$tmp/one.arrows"
      check "$input $spec: file-to-stream --threads $n writes the same bytes" cmp -s "$tmp/one.arrows" "$tmp/n.arrows"
    done
    # the default (every core) too
    "$cli" stream-to-file --compression $comp "$@" < "$tmp/$input.arrows" > "$tmp/n.arrow"
    check "$input $spec: default threads write the same bytes" cmp -s "$tmp/one.arrow" "$tmp/n.arrow"
    "$cli" cat "$tmp/$input.arrows" > "$tmp/want"
    for n in 1 2; do
      "$cli" cat --threads $n "$tmp/one.arrow" > "$tmp/got"
      check "$input $spec: cat --threads $n prints the uncompressed cells" cmp -s "$tmp/want" "$tmp/got"
      "$cli" cat --json --threads $n "$tmp/one.arrow" > "$tmp/got.json"
      "$cli" cat --json "$tmp/$input.arrows" > "$tmp/want.json"
      check "$input $spec: cat --json --threads $n" cmp -s "$tmp/want.json" "$tmp/got.json"
      out=$("$cli" validate --threads $n "$tmp/one.arrow"); rc=$?
      check "$input $spec: validate --threads $n" test $rc -eq 0
    done
  done
done

# --level takes effect: zstd 19 packs the table tighter than 1
"$cli" stream-to-file --compression zstd --level 1 < "$tmp/t.arrows" > "$tmp/z1.arrow"
"$cli" stream-to-file --compression zstd --level 19 < "$tmp/t.arrows" > "$tmp/z19.arrow"
check "--level 19 is smaller than --level 1" test "$(stat -c %s "$tmp/z19.arrow")" -lt "$(stat -c %s "$tmp/z1.arrow")"

# usage errors
for args in "--threads 0" "--threads 257" "--threads x" "--threads" "--compression zstd --level 23" \
            "--compression lz4 --level 13" "--compression zstd --level 0" "--level 3"; do
  "$cli" stream-to-file $args < "$tmp/t.arrows" > /dev/null 2> "$tmp/err"; rc=$?
  check "stream-to-file $args: usage exit 2" test $rc -eq 2
done
"$cli" validate --threads 0 "$tmp/one.arrow" > /dev/null 2> "$tmp/err"; rc=$?
check "validate --threads 0: exit 2" test $rc -eq 2
check "validate --threads 0: message" grep -q "threads from 1 to 256" "$tmp/err"
"$cli" cat --threads -2 "$tmp/one.arrow" > /dev/null 2>&1; rc=$?
check "cat --threads -2: exit 2" test $rc -eq 2

# a corrupt frame (byte 1000: inside the first frame, column id's values):
# exit 1, the same message on any number of threads
"$cli" stream-to-file --compression lz4 < "$tmp/t.arrows" > "$tmp/bad.arrow"
printf '\377\377\377\377\377\377\377\377' | dd of="$tmp/bad.arrow" bs=1 seek=1000 conv=notrunc 2>/dev/null
"$cli" validate --threads 1 "$tmp/bad.arrow" > /dev/null 2> "$tmp/err1"; rc=$?
check "corrupt frame, 1 thread: exit 1" test $rc -eq 1
check "corrupt frame, 1 thread: names the buffer" grep -q "column 0 (id): buffer 1: LZ4 frame is corrupt" "$tmp/err1"
for n in 2 3 4; do
  "$cli" validate --threads $n "$tmp/bad.arrow" > /dev/null 2> "$tmp/errn"; rc=$?
  check "corrupt frame, $n threads: exit 1" test $rc -eq 1
  check "corrupt frame, $n threads: same message" cmp -s "$tmp/err1" "$tmp/errn"
done

echo "$pass passed, $fail failed"
test $fail -eq 0
