#!/usr/bin/env bash
# Every SparseTensor file Arrow C++ wrote: `quiver tensor to-npy` densifies
# it to the values, shape and type Arrow C++ read back (the .json
# companion); 2-D COO/CSR/CSC files written out with `quiver tensor to-npz`
# keep the index arrays and data exactly as stored; `quiver convert` to
# every other kind (and dense) gives the same values; `quiver cat` prints
# each. Every invalid/ and arrow_bugs/ sparse file is rejected (exit 1, a
# message naming the problem), except three that quiver reads on purpose:
# uint64 index types (supported in memory; Arrow C++ refuses them) and CSF
# buffer lengths in bytes (the Buffer definition; Arrow C++ uses element
# counts) - those must give the values of their valid counterparts.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_arrow_cpp_data
qv_need_python numpy
qv_tmpdir
exec "$py" - "$cli" "$data" "$tmp" <<'EOF'
import glob
import json
import math
import os
import subprocess
import sys

import numpy as np
from checks import Checks

cli, data, tmp = sys.argv[1:4]
checks = Checks(cli)
check, run = checks.check, checks.run




def p(name):
    return os.path.join(tmp, name)


def expected_values(values, dtype):
    if dtype.kind == "f":
        conv = []
        for v in values:
            if v is None or (isinstance(v, str) and v.lower() == "nan"):
                conv.append(math.nan)
            elif isinstance(v, str):
                conv.append(-math.inf if v.startswith("-") else math.inf)
            else:
                conv.append(float(v))
        return np.array(conv, dtype=np.float64).astype(dtype)
    return np.array(values, dtype=dtype)


def densify(path, out, *extra):
    r = run("tensor", "to-npy", path, out, *extra)
    return np.load(out) if r.returncode == 0 else r


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


files = sorted(glob.glob(os.path.join(data, "sparse_*.arrow")))
check(len(files) >= 90, "only %d sparse files found" % len(files))
for path in files:
    name = os.path.basename(path)[:-len(".arrow")]
    with open(os.path.join(data, name + ".json")) as f:
        meta = json.load(f, parse_int=lambda s: -0.0 if s == "-0" else int(s))
    kind = meta["kind"][len("sparse_"):]
    dtype = np.dtype(meta["type"])
    a = densify(path, p(name + ".npy"))
    check(isinstance(a, np.ndarray), "%s: to-npy failed: %r" % (name, getattr(a, "stderr", "")))
    if not isinstance(a, np.ndarray):
        continue
    check(a.dtype == dtype, "%s: dtype %s, json says %s" % (name, a.dtype, dtype))
    check(list(a.shape) == meta["shape"], "%s: shape %s, json says %s" % (name, a.shape, meta["shape"]))
    if meta["dense_row_major_values"] is not None:
        want = expected_values(meta["dense_row_major_values"], dtype).reshape(meta["shape"])
        check(same(a, want), "%s: values differ from Arrow C++'s" % name)
    r = run("cat", path)
    check(r.returncode == 0 and r.stdout.startswith(b"message 0: SparseTensor " + kind.upper().encode()),
          "%s: cat exit %d %r" % (name, r.returncode, r.stderr))

    # the stored arrays, through SciPy's layout
    if len(meta["shape"]) == 2 and kind in ("coo", "csr", "csc"):
        r = run("tensor", "to-npz", path, p("x.npz"))
        # float16 too: written as SciPy's save_npz writes float16 data
        check(r.returncode == 0, "%s: to-npz %r" % (name, r.stderr))
        if r.returncode == 0:
            with np.load(p("x.npz")) as z:
                m = {k: z[k] for k in z.files}
            itype = np.dtype(meta["indices_type"])
            check(same(m["data"], expected_values(meta["data"], dtype)), "%s: npz data" % name)
            check(list(m["shape"]) == meta["shape"], "%s: npz shape" % name)
            check(m["format"].item() == kind.encode(), "%s: npz format" % name)
            if kind == "coo":
                coords = np.array(meta["coords"], dtype=itype).reshape(-1, 2)
                check(same(m["row"], coords[:, 0]) and same(m["col"], coords[:, 1]),
                      "%s: npz row/col" % name)
            else:
                check(same(m["indices"], np.array(meta["indices"], dtype=itype)), "%s: npz indices" % name)
                check(same(m["indptr"], np.array(meta["indptr"], dtype=meta["indptr_type"])),
                      "%s: npz indptr" % name)

    # every other kind, and dense, hold the same values
    targets = ["dense", "coo", "csf"] + (["csr", "csc"] if len(meta["shape"]) == 2 else [])
    for to in targets:
        out = p("%s_%s.arrow" % (name, to))
        r = run("convert", path, out, "--to=" + to)
        check(r.returncode == 0, "%s: convert --to=%s %r" % (name, to, r.stderr))
        if r.returncode == 0:
            b = densify(out, p("c.npy"))
            check(isinstance(b, np.ndarray) and same(a, b), "%s: --to=%s changes the values" % (name, to))
    # CSF lengths in bytes are read back the same
    if kind == "csf":
        out = p(name + "_bytes.arrow")
        r = run("convert", path, out, "--to=csf", "--csf-lengths=bytes",
                "--axis-order=" + ",".join(str(x) for x in meta["axis_order"]))
        check(r.returncode == 0, "%s: csf bytes %r" % (name, r.stderr))
        b = densify(out, p("c.npy"))
        check(isinstance(b, np.ndarray) and same(a, b), "%s: csf bytes values" % name)

