#!/usr/bin/env bash
# SciPy matrices with unsorted indices within a row (A[:, perm], which
# save_npz keeps as they are) and repeated indices: `quiver tensor from-npz`
# sorts and sums them as sum_duplicates does, says so on stderr and exits 0;
# to-npz then gives SciPy the same matrix with sorted indices.
set -uo pipefail
py=/usr/bin/python3
if ! "$py" -c 'import numpy, scipy.sparse' 2>/dev/null; then
  echo "python3 with numpy and scipy not available: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec "$py" - "$QV_CLI" "$tmp" <<'EOF'
import os
import subprocess
import sys

import numpy as np
import scipy.sparse as sp

cli, tmp = sys.argv[1:3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def roundtrip(name, A, compressed, want_line):
    src = os.path.join(tmp, name + ".npz")
    arrow = os.path.join(tmp, name + ".arrow")
    out = os.path.join(tmp, name + "-out.npz")
    sp.save_npz(src, A, compressed=compressed)
    r = subprocess.run([cli, "tensor", "from-npz", src, arrow], capture_output=True, text=True)
    check(r.returncode == 0, f"{name}: from-npz exit {r.returncode}: {r.stderr}")
    check(r.stderr.strip() == want_line.replace("IN", src),
          f"{name}: stderr {r.stderr!r}, wanted {want_line!r}")
    r = subprocess.run([cli, "tensor", "to-npz", arrow, out], capture_output=True, text=True)
    check(r.returncode == 0, f"{name}: to-npz exit {r.returncode}: {r.stderr}")
    if r.returncode:
        return
    B = sp.load_npz(out)
    check(B.format == A.format and B.dtype == A.dtype, f"{name}: {B.format} {B.dtype}")
    check((B != A).nnz == 0, f"{name}: values differ")
    check(B.has_sorted_indices, f"{name}: indices not sorted")
    ref = A.copy()
    ref.sum_duplicates()
    check(B.nnz == ref.nnz, f"{name}: nnz {B.nnz}, sum_duplicates gives {ref.nnz}")


rng = np.random.default_rng(10)
D = rng.random((30, 40))
D[D < 0.7] = 0
perm = rng.permutation(40)
msg = ("quiver tensor from-npz: IN: indices were not sorted within {}; sorted "
       "as SciPy's sum_duplicates does")
for compressed in (True, False):
    tag = "z" if compressed else "s"
    A = sp.csr_matrix(D)[:, perm]
    check(not A.has_sorted_indices, "A[:, perm] came out sorted: the test proves nothing")
    roundtrip("csr-" + tag, A, compressed, msg.format("rows"))
    C = sp.csc_matrix(D)[rng.permutation(30), :]
    check(not C.has_sorted_indices, "C[perm, :] came out sorted: the test proves nothing")
    roundtrip("csc-" + tag, C, compressed, msg.format("columns"))
    # repeated indices too: 3 duplicates, one of them summing to zero (kept)
    E = sp.csr_matrix((np.array([1, 2, 5, -5, 7, 8, 9], dtype=np.int64),
                       np.array([3, 0, 2, 2, 3, 3, 3]), np.array([0, 2, 4, 7])), shape=(3, 5))
    roundtrip("dup-" + tag, E, compressed,
              "quiver tensor from-npz: IN: indices were not sorted within rows; sorted "
              "(and 3 duplicates summed) as SciPy's sum_duplicates does")
    # canonical input: no line
    roundtrip("sorted-" + tag, sp.csr_matrix(D), compressed, "")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
EOF
