#!/usr/bin/env bash
# convert --threads N: CSR <-> CSC and COO -> CSR/CSC of a matrix large
# enough for the threaded grouping (1.25M non-zeros, 5000 x 5000) write the
# same bytes for every N and for the default (every CPU); a bad N is a
# usage error (exit 2).
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir

# A 5000x5000 int8 .npy, about 5% non-zero (values 1..13), without NumPy.
python3 - "$tmp/d.npy" <<'PY'
import os, struct, sys
n = 5000
h = "{'descr': '|i1', 'fortran_order': False, 'shape': (%d, %d), }" % (n, n)
h += ' ' * (64 - (10 + len(h) + 1) % 64) + '\n'
table = bytes(range(1, 14)) + bytes(256 - 13)
body = os.urandom(n * n).translate(table)
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + body)
PY
check "from-npy --sparse=csr" "$cli" tensor from-npy "$tmp/d.npy" "$tmp/csr.arrow" --sparse=csr
check "from-npy --sparse=coo" "$cli" tensor from-npy "$tmp/d.npy" "$tmp/coo.arrow" --sparse=coo
for job in "csr.arrow csc" "coo.arrow csc" "coo.arrow csr"; do
  set -- $job
  run convert "$tmp/$1" "$tmp/ref.arrow" --to=$2 --threads 1
  check "convert $1 --to=$2 --threads 1 (rc $rc: $err)" test "$rc" -eq 0
  for n in 2 3 default; do
    if [ "$n" = default ]; then run convert "$tmp/$1" "$tmp/t.arrow" --to=$2
    else run convert "$tmp/$1" "$tmp/t.arrow" --to=$2 --threads $n; fi
    check "convert $1 --to=$2 --threads $n (rc $rc: $err)" test "$rc" -eq 0
    check "convert $1 --to=$2: --threads $n writes the bytes of --threads 1" cmp -s "$tmp/ref.arrow" "$tmp/t.arrow"
  done
done
# and back: CSR -> CSC -> CSR is the CSR read from the dense matrix
run convert "$tmp/csr.arrow" "$tmp/csc.arrow" --to=csc --threads 2
check "convert csr --to=csc (rc $rc: $err)" test "$rc" -eq 0
run convert "$tmp/csc.arrow" "$tmp/back.arrow" --to=csr --threads 2
check "convert csc --to=csr (rc $rc: $err)" test "$rc" -eq 0
check "CSR -> CSC -> CSR is the dense matrix's CSR" cmp -s "$tmp/back.arrow" "$tmp/csr.arrow"
run convert "$tmp/csr.arrow" "$tmp/x.arrow" --to=csc --threads 0
check "--threads 0 is a usage error (rc $rc)" test "$rc" -eq 2
qv_finish test_cli_threads
