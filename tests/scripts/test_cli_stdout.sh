#!/usr/bin/env bash
# Output that cannot be written is a failure: every command that prints to
# stdout exits 1 when stdout is /dev/full (a full disk), with a message on
# stderr, whatever it prints (a table, JSON, a listing, a verdict, help).
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir
[ -w /dev/full ] || qv_skip "/dev/full is not available"

cat > "$tmp/t.json" <<'JSON'
{"schema": {"fields": [{"name": "a", "nullable": true, "type": {"name": "int", "isSigned": true, "bitWidth": 32}, "children": []}]},
 "batches": [{"count": 2, "columns": [{"name": "a", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 2]}]}]}
JSON
"$cli" integration --mode=json-to-arrow --json="$tmp/t.json" --arrow="$tmp/t.arrow" || { echo "FAIL: json-to-arrow"; exit 1; }
# a 3x5 float64 tensor
python3 - "$tmp/small.npy" <<'PY'
import struct, sys
h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }"
h += ' ' * (64 - (10 + len(h) + 1) % 64) + '\n'
body = b''.join(struct.pack('<d', i + 1) for i in range(15))
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + body)
PY
"$cli" tensor from-npy "$tmp/small.npy" "$tmp/x.arrow" || { echo "FAIL: from-npy"; exit 1; }

for cmd in "cat $tmp/t.arrow" "cat --json $tmp/t.arrow" "inspect $tmp/t.arrow" "validate $tmp/t.arrow" \
           "cat $tmp/x.arrow" "cat --json $tmp/x.arrow" "inspect $tmp/x.arrow" \
           "integration --mode=arrow-to-json --arrow=$tmp/t.arrow --json=-" \
           "file-to-stream $tmp/t.arrow" "--version" "help" "help cat" "cat --help"; do
  # shellcheck disable=SC2086
  "$cli" $cmd > "$tmp/out" 2> "$tmp/err"; rc=$?
  check "quiver $cmd > file: exit 0 ($(cat "$tmp/err"))" test $rc -eq 0
  # shellcheck disable=SC2086
  "$cli" $cmd > /dev/full 2> "$tmp/err"; rc=$?
  check "quiver $cmd > /dev/full: exit 1 (got $rc)" test $rc -eq 1
  check "quiver $cmd > /dev/full: says so ($(cat "$tmp/err"))" test -s "$tmp/err"
done
qv_finish "stdout errors"