# ---- what must be rejected, and why
rejected = {
    "invalid/sparse_coo_coordinate_out_of_range.arrow": "coordinate 7 of dim 0 at non-zero 5 is out of range",
    "invalid/sparse_coo_unsorted_flagged_canonical.arrow": "flagged canonical but non-zero 1 sorts before",
    "invalid/sparse_csr_indptr_decreasing.arrow": "indptr is decreasing at position 4",
    "invalid/sparse_csr_fbs_example_literal_indptr_ends_10.arrow": "ends at 10, must end at 9",
    "arrow_bugs/sparse_coo_float64_idx_int64_2x3x4_from_colmajor_dense.arrow": "is out of range [0, 2)",
    "arrow_bugs/sparse_coo_float64_idx_int64_3x4_from_colmajor_dense.arrow": "is out of range [0, 3)",
}
accepted = {
    "invalid/sparse_coo_indices_uint64.arrow": "sparse_coo_float64_idx_int64_fbs_example_2x3x4x5_canonical.arrow",
    "invalid/sparse_csr_indptr_uint64.arrow": "sparse_csr_float64_idx_int64_fbs_example_6x4.arrow",
    "invalid/sparse_csf_buffer_lengths_in_bytes.arrow": "sparse_csf_float64_idx_int64_fbs_example_2x3x4x5.arrow",
}
listed = sorted(glob.glob(os.path.join(data, "invalid", "sparse_*.arrow")) +
                glob.glob(os.path.join(data, "arrow_bugs", "*.arrow")))
for path in listed:
    rel = os.path.relpath(path, data)
    check(rel in rejected or rel in accepted, "%s: not classified by this test" % rel)
for rel, needle in rejected.items():
    path = os.path.join(data, rel)
    for args in (("tensor", "to-npy", path, p("bad.npy")), ("cat", path),
                 ("convert", path, p("bad.arrow"), "--to=coo"), ("tensor", "to-npz", path, p("bad.npz"))):
        r = run(*args)
        err = r.stderr.decode(errors="replace")
        check(r.returncode == 1 and err.startswith("quiver ") and needle in err,
              "%s: %s exit %d %r" % (rel, " ".join(args[:2]), r.returncode, err))
    for leftover in ("bad.npy", "bad.arrow", "bad.npz"):
        check(not os.path.exists(p(leftover)), "%s: %s left behind" % (rel, leftover))
for rel, twin in accepted.items():
    a = densify(os.path.join(data, rel), p("acc.npy"))
    b = densify(os.path.join(data, twin), p("twin.npy"))
    check(isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and same(a, b),
          "%s: not read as %s" % (rel, twin))

# ---- dense Arrow C++ tensors to every sparse kind and back
for path in sorted(glob.glob(os.path.join(data, "tensor_*.arrow"))):
    name = os.path.basename(path)[:-len(".arrow")]
    a = densify(path, p("t.npy"))
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        continue
    for to in ["coo", "csf"] + (["csr", "csc"] if a.ndim == 2 else []):
        out = p("t_%s.arrow" % to)
        r = run("convert", path, out, "--to=" + to, "--index-type=int32")
        check(r.returncode == 0, "%s: convert --to=%s %r" % (name, to, r.stderr))
        if r.returncode == 0:
            b = densify(out, p("t2.npy"))
            ok = isinstance(b, np.ndarray) and b.dtype == a.dtype and b.shape == a.shape
            # -0.0 is a zero: the sparse form drops it, densified it is +0.0
            ok = ok and np.array_equal(np.where(a == 0, 0, a), b, equal_nan=a.dtype.kind == "f")
            check(ok, "%s: --to=%s and back changes the values" % (name, to))

checks.finish("arrow-cpp sparse")
EOF
