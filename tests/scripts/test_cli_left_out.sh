#!/usr/bin/env bash
# A build configured without integration JSON (-DQV_WITH_JSON=OFF) or the
# NumPy formats (-DQV_WITH_NUMPY=OFF): the commands that need them exit 3
# (valid input, not supported) with a sentence saying the build left the
# format out, write no output file, and the rest of the CLI works. In a
# build with both formats there is nothing to check: skipped.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
ex=$QV_SOURCE_DIR/examples/data
with_json=${QV_WITH_JSON:?ctest sets QV_WITH_JSON} with_numpy=${QV_WITH_NUMPY:?ctest sets QV_WITH_NUMPY}
[ "$with_json" = 1 ] && [ "$with_numpy" = 1 ] && qv_skip "this build has integration JSON and the NumPy formats"
qv_tmpdir
cd "$tmp" || exit 1
batches=$ex/arrow_cpp_record_batches.arrow
tensor=$ex/arrow_cpp_tensor_3x4_colmajor.arrow

# left_out WHAT OPTION ARGS...: exit 3, the sentence names the option, no OUT file
left_out() {
  local what=$1 option=$2
  shift 2
  rm -f out.*
  run "$@"
  check "$what: exit 3 ($rc)" test "$rc" -eq 3
  check "$what: says the build left it out ($err)" has "$err" "this build of quiver left out"
  check "$what: names $option" has "$err" "$option=OFF"
  check "$what: writes no output" bash -c '! ls out.* 2>/dev/null | grep -q .'
}

if [ "$with_json" = 0 ]; then
  echo '{"schema": {"fields": []}, "batches": []}' > in.json
  left_out "integration json-to-arrow" QV_WITH_JSON integration --mode=json-to-arrow --json=in.json --arrow=out.arrow
  left_out "integration arrow-to-json" QV_WITH_JSON integration --mode=arrow-to-json --arrow="$batches" --json=out.json
  left_out "cat --json" QV_WITH_JSON cat --json "$batches"
fi
if [ "$with_numpy" = 0 ]; then
  cp "$ex/sparse_8x10.npy" in.npy
  cp "$ex/scipy_csc_5x7.npz" in.npz
  left_out "tensor from-npy" QV_WITH_NUMPY tensor from-npy in.npy out.arrow
  left_out "tensor to-npy" QV_WITH_NUMPY tensor to-npy "$tensor" out.npy
  left_out "tensor from-npz" QV_WITH_NUMPY tensor from-npz in.npz out.arrow
  left_out "tensor to-npz" QV_WITH_NUMPY tensor to-npz "$ex/arrow_cpp_csr_6x4.arrow" out.npz
fi

# what does not need them still works
run cat "$batches"
check "cat still works (exit $rc)" test "$rc" -eq 0 -a -n "$out"
run inspect "$tensor"
check "inspect still works (exit $rc)" test "$rc" -eq 0
run convert "$ex/arrow_cpp_csr_6x4.arrow" out.arrow --to=coo
check "convert still works (exit $rc)" test "$rc" -eq 0 -a -s out.arrow

qv_finish test_cli_left_out
