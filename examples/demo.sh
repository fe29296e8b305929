#!/usr/bin/env bash
# `make demo`: quiver's main job on the bundled example data (examples/data):
# NumPy and SciPy arrays into Arrow Tensor / SparseTensor messages and back,
# Arrow C++'s files read and printed, and a damaged file refused cleanly.
set -euo pipefail
cli=${1:?path to the quiver binary}
here=$(cd "$(dirname "$0")" && pwd)
data="$here/data"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

step() { printf '\n== %s\n' "$1"; }
run() { printf '$ quiver %s\n' "$*" | sed "s#$out/##g; s#$data/##g"; "$cli" "$@"; }

step "A NumPy array (Fortran order) becomes an Arrow Tensor message, zero-copy, column-major"
run tensor from-npy "$data/temperature_4x6x3_fortran.npy" "$out/temperature.arrow"
run inspect "$out/temperature.arrow"
run cat "$out/temperature.arrow"

step "A mostly-zero matrix as a CSR SparseTensor, converted to CSF and COO without densifying"
run tensor from-npy "$data/sparse_8x10.npy" "$out/sparse.arrow" --sparse=csr --index-type=int32
run inspect "$out/sparse.arrow"
run convert "$out/sparse.arrow" "$out/sparse_csf.arrow" --to=csf
run convert "$out/sparse_csf.arrow" "$out/sparse_coo.arrow" --to=coo
run cat "$out/sparse_coo.arrow"
run tensor to-npy "$out/sparse_coo.arrow" "$out/back.npy"
cmp -s <(tail -c 640 "$data/sparse_8x10.npy") <(tail -c 640 "$out/back.npy") &&
  echo "(back.npy holds exactly the values of sparse_8x10.npy)"

step "A SciPy CSC matrix (save_npz) through Arrow and back"
run tensor from-npz "$data/scipy_csc_5x7.npz" "$out/csc.arrow"
run inspect "$out/csc.arrow"
run tensor to-npz "$out/csc.arrow" "$out/csc_back.npz"

step "Files written by Arrow C++: a tensor, a CSR sparse tensor, a record batch file"
run inspect "$data/arrow_cpp_tensor_3x4_colmajor.arrow"
run cat "$data/arrow_cpp_csr_6x4.arrow"
run inspect "$data/arrow_cpp_record_batches.arrow"
run cat "$data/arrow_cpp_record_batches.arrow"
run validate "$data/arrow_cpp_record_batches.arrow"

step "From Python: import quiver (NumPy, SciPy, record batches; examples/python)"
pymod="$(cd "$(dirname "$cli")" && pwd)/python"
if [ -f "$pymod/quiver/__init__.py" ]; then
  PYTHONPATH="$pymod" /usr/bin/python3 "$here/python/numpy_scipy.py" "$out" \
    "$data/arrow_cpp_record_batches.arrow" | sed "s#$out/##g"
else
  echo "(the Python module is not built next to $cli: python3-dev and python3-numpy needed)"
fi

step "A damaged file gets a clear error and exit status 1, never a crash"
head -c 300 "$data/arrow_cpp_tensor_3x4_colmajor.arrow" > "$out/truncated.arrow"
if run inspect "$out/truncated.arrow"; then
  echo "demo: expected a failure on the truncated file" >&2
  exit 1
else
  echo "(exit status $?)"
fi
