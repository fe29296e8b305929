#!/usr/bin/env bash
# --max-output: a valid tensor of shape [100000, 100000] whose strides are
# all 0 (one float64 stored) must be refused before any output is produced,
# by every command that would densify it or list its non-zeros, with a
# message naming both sizes. Run under a 2 GB address-space limit and a
# timeout, so a regression fails instead of eating the machine.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir

# A 3x5 float64 .npy holding 1..15, written by hand (no NumPy needed).
python3 - "$tmp/small.npy" <<'PY'
import struct, sys
h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }"
h += ' ' * (64 - (10 + len(h) + 1) % 64) + '\n'
body = b''.join(struct.pack('<d', i + 1) for i in range(15))
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + body)
PY
"$cli" tensor from-npy "$tmp/small.npy" "$tmp/small.arrow" || { echo "FAIL: from-npy"; exit 1; }

# Patch quiver's own Tensor message: shape 3, 5 -> 100000, 100000 and
# strides 40, 8 -> 0, 0 (each value occurs once as an int64 in the file).
python3 - "$tmp/small.arrow" "$tmp/huge.arrow" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
for old, new in ((3, 100000), (5, 100000), (40, 0), (8, 0)):
    p = struct.pack('<q', old)
    at = [i for i in range(len(b) - 7) if b[i:i + 8] == p]
    if len(at) != 1:
        sys.exit('int64 %d occurs %d times' % (old, len(at)))
    b[at[0]:at[0] + 8] = struct.pack('<q', new)
open(sys.argv[2], 'wb').write(b)
PY
check "the patched tensor was built" test -s "$tmp/huge.arrow"
out=$("$cli" inspect "$tmp/huge.arrow" 2>&1); rc=$?
check "the tensor reads as [100000, 100000] with zero strides ($out)" \
  has "$out" "shape=[100000, 100000] strides=[0, 0]"

# Each refusal: exit 1 within the timeout, both sizes named, no output file.
# (An ASan build reserves terabytes of address space and cannot start under
# ulimit -v: it runs with the timeout alone.)
if (ulimit -v 2000000; "$cli" --version) > /dev/null 2>&1; then
  limited() { (ulimit -v 2000000; timeout 20 "$cli" "$@"); }
else
  limited() { timeout 20 "$cli" "$@"; }
fi
dense_size=80000000000        # 10^10 float64
default_limit=17179869184     # 16 GiB
for to in dense coo csr csc csf; do
  out=$(limited convert "$tmp/huge.arrow" "$tmp/out.$to" --to=$to 2>&1); rc=$?
  check "convert --to=$to: exit 1 (got $rc: $out)" test $rc -eq 1
  check "convert --to=$to: names the limit ($out)" has "$out" "exceeds the limit of $default_limit (--max-output)"
  check "convert --to=$to: no output file" test ! -e "$tmp/out.$to"
done
out=$(limited convert "$tmp/huge.arrow" "$tmp/out" --to=dense 2>&1)
check "convert --to=dense: names the output size ($out)" has "$out" "output of $dense_size bytes"
out=$(limited convert "$tmp/huge.arrow" "$tmp/out" --to=coo 2>&1)
# worst case = every element: 10^10 x (2 int64 coordinates + 1 float64)
check "convert --to=coo: names the output size ($out)" has "$out" "output of 240000000000 bytes"
out=$(limited tensor to-npy "$tmp/huge.arrow" "$tmp/out.npy" 2>&1); rc=$?
check "to-npy: exit 1 (got $rc: $out)" test $rc -eq 1
check "to-npy: both sizes ($out)" has "$out" "output of $dense_size bytes exceeds the limit of $default_limit (--max-output)"
check "to-npy: no output file" test ! -e "$tmp/out.npy"

# Text output obeys the same limit: cat --json would print 10^10 values.
out=$(limited cat --json "$tmp/huge.arrow" 2>&1 > "$tmp/json.out"); rc=$?
check "cat --json: exit 1 (got $rc: $out)" test $rc -eq 1
check "cat --json: names the limit ($out)" has "$out" "exceeds the limit of $default_limit (--max-output)"
check "cat --json: prints nothing" test ! -s "$tmp/json.out"
out=$(limited cat --json --max-output 1K "$tmp/small.arrow" 2>&1 > "$tmp/json.out"); rc=$?
check "cat --json --max-output 1K of 15 values: exit 0 ($rc: $out)" test $rc -eq 0
check "cat --json: the values ($(cat "$tmp/json.out"))" has "$(cat "$tmp/json.out")" '"values": [[1, 2, 3, 4, 5], [6,'
out=$(limited cat --json --max-output 100 "$tmp/small.arrow" 2>&1 > "$tmp/json.out"); rc=$?
check "cat --json --max-output 100: exit 1 ($rc: $out)" test $rc -eq 1
check "cat --json --max-output 100: nothing printed" test ! -s "$tmp/json.out"
# A table of the tensor as cells holds every element too.
for cmd in "unstack $tmp/huge.arrow" "unstack $tmp/small.arrow --max-output 100"; do
  # shellcheck disable=SC2086
  out=$(limited tensor $cmd "$tmp/col.arrow" 2>&1); rc=$?
  check "tensor $cmd: exit 1 (got $rc: $out)" test $rc -eq 1
  check "tensor $cmd: names the limit ($out)" has "$out" "(--max-output)"
  check "tensor $cmd: no output file" test ! -e "$tmp/col.arrow"
