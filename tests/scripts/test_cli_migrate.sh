#!/usr/bin/env bash
# quiver migrate: Tensor / SparseTensor messages made here (NumPy arrays
# through tensor from-npy, column-major and with --sparse) -> one table ->
# --to-messages, compared by values, shape, type and layout (cat); groups
# are an error naming them, --split writes one file per group, named;
# --file, stdin/stdout, --max-output and usage errors; exit codes.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_python numpy
qv_tmpdir
"$py" - "$tmp" <<'PY' || exit 1
import sys
import numpy as np
t = sys.argv[1]
a = np.arange(12, dtype=np.float64).reshape(3, 4)
np.save(f"{t}/a.npy", a)
np.save(f"{t}/f.npy", np.asfortranarray(a * 2))
np.save(f"{t}/b.npy", np.arange(6, dtype=np.float64).reshape(2, 3))
np.save(f"{t}/i.npy", np.arange(8, dtype=np.int32))
s = np.zeros((4, 5), dtype=np.float32)
s[0, 1], s[2, 3], s[3, 0] = 1.5, -2, 7
np.save(f"{t}/s.npy", s)
PY
for x in a f b i; do "$cli" tensor from-npy "$tmp/$x.npy" "$tmp/$x.arrow" || exit 1; done
"$cli" tensor from-npy "$tmp/s.npy" "$tmp/csr.arrow" --sparse=csr --index-type=int32 || exit 1
"$cli" tensor from-npy "$tmp/s.npy" "$tmp/coo.arrow" --sparse=coo || exit 1

# one message, column-major: a permutation, no notice, back column-major
run migrate "$tmp/f.arrow" "$tmp/f.arrows"
check "column-major migrates" [ "$rc" -eq 0 ]
check "no notice for a permutation" [ -z "$err" ]
run cat "$tmp/f.arrows"
check "fixed shape column" has "$out" "arrow.fixed_shape_tensor"
run migrate --to-messages "$tmp/f.arrows" "$tmp/f2.arrow"
check "back" [ "$rc" -eq 0 ]
check "back equal (cat)" cmp -s <("$cli" cat "$tmp/f.arrow") <("$cli" cat "$tmp/f2.arrow")
run cat "$tmp/f2.arrow"
check "back column-major" has "$out" "column-major"

# several dense messages of equal shape: fixed shape; other shapes: variable
cat "$tmp/a.arrow" "$tmp/a.arrow" > "$tmp/aa.arrow"
cat "$tmp/a.arrow" "$tmp/b.arrow" "$tmp/a.arrow" > "$tmp/ab.arrow"
run migrate "$tmp/aa.arrow" "$tmp/aa.arrows"
check "equal shapes" [ "$rc" -eq 0 ]
check "fixed shape" has "$("$cli" cat "$tmp/aa.arrows")" "arrow.fixed_shape_tensor"
run migrate "$tmp/ab.arrow" "$tmp/ab.arrows" --file --name cells
check "other shapes" [ "$rc" -eq 0 ]
check "variable shape, named" has "$("$cli" cat "$tmp/ab.arrows")" "cells: extension<arrow.variable_shape_tensor"
check "--file writes a file" [ "$(head -c 6 "$tmp/ab.arrows")" = "ARROW1" ]
run migrate --to-messages "$tmp/ab.arrows" "$tmp/ab2.arrow"
check "variable shape back" cmp -s <("$cli" cat "$tmp/ab.arrow") <("$cli" cat "$tmp/ab2.arrow")

# layouts differ: copied, said on stderr; values equal
cat "$tmp/a.arrow" "$tmp/f.arrow" > "$tmp/af.arrow"
run migrate "$tmp/af.arrow" "$tmp/af.arrows"
check "mixed layouts migrate" [ "$rc" -eq 0 ]
check "notice names the message" has "$err" "message 1: shape [3, 4] strides [8, 24]"
"$cli" migrate --to-messages "$tmp/af.arrows" - > "$tmp/af2.arrow"
check "to stdout" [ $? -eq 0 ]
check "values equal after a copy" cmp -s <("$cli" cat "$tmp/af.arrow" | grep -v '^message') \
  <("$cli" cat "$tmp/af2.arrow" | grep -v '^message')

