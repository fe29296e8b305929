"""Reading a migrated sparse column into SciPy vs scipy.sparse.load_npz (#23).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_sparse_column.py [TMPDIR] [NNZ]

A CSR matrix of NNZ non-zeros (default 10^7, float64, int32 indices) is
written as a SparseTensor message and migrated (quiver.migrate) to a
quiver.sparse_tensor table; quiver.read_sparse_column of that table gives a
csr_matrix viewing the mapping. The reference, in the same run, is
scipy.sparse.load_npz of the same matrix saved uncompressed
(save_npz(compressed=False)). Also the quiver.sparse_vector form of the same
rows (write_sparse_column), and both reads followed by a sum of the values
(every page touched). Times are the best of several runs (files in the page
cache). Target: load_npz / read_sparse_column >= 5x.
"""
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import quiver


def best(fn, runs=7):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    tmp = sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir()
    nnz = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10 ** 7
    rows, cols = 100000, 1 << 20
    rng = np.random.default_rng(1)
    per = max(nnz // rows, 1)
    indptr = np.arange(rows + 1, dtype=np.int64) * per
    indices = np.sort(rng.integers(0, cols // per, size=(rows, per)) +
                      np.arange(per) * (cols // per), axis=1).astype(np.int32).ravel()
    data = rng.random(rows * per)
    m = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(rows, cols))
    msg = os.path.join(tmp, "bench_sc_msg.arrow")
    table = os.path.join(tmp, "bench_sc_table.arrows")
    vec = os.path.join(tmp, "bench_sc_vec.arrows")
    npz = os.path.join(tmp, "bench_sc.npz")
    quiver.write_sparse(msg, m)
    quiver.migrate(msg, table)
    quiver.write_sparse_column(vec, m)
    sp.save_npz(npz, m, compressed=False)
    (cell,) = quiver.read_sparse_column(table)
    assert (cell != m).nnz == 0 and (quiver.read_sparse_column(vec) != m).nnz == 0

    t_q = best(lambda: quiver.read_sparse_column(table))
    t_v = best(lambda: quiver.read_sparse_column(vec))
    t_n = best(lambda: sp.load_npz(npz))
    t_qs = best(lambda: quiver.read_sparse_column(table)[0].data.sum())
    t_ns = best(lambda: sp.load_npz(npz).data.sum())
    print(f"{m.nnz} nnz, {rows} x {cols} CSR float64 / int32")
    print(f"read_sparse_column (migrated sparse_tensor table): {t_q * 1e6:.1f} us; "
          f"load_npz uncompressed {t_n * 1e6:.1f} us; ratio {t_n / t_q:.1f}x (target >= 5x)")
    print(f"read_sparse_column (sparse_vector table): {t_v * 1e6:.1f} us; "
          f"ratio {t_n / t_v:.1f}x")
    print(f"with a sum of the values: {t_qs * 1e3:.2f} ms vs {t_ns * 1e3:.2f} ms; "
          f"ratio {t_ns / t_qs:.2f}x")
    for p in (msg, table, vec, npz):
        os.unlink(p)


if __name__ == "__main__":
    main()
