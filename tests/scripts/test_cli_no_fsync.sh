#!/usr/bin/env bash
# --no-fsync on the commands that write a file: the same bytes as without
# it; with it the output file is not fsynced, without it it is (strace, when
# installed, counts the fsync calls); a command that writes no file refuses it.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir

python3 - "$tmp/d.npy" <<'PY'
import struct, sys
h = "{'descr': '<f8', 'fortran_order': False, 'shape': (30, 40), }"
h += ' ' * (64 - (10 + len(h) + 1) % 64) + '\n'
body = b''.join(struct.pack('<d', float(i % 7 == 0) * i) for i in range(1200))
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + body)
PY
for args in "tensor from-npy $tmp/d.npy @OUT@" "tensor from-npy $tmp/d.npy @OUT@ --sparse=csr" \
            "convert $tmp/a.arrow @OUT@ --to=csc" "tensor to-npy $tmp/a.arrow @OUT@"; do
  [ -s "$tmp/a.arrow" ] || "$cli" tensor from-npy "$tmp/d.npy" "$tmp/a.arrow"
  run ${args//@OUT@/$tmp/durable}
  check "$args (rc $rc: $err)" test "$rc" -eq 0
  run ${args//@OUT@/$tmp/scratch} --no-fsync
  check "$args --no-fsync (rc $rc: $err)" test "$rc" -eq 0
  check "$args: --no-fsync writes the same bytes" cmp -s "$tmp/durable" "$tmp/scratch"
  if command -v strace >/dev/null 2>&1; then
    n=$(strace -f -e trace=fsync,fdatasync "$cli" ${args//@OUT@/$tmp/s2} 2>&1 >/dev/null | grep -c '^\(\[pid  *[0-9]*\] \)\?f\(data\)\?sync(')
    check "$args: the durable write fsyncs the file and its directory ($n calls)" test "$n" -ge 2
    n=$(strace -f -e trace=fsync,fdatasync "$cli" ${args//@OUT@/$tmp/s3} --no-fsync 2>&1 >/dev/null | grep -c '^\(\[pid  *[0-9]*\] \)\?f\(data\)\?sync(')
    check "$args --no-fsync: no fsync ($n calls)" test "$n" -eq 0
  fi
done
run inspect --no-fsync "$tmp/a.arrow"
check "inspect (writes no file) refuses --no-fsync (rc $rc)" test "$rc" -eq 2
qv_finish test_cli_no_fsync
