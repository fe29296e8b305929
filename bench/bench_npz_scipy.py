"""SciPy's side of bench_npz (run by it through /usr/bin/python3).

    bench_npz_scipy.py DIR make    builds the 10^7-non-zero 200000 x 100000
                                   float64 CSR matrix (int32 indices) and saves
                                   DIR/stored.npz and DIR/deflated.npz with
                                   scipy.sparse.save_npz
    bench_npz_scipy.py DIR time R  times SciPy on them, best of R (save_npz
                                   deflated: best of max(1, R // 3), ~10 s each)
    bench_npz_scipy.py DIR stored R  only load_npz + tofile of DIR/stored.npz,
                                   without and with fsync (another directory)

Prints one "name wall_seconds cpu_seconds" line per timing.
"""
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

ROWS, COLS, NNZ = 200000, 100000, 10**7


def make(d):
    rng = np.random.default_rng(14)
    keys = np.unique(rng.integers(0, ROWS * COLS, int(NNZ * 1.01)))
    keys = np.sort(keys[rng.choice(len(keys), NNZ, replace=False)])
    r, c = keys // COLS, keys % COLS
    indptr = np.searchsorted(r, np.arange(ROWS + 1)).astype(np.int32)
    m = sp.csr_matrix((rng.random(NNZ), c.astype(np.int32), indptr), shape=(ROWS, COLS))
    assert m.nnz == NNZ and m.has_canonical_format
    sp.save_npz(os.path.join(d, "stored.npz"), m, compressed=False)
    sp.save_npz(os.path.join(d, "deflated.npz"), m, compressed=True)


def best(fn, reps):
    """Best wall time and best CPU time (this process, user + system)."""
    t, c = float("inf"), float("inf")
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        t = min(t, time.perf_counter() - t0)
        c = min(c, time.process_time() - c0)
    return "%.6f %.6f" % (t, c)


def tofile_timings(d, reps):
    """load_npz + tofile of the buffers an Arrow SparseTensor file holds,
    as a scratch file and as a durable one (fsync, then renamed into place,
    as quiver commits its output without --no-fsync)."""
    p = lambda n: os.path.join(d, n)
    out = p("scipy_out.bin")

    def load_and_tofile(durable):
        m = sp.load_npz(p("stored.npz"))
        dst = out + ".tmp" if durable else out
        with open(dst, "wb") as f:
            m.indptr.tofile(f)
            m.indices.tofile(f)
            m.data.tofile(f)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        if durable:
            os.rename(dst, out)

    def fresh(durable):
        # as the CLI's runs: the output removed before each
        if os.path.exists(out):
            os.unlink(out)
        load_and_tofile(durable)

    print("load_npz_stored_tofile %s" % best(lambda: fresh(False), reps))
    print("load_npz_stored_tofile_fsync %s" % best(lambda: fresh(True), reps))
    os.unlink(out)


def timings(d, reps):
    p = lambda n: os.path.join(d, n)
    m = sp.load_npz(p("stored.npz"))
    print("load_npz_stored %s" % best(lambda: sp.load_npz(p("stored.npz")), reps))
    tofile_timings(d, reps)
    print("load_npz_deflated %s" % best(lambda: sp.load_npz(p("deflated.npz")), reps))
    print("save_npz_stored %s" % best(lambda: sp.save_npz(p("scipy_s.npz"), m, compressed=False), reps))
    print("save_npz_deflated %s" % best(lambda: sp.save_npz(p("scipy_d.npz"), m, compressed=True),
                                        max(1, reps // 3)))
    for n in ("scipy_s.npz", "scipy_d.npz"):
        os.unlink(p(n))
    sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[2] == "make":
        make(sys.argv[1])
    elif sys.argv[2] == "stored":
        tofile_timings(sys.argv[1], int(sys.argv[3]))
        sys.stdout.flush()
    else:
        timings(sys.argv[1], int(sys.argv[3]))