done
out=$(limited tensor unstack "$tmp/huge.arrow" "$tmp/col.arrow" 2>&1)
check "unstack: both sizes ($out)" has "$out" "output of $dense_size bytes exceeds the limit of $default_limit (--max-output)"
out=$(limited tensor from-npy "$tmp/small.npy" "$tmp/col.arrow" --as-column --max-output 100 2>&1); rc=$?
check "from-npy --as-column --max-output 100: exit 1 ($rc: $out)" test $rc -eq 1
out=$(limited tensor unstack "$tmp/small.arrow" "$tmp/col.arrow" --max-output 120 2>&1); rc=$?
check "unstack --max-output 120 (exactly the size): passes ($rc: $out)" test $rc -eq 0

out=$(limited convert "$tmp/small.arrow" "$tmp/small_coo.arrow" --to=coo 2>&1); rc=$?
check "convert small --to=coo: exit 0 ($out)" test $rc -eq 0

# --max-output lowers and raises the limit.
out=$(limited convert "$tmp/small.arrow" "$tmp/o1" --to=dense --max-output=10 2>&1); rc=$?
check "--max-output=10 to dense: exit 1 ($rc: $out)" test $rc -eq 1
check "--max-output=10 to dense: both sizes ($out)" has "$out" "output of 120 bytes exceeds the limit of 10 (--max-output)"
out=$(limited convert "$tmp/small.arrow" "$tmp/o2" --to=coo --max-output 10 2>&1); rc=$?
check "--max-output 10 to coo: exit 1 ($rc: $out)" test $rc -eq 1
check "--max-output 10 to coo: both sizes ($out)" has "$out" "exceeds the limit of 10 (--max-output)"
out=$(limited tensor to-npy "$tmp/small.arrow" "$tmp/o3.npy" --max-output=10 2>&1); rc=$?
check "to-npy --max-output=10: exit 1 ($rc: $out)" test $rc -eq 1
out=$(limited tensor from-npy "$tmp/small.npy" "$tmp/o4.arrow" --max-output=10 2>&1); rc=$?
check "from-npy --max-output=10: exit 1 ($rc: $out)" test $rc -eq 1
out=$(limited tensor to-npz "$tmp/small_coo.arrow" "$tmp/o5.npz" --max-output=10 2>&1); rc=$?
check "to-npz --max-output=10: exit 1 ($rc: $out)" test $rc -eq 1
out=$(limited convert "$tmp/small.arrow" "$tmp/o6" --to=dense --max-output=1K 2>&1); rc=$?
check "--max-output=1K: a 120-byte output passes ($rc: $out)" test $rc -eq 0
out=$(limited tensor to-npy "$tmp/small.arrow" "$tmp/o7.npy" --max-output=120 2>&1); rc=$?
check "to-npy --max-output=120 (exactly the size): passes ($rc: $out)" test $rc -eq 0
out=$(limited convert "$tmp/small_coo.arrow" "$tmp/o8" --to=csr --max-output=1M 2>&1); rc=$?
check "sparse -> csr --max-output=1M: passes ($rc: $out)" test $rc -eq 0
# A raised limit is the one named (the 240 GB worst case is still over it).
out=$(limited convert "$tmp/huge.arrow" "$tmp/o9" --to=coo --max-output=128G 2>&1); rc=$?
check "--max-output=128G: still refused, naming 137438953472 ($out)" has "$out" "exceeds the limit of 137438953472 (--max-output)"

# Bad values are usage errors naming the option.
for bad in 0 -5 12Q K 99999999999T; do
  out=$("$cli" convert "$tmp/small.arrow" "$tmp/o10" --to=dense --max-output=$bad 2>&1); rc=$?
  check "--max-output=$bad: exit 2 ($rc)" test $rc -eq 2
  check "--max-output=$bad: names the option ($out)" has "$out" "--max-output"
done

qv_finish
