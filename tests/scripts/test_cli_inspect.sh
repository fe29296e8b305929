#!/usr/bin/env bash
# `quiver inspect` on good and bad input: exit codes, messages, stdin.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir
ex="$QV_SOURCE_DIR/examples/data"

out=$("$cli" inspect "$ex/arrow_cpp_tensor_3x4_colmajor.arrow"); rc=$?
check "tensor: exit 0" test $rc -eq 0
check "tensor: summary" grep -q 'Tensor .*float64 shape=\[3, 4\] strides=\[8, 24\] (column-major) data@0+96(64-aligned)' <<<"$out"

out=$("$cli" inspect - < "$ex/arrow_cpp_record_batches.arrow"); rc=$?
check "stdin file: exit 0" test $rc -eq 0
check "stdin file: footer" grep -q 'Footer .*2 record batch blocks' <<<"$out"
check "stdin file: message count" grep -q '^4 messages$' <<<"$out"

cat "$ex/arrow_cpp_csr_6x4.arrow" | "$cli" inspect - > "$tmp/out"; rc=$?
check "pipe: exit 0" test $rc -eq 0
check "pipe: CSR summary" grep -q 'CSR float64 shape=\[6, 4\] nnz=9' "$tmp/out"

: > "$tmp/empty"
"$cli" inspect "$tmp/empty" > "$tmp/out" 2>&1; rc=$?
check "empty input is an error (exit 1)" test $rc -eq 1
check "empty input: says so, lists nothing" grep -q "^quiver inspect: $tmp/empty: empty input (0 bytes)" "$tmp/out"

head -c 100 "$ex/arrow_cpp_tensor_3x4_colmajor.arrow" > "$tmp/trunc"
"$cli" inspect "$tmp/trunc" > /dev/null 2> "$tmp/err"; rc=$?
check "truncated metadata: exit 1" test $rc -eq 1
check "truncated metadata: message" grep -q "quiver inspect: $tmp/trunc: message at offset 0: metadata needs 248 bytes" "$tmp/err"

head -c 2000 /dev/urandom > "$tmp/garbage"
printf '\377\377\377\377\100\000\000\000' | cat - "$tmp/garbage" > "$tmp/garbage2"
"$cli" inspect "$tmp/garbage2" > /dev/null 2> "$tmp/err"; rc=$?
check "garbage metadata: exit 1" test $rc -eq 1
check "garbage metadata: message names the message" grep -q "quiver inspect: $tmp/garbage2: message at offset 0" "$tmp/err"

printf 'ARROW1\000\000garbage' > "$tmp/badfile"
"$cli" inspect "$tmp/badfile" > /dev/null 2> "$tmp/err"; rc=$?
check "file without footer: exit 1" test $rc -eq 1
check "file without footer: message" grep -q 'file format' "$tmp/err"

"$cli" inspect "$tmp/does-not-exist" > /dev/null 2> "$tmp/err"; rc=$?
check "missing file: exit 1" test $rc -eq 1
check "missing file: message" grep -q 'No such file' "$tmp/err"

"$cli" inspect > /dev/null 2>&1; rc=$?
check "no argument: usage exit 2" test $rc -eq 2

# compressed batches: one line per buffer, compressed and uncompressed bytes;
# the buffers add up to the batch's uncompressed body (a 4000 x 8 float64
# tensor column that compresses well, and the example file's small buffers,
# most of which are stored uncompressed)
/usr/bin/python3 - "$tmp/t.npy" <<'PY'
import struct, sys
rows, cols = 4000, 8
hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
hdr += ' ' * ((64 - (11 + len(hdr)) % 64) % 64) + '\n'
data = b''.join(struct.pack('<d', (i % 97) * 0.25) for i in range(rows * cols))
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + data)
PY
"$cli" tensor from-npy "$tmp/t.npy" "$tmp/t.arrows" --as-column
for comp in lz4 zstd; do
  "$cli" stream-to-file --compression $comp < "$tmp/t.arrows" > "$tmp/t.arrow"
  out=$("$cli" inspect "$tmp/t.arrow"); rc=$?
  check "compressed ($comp): exit 0" test $rc -eq 0
  check "compressed ($comp): buffer line" grep -Eq '^ +buffer 2: compressed [0-9]+, uncompressed 256000 bytes$' <<<"$out"
  check "compressed ($comp): empty buffers" grep -Eq '^ +buffer 0: empty$' <<<"$out"
  "$cli" file-to-stream --compression $comp "$ex/arrow_cpp_record_batches.arrow" > "$tmp/z.arrows"
  out=$("$cli" inspect "$tmp/z.arrows")
  check "small buffers ($comp): stored lines" grep -Eq '^ +buffer 1: stored uncompressed, [0-9]+ bytes$' <<<"$out"
  # per batch: as many buffer lines as buffers=, adding up to the body's bytes
  sums=$(awk '
    /^[0-9]/ { if (n != "") print (lines == n && sum == want) ? "ok" : "bad " NR;
               n = ""; if (match($0, /buffers=[0-9]+/)) { n = substr($0, RSTART + 8, RLENGTH - 8) + 0;
               match($0, /compressed, [0-9]+ uncompressed/); want = substr($0, RSTART + 12, RLENGTH - 25) + 0;
               lines = 0; sum = 0 } }
    /^ +buffer / { lines++; if ($3 == "compressed") sum += $6; else if ($3 == "stored") sum += $5 }
    END { if (n != "") print (lines == n && sum == want) ? "ok" : "bad end" }' <<<"$out" | sort -u | tr '\n' ' ')
  check "small buffers ($comp): lines add up ($sums)" test "$sums" = "ok "
done
out=$("$cli" inspect "$ex/arrow_cpp_record_batches.arrow")
check "uncompressed: no buffer lines" test "$(grep -c '^ *buffer ' <<<"$out")" -eq 0

qv_finish
