#!/usr/bin/env bash
# NumPy <-> quiver: NumPy writes .npy files (every dtype, C and Fortran
# order, little and big endian, special values), `quiver tensor from-npy`
# turns them into Arrow tensors, `quiver tensor to-npy` back, and NumPy
# checks the result bit for bit, plus dtype, shape and order. Also compares
# `quiver cat` with NumPy's str() and checks CLI errors.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_python numpy
qv_tmpdir
exec "$py" - "$cli" "$tmp" <<'EOF'
import os
import subprocess
import sys

import numpy as np
from checks import Checks

cli, tmp = sys.argv[1], sys.argv[2]
checks = Checks(cli)
check, run = checks.check, checks.run
rng = np.random.default_rng(20240607)




def sample(code, shape):
    """Random values with the type's extremes (and NaN/inf/-0 for floats)."""
    dt = np.dtype(code)
    n = int(np.prod(shape))
    if dt.kind == "f":
        a = (rng.standard_normal(n) * 1000).astype(dt)
        fi = np.finfo(dt)
        special = [np.nan, np.inf, -np.inf, -0.0, 0.0, fi.max, fi.min, fi.tiny,
                   fi.smallest_subnormal, -fi.smallest_subnormal]
        a[: len(special)] = np.array(special, dtype=dt)
        # a NaN with a payload and the sign bit set survives only bit copies
        u = np.dtype("u%d" % dt.itemsize)
        bits = a.view(u)
        bits[len(special)] = bits[0] | u.type(1 << (8 * dt.itemsize - 1)) | u.type(1)
    else:
        ii = np.iinfo(dt)
        a = rng.integers(ii.min, ii.max, size=n, dtype=dt, endpoint=True)
        a[:3] = [ii.min, ii.max, 0]
        if ii.min < 0:
            a[3] = -1
    return a.reshape(shape)


def same_bits(a, b):
    u = np.dtype("u%d" % a.dtype.itemsize)
    return np.array_equal(np.ascontiguousarray(a).view(u), np.ascontiguousarray(b).view(u))


codes = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]
for code in codes:
    for order in "CF":
        for endian in "<>":
            name = "%s%s_%s" % (endian.replace("<", "le").replace(">", "be"), code, order)
            base = sample(code, (3, 4, 5))
            a = np.asarray(base, dtype=np.dtype(endian + code), order=order)
            src = os.path.join(tmp, name + ".npy")
            mid = os.path.join(tmp, name + ".arrow")
            dst = os.path.join(tmp, name + ".out.npy")
            np.save(src, a)
            r = run("tensor", "from-npy", src, mid)
            check(r.returncode == 0, "%s: from-npy exit %d %s" % (name, r.returncode, r.stderr))
            r = run("tensor", "to-npy", mid, dst)
            check(r.returncode == 0, "%s: to-npy exit %d %s" % (name, r.returncode, r.stderr))
            if r.returncode != 0:
                continue
            b = np.load(dst)
            native = a.dtype.newbyteorder("=")
            check(b.dtype == native, "%s: dtype %s, expected %s" % (name, b.dtype, native))
            check(b.shape == a.shape, "%s: shape %s" % (name, b.shape))
            if order == "F":
                check(b.flags.f_contiguous and not b.flags.c_contiguous, "%s: not Fortran order" % name)
            else:
                check(b.flags.c_contiguous, "%s: not C order" % name)
            check(same_bits(a.astype(native), b), "%s: values differ" % name)
            # the Arrow file: body 64-aligned, i.e. the file is a multiple of 64
            check(os.path.getsize(mid) % 64 == 0, "%s: arrow file size not a multiple of 64" % name)

