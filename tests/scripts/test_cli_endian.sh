#!/usr/bin/env bash
# Byte order through the CLI: --endianness on stream-to-file and
# file-to-stream, big-endian input read by cat / validate / both
# conversions, inspect showing the order and compressed body sizes.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir
src="$QV_SOURCE_DIR/examples/data/arrow_cpp_record_batches.arrow"

"$cli" cat "$src" > "$tmp/want" || { echo "FAIL: cat of the example"; exit 1; }
for comp in none lz4 zstd; do
  "$cli" file-to-stream --compression=$comp --endianness=big "$src" > "$tmp/be.arrows"; rc=$?
  check "file-to-stream --endianness=big ($comp): exit 0" test $rc -eq 0
  "$cli" cat "$tmp/be.arrows" > "$tmp/got"; rc=$?
  check "cat of the big-endian stream ($comp): exit 0" test $rc -eq 0
  check "cat of the big-endian stream ($comp): same cells" cmp -s "$tmp/want" "$tmp/got"
  out=$("$cli" validate "$tmp/be.arrows"); rc=$?
  check "validate of the big-endian stream ($comp): valid" test $rc -eq 0
  "$cli" stream-to-file --endianness=big < "$tmp/be.arrows" > "$tmp/be.arrow"; rc=$?
  check "stream-to-file big -> big ($comp): exit 0" test $rc -eq 0
  "$cli" cat "$tmp/be.arrow" > "$tmp/got"
  check "cat of the big-endian file ($comp): same cells" cmp -s "$tmp/want" "$tmp/got"
  "$cli" file-to-stream --endianness=little "$tmp/be.arrow" > "$tmp/le.arrows"; rc=$?
  check "file-to-stream big -> little ($comp): exit 0" test $rc -eq 0
  "$cli" cat "$tmp/le.arrows" > "$tmp/got"
  check "cat after big -> little ($comp): same cells" cmp -s "$tmp/want" "$tmp/got"
  check "big -> little: little-endian schema" grep -q '(little-endian)' <("$cli" inspect "$tmp/le.arrows")
done

out=$("$cli" inspect "$tmp/be.arrow"); rc=$?
check "inspect of the big-endian file: exit 0" test $rc -eq 0
check "inspect: big-endian schema" grep -q 'Schema .*6 fields (big-endian)' <<<"$out"
"$cli" file-to-stream --compression=zstd --endianness=native "$src" > "$tmp/z.arrows"
out=$("$cli" inspect "$tmp/z.arrows")
check "inspect: codec and body sizes ($out)" \
  grep -Eq 'RecordBatch .*compression=zstd body=[0-9]+ bytes compressed, [0-9]+ uncompressed' <<<"$out"

err=$("$cli" stream-to-file --endianness=middle < "$tmp/be.arrows" 2>&1 >/dev/null); rc=$?
check "--endianness=middle: exit 2" test $rc -eq 2
check "--endianness=middle: names the values ($err)" grep -q "native, little, big" <<<"$err"

# a big-endian stream cut inside a batch body: invalid, exit 1
size=$(stat -c %s "$tmp/be.arrows")
head -c $((size - 40)) "$tmp/be.arrows" > "$tmp/cut.arrows"
err=$("$cli" validate "$tmp/cut.arrows" 2>&1 >/dev/null); rc=$?
check "truncated big-endian stream: exit 1 ($err)" test $rc -eq 1

qv_finish
