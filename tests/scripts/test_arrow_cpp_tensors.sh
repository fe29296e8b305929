#!/usr/bin/env bash
# Every tensor file Arrow C++ wrote: `quiver tensor to-npy` then NumPy
# compares with the values, shape, type and layout Arrow C++ itself read
# back (the .json companion). Invalid tensor files must give exit 1 and a
# message; `quiver cat` must print every valid file.
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




def expected_values(values, dtype):
    """The json's numbers as an array of dtype; NaN/inf may be written as
    strings ("NaN", "Infinity", "-Infinity") or null."""
    if dtype.kind == "f":
        conv = []
        for v in values:
            if v is None or (isinstance(v, str) and v.lower() == "nan"):
                conv.append(math.nan)
            elif isinstance(v, str):
                conv.append(-math.inf if v.startswith("-") else math.inf)
            else:
                conv.append(float(v))
        # float16/float32 values are printed as the nearest short decimal;
        # converting that to the type gives back the exact value
        return np.array(conv, dtype=np.float64).astype(dtype)
    return np.array(values, dtype=dtype)


files = sorted(glob.glob(os.path.join(data, "tensor_*.arrow")))
check(len(files) > 0, "no tensor files found")
for path in files:
    name = os.path.basename(path)[:-len(".arrow")]
    with open(os.path.join(data, name + ".json")) as f:
        # "-0" must stay a negative zero, not the integer 0
        meta = json.load(f, parse_int=lambda s: -0.0 if s == "-0" else int(s))
    out = os.path.join(tmp, name + ".npy")
    r = run("tensor", "to-npy", path, out)
    check(r.returncode == 0, "%s: to-npy exit %d %r" % (name, r.returncode, r.stderr))
    if r.returncode != 0:
        continue
    a = np.load(out)
    dtype = np.dtype(meta["type"])
    check(a.dtype == dtype, "%s: dtype %s, json says %s" % (name, a.dtype, meta["type"]))
    check(list(a.shape) == meta["shape"], "%s: shape %s, json says %s" % (name, a.shape, meta["shape"]))
    want = expected_values(meta["dense_row_major_values"], dtype)
    got = a.ravel(order="C")
    check(got.size == want.size, "%s: %d values, json has %d" % (name, got.size, want.size))
    if got.size == want.size:
        if dtype.kind == "f":
            nan_g, nan_w = np.isnan(got), np.isnan(want)
            ok = (np.array_equal(nan_g, nan_w) and
                  np.array_equal(got[~nan_g], want[~nan_w]) and
                  np.array_equal(np.signbit(got[~nan_g]), np.signbit(want[~nan_w])))
        else:
            ok = np.array_equal(got, want)
        check(ok, "%s: values differ:\n  got  %s\n  want %s" % (name, got.tolist(), want.tolist()))
    # a column-major file stays column-major; everything else is C order
    if meta.get("is_column_major") and not meta.get("is_row_major") and a.size > 0:
        check(a.flags.f_contiguous and not a.flags.c_contiguous, "%s: not Fortran order" % name)
    else:
        check(a.flags.c_contiguous, "%s: not C order" % name)
    r = run("cat", path)
    check(r.returncode == 0 and r.stdout.startswith(b"message 0: Tensor " + meta["type"].encode()),
          "%s: cat exit %d %r" % (name, r.returncode, r.stdout[:80]))
    # quiver's own file: same values again
    mid = os.path.join(tmp, name + ".q.arrow")
    back = os.path.join(tmp, name + ".q.npy")
    r1 = run("tensor", "from-npy", out, mid)
    r2 = run("tensor", "to-npy", mid, back)
    check(r1.returncode == 0 and r2.returncode == 0, "%s: quiver round trip exit %d/%d" % (
        name, r1.returncode, r2.returncode))
    if r2.returncode == 0:
        b = np.load(back)
        check(b.dtype == a.dtype and b.shape == a.shape and
              np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                             np.ascontiguousarray(b).view(np.uint8)),
              "%s: quiver round trip differs" % name)

invalid = sorted(glob.glob(os.path.join(data, "invalid", "tensor_*.arrow")))
check(len(invalid) > 0, "no invalid tensor files found")
for path in invalid:
    name = os.path.basename(path)
    for args in (("tensor", "to-npy", path, os.path.join(tmp, "bad.npy")), ("cat", path)):
        r = run(*args)
        err = r.stderr.decode(errors="replace")
        check(r.returncode == 1 and err.startswith("quiver ") and len(err.strip()) > 20,
              "%s: %s exit %d %r" % (name, args[0], r.returncode, err))
    check(not os.path.exists(os.path.join(tmp, "bad.npy")), "%s: output left behind" % name)

# A sparse tensor densifies on to-npy (the sparse files' own checks live in
# test_arrow_cpp_sparse); here: the dense values Arrow C++ listed.
sparse = sorted(glob.glob(os.path.join(data, "sparse_coo_*.arrow")))[:1]
for path in sparse:
    out = os.path.join(tmp, "sparse.npy")
    r = run("tensor", "to-npy", path, out)
    check(r.returncode == 0, "sparse file: exit %d %r" % (r.returncode, r.stderr))
    if r.returncode == 0:
        want = json.load(open(path[:-6] + ".json"))
        got = np.load(out)
        check(list(got.shape) == want["shape"], "sparse file: shape %r" % (got.shape,))
        check(np.array_equal(got.ravel(order="C"),
                             np.array(want["dense_row_major_values"], dtype=got.dtype)),
              "sparse file: densified values")

checks.finish("arrow-cpp tensors")
EOF