# shapes: 0-d, 1-d, empty, single element, many dims
for shape in [(), (7,), (0,), (3, 0), (1, 1, 1), (2, 1, 2, 1, 2, 1, 2)]:
    for order in "CF":
        name = "shape%s_%s" % ("x".join(map(str, shape)) or "scalar", order)
        a = np.asarray(sample("f8", shape) if np.prod(shape) >= 11 else
                       rng.standard_normal(shape), order=order)
        src, mid, dst = (os.path.join(tmp, name + s) for s in (".npy", ".arrow", ".out.npy"))
        np.save(src, a)
        r1 = run("tensor", "from-npy", src, mid)
        r2 = run("tensor", "to-npy", mid, dst)
        check(r1.returncode == 0 and r2.returncode == 0, "%s: exit %d/%d %s%s" % (
            name, r1.returncode, r2.returncode, r1.stderr, r2.stderr))
        if r2.returncode == 0:
            b = np.load(dst)
            check(b.shape == a.shape and same_bits(a, b), "%s: round trip differs" % name)

# several tensors in one file; --index; pipes
parts = []
arrays = [np.arange(6, dtype="<i4").reshape(2, 3), np.asfortranarray(np.eye(3)),
          np.array([1.5, -2.5], dtype="<f4")]
for i, a in enumerate(arrays):
    p = os.path.join(tmp, "multi%d" % i)
    np.save(p + ".npy", a)
    check(run("tensor", "from-npy", p + ".npy", p + ".arrow").returncode == 0, "multi%d from-npy" % i)
    with open(p + ".arrow", "rb") as f:
        parts.append(f.read())
multi = os.path.join(tmp, "multi.arrow")
with open(multi, "wb") as f:
    f.write(b"".join(parts))
for i, a in enumerate(arrays):
    out = os.path.join(tmp, "multi_out%d.npy" % i)
    r = run("tensor", "to-npy", multi, out, "--index", str(i))
    check(r.returncode == 0, "--index %d: exit %d %s" % (i, r.returncode, r.stderr))
    if r.returncode == 0:
        b = np.load(out)
        check(b.dtype == a.dtype and np.array_equal(a, b), "--index %d: wrong tensor" % i)
r = run("tensor", "to-npy", multi, os.path.join(tmp, "x.npy"), "--index", "3")
check(r.returncode == 1 and b"holds 3 messages" in r.stderr, "--index 3: %r" % r.stderr)
r = run("tensor", "to-npy", "-", "-", "--index", "1", stdin=b"".join(parts))
check(r.returncode == 0, "stdin to stdout: exit %d" % r.returncode)
if r.returncode == 0:
    import io
    check(np.array_equal(np.load(io.BytesIO(r.stdout)), arrays[1]), "stdin to stdout: values")
with open(os.path.join(tmp, "multi0.npy"), "rb") as f:
    r = run("tensor", "from-npy", "-", "-", stdin=f.read())
check(r.returncode == 0 and r.stdout == parts[0], "from-npy stdin to stdout")

# output over the input (a mapped view of it): replaced, never truncated in place
same = os.path.join(tmp, "same")
np.save(same, arrays[1])
r1 = run("tensor", "from-npy", same + ".npy", same + ".npy")
r2 = run("tensor", "to-npy", same + ".npy", same + ".npy")
check(r1.returncode == 0 and r2.returncode == 0, "output over input: exit %d/%d %r%r" % (
    r1.returncode, r2.returncode, r1.stderr, r2.stderr))
if r2.returncode == 0:
    check(np.array_equal(np.load(same + ".npy"), arrays[1]), "output over input: values")
check(not [f for f in os.listdir(tmp) if ".tmp" in f], "temporary files left behind")
r = run("tensor", "from-npy", same + ".npy", "/dev/null")
check(r.returncode == 0, "output to /dev/null: %r" % r.stderr)
r = run("tensor", "from-npy", same + ".npy", os.path.join(tmp, "no", "such", "dir.arrow"))
check(r.returncode == 1 and b"dir.arrow" in r.stderr, "unwritable output: %r" % r.stderr)

# valid .npy files of dtypes quiver does not read: exit 3 (not supported)
# with a message naming the dtype
bad = {
    "unicode.npy": (np.array(["abc", "de"]), b"unsupported dtype '<U3'"),
    "bool.npy": (np.array([True, False]), b"unsupported dtype '|b1'"),
    "complex.npy": (np.array([1 + 2j]), b"unsupported dtype '<c16'"),
    "object.npy": (np.array([None, 1], dtype=object), b"unsupported dtype '|O'"),
}
for name, (a, msg) in bad.items():
    p = os.path.join(tmp, name)
    np.save(p, a, allow_pickle=True)
    r = run("tensor", "from-npy", p, os.path.join(tmp, "bad.arrow"))
    check(r.returncode == 3 and msg in r.stderr and b"not supported" in r.stderr,
          "%s: exit %d %r" % (name, r.returncode, r.stderr))
    check(not os.path.exists(os.path.join(tmp, "bad.arrow")), "%s: output left behind" % name)
