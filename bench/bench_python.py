"""Python module benchmarks (figures in bench/README.md).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [TMPDIR]

1. read_tensor of a 1 MiB and a 1 GiB file: zero-copy, so both take the
   same microseconds (open, read the metadata, map the body).
2. read_sparse of a CSR matrix with 10^7 non-zeros into a csr_matrix, against
   scipy.sparse.load_npz of the same matrix saved uncompressed, in the same
   run; and both followed by a sum of the values (every page touched).
Times are the best of several runs (files in the page cache).
"""
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import quiver


def best(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    tmp = tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else None)
    try:
        small, big = os.path.join(tmp, "1mib.arrow"), os.path.join(tmp, "1gib.arrow")
        quiver.write_tensor(small, np.ones(1 << 17, np.float64))
        quiver.write_tensor(big, np.ones(1 << 27, np.float64))
        t_small = best(lambda: quiver.read_tensor(small), 200)
        t_big = best(lambda: quiver.read_tensor(big), 200)
        print("read_tensor 1 MiB: %.1f us   1 GiB: %.1f us   ratio %.2f" % (
            t_small * 1e6, t_big * 1e6, t_big / t_small))
        os.unlink(big)

        rows, per_row = 10 ** 6, 10
        rng = np.random.default_rng(0)
        cols = rng.integers(0, 10 ** 5, size=(rows, per_row)) + np.arange(per_row) * 10 ** 5
        m = sp.csr_matrix((rng.random(rows * per_row), cols.reshape(-1).astype(np.int32),
                           np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)),
                          shape=(rows, 10 ** 6))
        npz, arrow = os.path.join(tmp, "m.npz"), os.path.join(tmp, "m.arrow")
        sp.save_npz(npz, m, compressed=False)
        quiver.write_sparse(arrow, m)
        del m, cols
        assert (quiver.read_sparse(arrow) != sp.load_npz(npz)).nnz == 0
        t_q = best(lambda: quiver.read_sparse(arrow), 20)
        t_s = best(lambda: sp.load_npz(npz), 5)
        print("10^7-nnz CSR: quiver.read_sparse %.3f ms   scipy.load_npz (stored) %.1f ms   "
              "%.0fx faster" % (t_q * 1e3, t_s * 1e3, t_s / t_q))
        t_qs = best(lambda: quiver.read_sparse(arrow).data.sum(), 5)
        t_ss = best(lambda: sp.load_npz(npz).data.sum(), 5)
        print("  ... then data.sum(): quiver %.1f ms   scipy %.1f ms   %.1fx faster" % (
            t_qs * 1e3, t_ss * 1e3, t_ss / t_qs))
        ok = t_big / t_small < 2 and t_s / t_q >= 5
        print("targets (1 GiB within 2x of 1 MiB; read_sparse >= 5x load_npz):",
              "met" if ok else "NOT met")
        return 0 if ok else 1
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


if __name__ == "__main__":
    sys.exit(main())
