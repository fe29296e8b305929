#!/usr/bin/python3
"""Reference timing for bench/bench_sparse.c: SciPy's coo_matrix.tocsr() on
10^7 random non-zeros in a 10^6 x 10^6 float64 matrix (the same problem the
C benchmark converts). Prints scipy_tocsr_seconds <best of 5>, then
scipy_tocsc_seconds <best of 5> (CSR -> CSC of the result, each call from
the CSR), then versions."""
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp


def main():
    n = 10**6
    nnz = int(sys.argv[1]) if len(sys.argv) > 1 else 10**7
    rng = np.random.default_rng(12345)
    rows = rng.integers(0, n, nnz, dtype=np.int64)
    cols = rng.integers(0, n, nnz, dtype=np.int64)
    vals = rng.random(nnz)
    m = sp.coo_matrix((vals, (rows, cols)), shape=(n, n))
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        csr = m.tocsr()
        best = min(best, time.perf_counter() - t)
    assert csr.has_sorted_indices
    print("scipy_tocsr_seconds %.6f" % best)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        csc = csr.tocsc()
        best = min(best, time.perf_counter() - t)
    assert csc.nnz == csr.nnz
    print("scipy_tocsc_seconds %.6f" % best)
    print("scipy_version %s numpy_version %s index_dtype %s nnz_out %d"
          % (scipy.__version__, np.__version__, csr.indices.dtype, csr.nnz))


if __name__ == "__main__":
    main()
