#!/usr/bin/env bash
# Sparse columns in the CLI: tensor unstack of a CSR SparseTensor (made here
# from a NumPy array) -> a quiver.sparse_vector table; cat shows each row's
# shape and nnz, inspect the column type; tensor stack of that table -> the
# CSR message again (values, shape, index types); a migrated
# quiver.sparse_tensor table shows format, shape and nnz per cell; COO
# unstack is a one-row quiver.sparse_tensor table, a sparse_tensor column is
# no stack input (1).
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_python numpy
qv_tmpdir
"$py" - "$tmp" <<'PY' || exit 1
import sys
import numpy as np
t = sys.argv[1]
s = np.zeros((4, 5), dtype=np.float32)
s[0, 1], s[2, 3], s[2, 4], s[3, 0] = 1.5, -2, 3, 7
np.save(f"{t}/s.npy", s)
PY
"$cli" tensor from-npy "$tmp/s.npy" "$tmp/csr.arrow" --sparse=csr --index-type=int32 || exit 1
"$cli" tensor from-npy "$tmp/s.npy" "$tmp/coo.arrow" --sparse=coo || exit 1

run tensor unstack "$tmp/csr.arrow" "$tmp/v.arrows" --name emb
check "unstack CSR" [ "$rc" -eq 0 ]
run cat "$tmp/v.arrows"
check "cat: vector type" has "$out" "emb: extension<quiver.sparse_vector[value_type=float, size=5, index_type=int32]>"
check "cat: row 0" has "$(sed -n 3p <<<"$out")" "[5] nnz=1"
check "cat: row 1" has "$(sed -n 4p <<<"$out")" "[5] nnz=0"
check "cat: row 2" has "$(sed -n 5p <<<"$out")" "[5] nnz=2"
check "cat: rows" has "$out" "(4 rows in 1 batch)"
run inspect "$tmp/v.arrows"
check "inspect: vector column, as cat spells it" has "$out" "emb: extension<quiver.sparse_vector[value_type=float, size=5, index_type=int32]>"
check "inspect: a cell" has "$out" "  emb batch 0 row 2: [5] nnz=2"
check "inspect: every cell" [ "$(grep -c '^  emb batch 0 row' <<<"$out")" -eq 4 ]
run tensor stack "$tmp/v.arrows" "$tmp/back.arrow"
check "stack" [ "$rc" -eq 0 ]
check "stack: the CSR again" cmp -s <("$cli" cat "$tmp/csr.arrow") <("$cli" cat "$tmp/back.arrow")
run inspect "$tmp/back.arrow"
check "stack: CSR int32 indices" has "$out" "int32"
run tensor unstack "$tmp/csr.arrow" "$tmp/vf.arrows" --file
check "unstack --file" [ "$(head -c 6 "$tmp/vf.arrows")" = "ARROW1" ]
run tensor stack "$tmp/vf.arrows" "$tmp/back2.arrow" --column emb
check "stack --column of a missing name: exit 1" [ "$rc" -eq 1 ]
run tensor stack "$tmp/vf.arrows" "$tmp/back2.arrow" --column sparse
check "stack a file" cmp -s <("$cli" cat "$tmp/csr.arrow") <("$cli" cat "$tmp/back2.arrow")

cat "$tmp/csr.arrow" "$tmp/csr.arrow" > "$tmp/two.arrow"
run migrate "$tmp/two.arrow" "$tmp/t.arrows"
run cat "$tmp/t.arrows"
check "cat: sparse_tensor type" has "$out" "sparse: extension<quiver.sparse_tensor[value_type=float, format=csr, ndim=2, index_type=int32, indptr_type=int32]>"
check "cat: format, shape, nnz per cell" has "$out" "csr [4, 5] nnz=4"
run inspect "$tmp/t.arrows"
check "inspect: sparse_tensor column, as cat spells it" has "$out" "sparse: extension<quiver.sparse_tensor[value_type=float, format=csr, ndim=2, index_type=int32, indptr_type=int32]>"
check "inspect: format, shape, nnz per cell" has "$out" "  sparse batch 0 row 1: csr [4, 5] nnz=4"
run inspect "$tmp/csr.arrow"
check "inspect of messages" [ "$rc" -eq 0 ]
check "inspect: no cell lines for messages" [ "$(grep -c 'batch 0 row' <<<"$out")" -eq 0 ]
run tensor stack "$tmp/t.arrows" "$tmp/x.arrow"
check "sparse_tensor stack: exit 1" [ "$rc" -eq 1 ]
check "sparse_tensor stack: why" has "$err" "stack takes a quiver.sparse_vector column"
run tensor unstack "$tmp/coo.arrow" "$tmp/x.arrows"
check "COO unstack" [ "$rc" -eq 0 ]
check "COO unstack: one quiver.sparse_tensor row" has "$("$cli" cat "$tmp/x.arrows")" "coo [4, 5] nnz=4"
run migrate --to-messages "$tmp/x.arrows" "$tmp/coo2.arrow"
check "COO unstack: the message again" cmp -s <("$cli" cat "$tmp/coo.arrow") <("$cli" cat "$tmp/coo2.arrow")
run tensor unstack "$tmp/coo.arrow" "$tmp/y.arrows" --max-output 16
check "COO unstack --max-output: exit 1" [ "$rc" -eq 1 ]
check "COO unstack --max-output: no output" [ ! -e "$tmp/y.arrows" ]
qv_finish test_cli_sparse_column