good = os.path.join(tmp, "le" + "f8_C.npy")
with open(good, "rb") as f:
    data = f.read()
# exit 1 invalid, 3 valid but not supported (a format version NumPy may add)
for name, blob, msg, code in [("truncated.npy", data[:-8], b"data holds", 1),
                              ("magic.npy", b"\x93NUMPZ" + data[6:], b"bad magic", 1),
                              ("version.npy", data[:6] + b"\x09\x00" + data[8:], b"version 9.0", 3),
                              ("empty.npy", b"", b"empty", 1)]:
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(blob)
    r = run("tensor", "from-npy", p, os.path.join(tmp, "bad.arrow"))
    check(r.returncode == code and msg in r.stderr, "%s: exit %d %r" % (name, r.returncode, r.stderr))
r = run("tensor", "to-npy", good, os.path.join(tmp, "x.npy"))  # a .npy is not Arrow
check(r.returncode == 1 and r.stderr.startswith(b"quiver tensor to-npy: "), "npy as arrow: %r" % r.stderr)
r = run("tensor", "to-npy", os.path.join(tmp, "missing.arrow"), os.path.join(tmp, "x.npy"))
check(r.returncode == 1 and b"missing.arrow" in r.stderr, "missing input: %r" % r.stderr)
check(run("tensor", "frobnicate", "a", "b").returncode == 2, "unknown subcommand: usage error")
check(run("tensor", "to-npy", "a").returncode == 2, "missing argument: usage error")
check(run("tensor", "to-npy", "a", "b", "--index", "-1").returncode == 2, "negative index: usage error")

# quiver cat vs NumPy's str()
cases = [
    np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 12,
    np.array([0.1, 2.5, -3.0]),
    np.array([1.0, 2.0]),
    np.array([1e10, 1.0]),
    np.array([1e-5, 1.0]),
    np.array([np.nan, -np.inf, 1.5]),
    np.array([np.nan, np.inf]),
    np.arange(3000, dtype=np.int64).reshape(50, 60),
    np.arange(2000.0),
    np.arange(30.0) * 1.1,
    np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
    np.float16([0.1, 65504, -0.0]),
    np.float16([0.5, 0.25, 3.0]),
    np.array([2**64 - 1, 0, 2**63], dtype=np.uint64),
    np.array([-(2**63), 2**63 - 1], dtype=np.int64),
    np.arange(1200, dtype=np.uint16).reshape(2, 600),
    np.arange(8 * 8 * 20, dtype=np.int16).reshape(8, 8, 20),
    np.asfortranarray(np.arange(12.0).reshape(3, 4) / 7),
    np.zeros((3, 0)),
    np.array([[1e-300, 1e300], [0.0, -1.0]]),
]
for i, a in enumerate(cases):
    p = os.path.join(tmp, "cat%d" % i)
    np.save(p + ".npy", a)
    run("tensor", "from-npy", p + ".npy", p + ".arrow")
    r = run("cat", p + ".arrow")
    lines = r.stdout.decode().split("\n", 1)
    check(r.returncode == 0 and lines[0].startswith("message 0: Tensor "), "cat %d: header %r" % (i, lines[0]))
    got = lines[1].rstrip("\n") if len(lines) > 1 else ""
    check(got == str(a), "cat %d: quiver printed\n%s\nNumPy prints\n%s" % (i, got, str(a)))

r = run("cat", multi)
check(r.returncode == 0 and r.stdout.count(b"message ") == 3, "cat of a multi-tensor file")
r = run("cat", os.path.join(tmp, "truncated.npy"))
check(r.returncode == 1 and r.stderr.startswith(b"quiver cat: "), "cat of a non-Arrow file: %r" % r.stderr)

checks.finish("numpy interop")
EOF