# sparse messages: a quiver.sparse_tensor column; back equal
cat "$tmp/csr.arrow" "$tmp/csr.arrow" > "$tmp/csr2.arrow"
run migrate - "$tmp/csr.arrows" < "$tmp/csr2.arrow"
check "sparse from stdin" [ "$rc" -eq 0 ]
check "sparse column" has "$("$cli" cat "$tmp/csr.arrows")" "quiver.sparse_tensor"
run migrate --to-messages "$tmp/csr.arrows" "$tmp/csr3.arrow"
check "sparse back equal" cmp -s <("$cli" cat "$tmp/csr2.arrow") <("$cli" cat "$tmp/csr3.arrow")
check "sparse back: format and index types" has "$("$cli" inspect "$tmp/csr3.arrow")" "CSR"

# groups: an error listing them (exit 1, OUT untouched); --split names them
cat "$tmp/a.arrow" "$tmp/i.arrow" "$tmp/coo.arrow" "$tmp/a.arrow" > "$tmp/mix.arrow"
run migrate "$tmp/mix.arrow" "$tmp/mix.arrows"
check "mixed: exit 1" [ "$rc" -eq 1 ]
check "mixed: the groups listed" has "$err" "messages of 3 groups: tensor_float64_2d (2 messages, first 0), tensor_int32_1d (1 message, first 1), coo_float32_int64_2d (1 message, first 2)"
check "mixed: no output" [ ! -e "$tmp/mix.arrows" ]
run migrate --split "$tmp/mix.arrow" "$tmp/mix.arrows"
check "split" [ "$rc" -eq 0 ]
for g in tensor_float64_2d tensor_int32_1d coo_float32_int64_2d; do
  check "split: $g" [ -s "$tmp/mix.$g.arrows" ]
done
check "split: rows" has "$("$cli" cat "$tmp/mix.tensor_float64_2d.arrows")" "(2 rows in 1 batch)"
run migrate --to-messages "$tmp/mix.coo_float32_int64_2d.arrows" "$tmp/coo2.arrow"
check "split group back" cmp -s <("$cli" cat "$tmp/coo.arrow") <("$cli" cat "$tmp/coo2.arrow")

# limits, refusals, usage
run migrate "$tmp/aa.arrow" "$tmp/x.arrows" --max-output 100
check "--max-output: exit 1" [ "$rc" -eq 1 ]
check "--max-output named" has "$err" "max-output"
check "--max-output: no output" [ ! -e "$tmp/x.arrows" ]
run migrate --to-messages "$tmp/aa.arrows" "$tmp/x.arrow" --max-output 100
check "--to-messages --max-output: exit 1" [ "$rc" -eq 1 ]
run migrate "$tmp/aa.arrows" "$tmp/x.arrows"
check "a table is no input: exit 1" [ "$rc" -eq 1 ]
check "a table is no input: said" has "$err" "message 0 is a Schema"
run migrate --to-messages "$tmp/aa.arrow" "$tmp/x.arrow"
check "messages are no table: exit 1" [ "$rc" -eq 1 ]
head -c 100 "$tmp/a.arrow" > "$tmp/cut.arrow"
run migrate "$tmp/cut.arrow" "$tmp/x.arrows"
check "truncated: exit 1" [ "$rc" -eq 1 ]
run migrate --split "$tmp/mix.arrow" -
check "--split to stdout: usage" [ "$rc" -eq 2 ]
run migrate --to-messages --file "$tmp/aa.arrows" "$tmp/x.arrow"
check "--to-messages --file: usage" [ "$rc" -eq 2 ]
run migrate "$tmp/aa.arrow"
check "one operand: usage" [ "$rc" -eq 2 ]
run migrate "$tmp/aa.arrow" "$tmp/x.arrows" --threads 0
check "--threads 0: usage" [ "$rc" -eq 2 ]
run migrate "$tmp/aa.arrow" "$tmp/x.arrows" --threads 2
check "--threads 2" [ "$rc" -eq 0 ]
run help migrate
check "help" has "$out" "--to-messages"
qv_finish test_cli_migrate
