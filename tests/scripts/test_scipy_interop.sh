#!/usr/bin/env bash
# SciPy interop: SciPy builds CSR/CSC/COO matrices of many value and index
# dtypes and save_npz writes them (deflated and stored); `quiver tensor
# from-npz` turns them into Arrow SparseTensors and `quiver tensor to-npz`
# back; the members must be identical (dtype and values) and load_npz must
# give equal matrices. quiver's CSR/CSC/COO of a dense .npy (from-npy
# --sparse) must be exactly SciPy's csr_matrix/csc_matrix/coo_matrix of it.
# Hostile archives (corrupt, truncated, zip bombs, missing members) must
# fail cleanly.
set -uo pipefail
py=/usr/bin/python3
if ! "$py" -c 'import numpy, scipy.sparse' 2>/dev/null; then
  echo "python3 with numpy and scipy not available: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec "$py" - "$QV_CLI" "$tmp" <<'EOF'
import io
import os
import subprocess
import sys
import zipfile

import numpy as np
import scipy.sparse as sp

cli, tmp = sys.argv[1:3]
checks = 0
failures = []


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None):
    return subprocess.run([cli, *args], capture_output=True, input=stdin)


def p(name):
    return os.path.join(tmp, name)


def members(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def same_members(a, b):
    if sorted(a) != sorted(b):
        return "keys %s vs %s" % (sorted(a), sorted(b))
    for k in a:
        if a[k].dtype != b[k].dtype:
            return "%s: dtype %s vs %s" % (k, a[k].dtype, b[k].dtype)
        if a[k].shape != b[k].shape or not np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f"):
            return "%s: values differ" % k
    return None


def same_matrix(a, b):
    if a.format != b.format or a.shape != b.shape or a.dtype != b.dtype:
        return "format/shape/dtype %s %s %s vs %s %s %s" % (a.format, a.shape, a.dtype, b.format, b.shape, b.dtype)
    if a.format == "coo":
        pairs = [("row", a.row, b.row), ("col", a.col, b.col), ("data", a.data, b.data)]
    else:
        pairs = [("indptr", a.indptr, b.indptr), ("indices", a.indices, b.indices), ("data", a.data, b.data)]
    for name, x, y in pairs:
        if x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return "%s differs (%s vs %s)" % (name, x.dtype, y.dtype)
    return None


rng = np.random.default_rng(20260)


def random_matrix(fmt, dtype, shape, density):
    m = sp.random(*shape, density=density, format="coo", random_state=rng,
                  data_rvs=lambda n: rng.integers(1, 100, n))
    m = m.astype(dtype)
    if np.dtype(dtype).kind in "iu" and np.dtype(dtype).kind == "i":
        m.data[::3] *= -1
    return m.asformat(fmt)


# ---- SciPy -> quiver -> SciPy, for each format, dtype, index dtype, compression
dtypes = ["float64", "float32", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
n = 0
for fmt in ("csr", "csc", "coo"):
    for dtype in dtypes:
        for idx in ("int32", "int64"):
            for compressed in (True, False):
                n += 1
                m = random_matrix(fmt, dtype, (7 + n % 5, 9 + n % 3), 0.3)
                if fmt == "coo":
                    m.row = m.row.astype(idx)
                    m.col = m.col.astype(idx)
                else:
                    m.indices = m.indices.astype(idx)
                    m.indptr = m.indptr.astype(idx)
                name = "%s_%s_%s_%d" % (fmt, dtype, idx, compressed)
                src, mid, dst = p(name + ".npz"), p(name + ".arrow"), p(name + "_rt.npz")
                sp.save_npz(src, m, compressed=compressed)
                r1 = run("tensor", "from-npz", src, mid)
                check(r1.returncode == 0, "%s: from-npz %r" % (name, r1.stderr))
                r2 = run("tensor", "to-npz", mid, dst)
                check(r2.returncode == 0, "%s: to-npz %r" % (name, r2.stderr))
                if r1.returncode or r2.returncode:
                    continue
                diff = same_members(members(src), members(dst))
                check(diff is None, "%s: members: %s" % (name, diff))
                diff = same_matrix(sp.load_npz(src), sp.load_npz(dst))
                check(diff is None, "%s: load_npz: %s" % (name, diff))
                with zipfile.ZipFile(dst) as z:
                    methods = {i.compress_type for i in z.infolist()}
                check(methods == {zipfile.ZIP_DEFLATED}, "%s: to-npz compression %s" % (name, methods))
                # the Arrow tensor densifies to SciPy's toarray()
                r = run("tensor", "to-npy", mid, p(name + ".npy"))
                check(r.returncode == 0, "%s: to-npy %r" % (name, r.stderr))
                if r.returncode == 0:
                    d = np.load(p(name + ".npy"))
                    check(d.dtype == m.dtype and np.array_equal(d, m.toarray()), "%s: dense values" % name)

# stored on request; stdin/stdout pipes
m = random_matrix("csr", "float64", (5, 6), 0.4)
sp.save_npz(p("pipe.npz"), m)
r = run("tensor", "from-npz", "-", "-", stdin=open(p("pipe.npz"), "rb").read())
check(r.returncode == 0, "from-npz via pipes %r" % r.stderr)
r2 = run("tensor", "to-npz", "-", "-", "--stored", stdin=r.stdout)
check(r2.returncode == 0, "to-npz via pipes %r" % r2.stderr)
if r2.returncode == 0:
    with zipfile.ZipFile(io.BytesIO(r2.stdout)) as z:
        check({i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}, "--stored: stored members")
    back = sp.load_npz(io.BytesIO(r2.stdout))
    check(same_matrix(m, back) is None, "pipes: matrix differs")

# zip structures other writers make: data descriptors (zipfile on an
# unseekable stream sets flag bit 3 and writes sizes after the data) and a
# zip64 end of central directory (more than 65535 entries); --threads and
# --verify-crc give the same tensor, to-npz the same bytes for any --threads
class Unseekable(io.RawIOBase):
    def __init__(self):
        self.buf = io.BytesIO()

    def writable(self):
        return True

    def write(self, b):
        return self.buf.write(b)


m = random_matrix("csr", "float64", (40, 30), 0.2)
for compress in (np.savez, np.savez_compressed):
    u = Unseekable()
    compress(u, indices=m.indices, indptr=m.indptr, format=np.array(b"csr"), shape=np.array(m.shape),
             data=m.data)
    with zipfile.ZipFile(io.BytesIO(u.buf.getvalue())) as z:
        check(all(i.flag_bits & 8 for i in z.infolist()), "unseekable: data descriptors written")
    open(p("desc.npz"), "wb").write(u.buf.getvalue())
    arrows = []
    for extra in ((), ("--threads", "1"), ("--threads", "2", "--verify-crc")):
        out = p("desc%d.arrow" % len(arrows))
        r = run("tensor", "from-npz", p("desc.npz"), out, *extra)
        check(r.returncode == 0, "data descriptors %s: %r" % (extra, r.stderr))
        arrows.append(open(out, "rb").read() if r.returncode == 0 else None)
    check(arrows[0] is not None and arrows.count(arrows[0]) == 3, "data descriptors: same Arrow output")
    outs = []
    for t in ("1", "2", "4"):
        r = run("tensor", "to-npz", p("desc0.arrow"), p("t%s.npz" % t), "--threads", t)
        check(r.returncode == 0, "to-npz --threads %s: %r" % (t, r.stderr))
        outs.append(open(p("t%s.npz" % t), "rb").read())
    check(outs.count(outs[0]) == 3, "to-npz: bytes independent of --threads")
    check(same_matrix(m, sp.load_npz(p("t2.npz"))) is None, "to-npz --threads 2: load_npz")
with zipfile.ZipFile(p("zip64.npz"), "w") as z:
    for k, v in (("indices", m.indices), ("indptr", m.indptr), ("format", np.array(b"csr")),
                 ("shape", np.array(m.shape)), ("data", m.data)):
        b = io.BytesIO()
        np.save(b, v)
        z.writestr(k + ".npy", b.getvalue())
    for k in range(65536):
        z.writestr("x%d" % k, b"")
with open(p("zip64.npz"), "rb") as f:
    check(b"PK\x06\x06" in f.read(), "zip64 end record written")
r = run("tensor", "from-npz", p("zip64.npz"), p("zip64.arrow"))
check(r.returncode == 0, "zip64 end record: %r" % r.stderr)
r = run("tensor", "to-npz", p("zip64.arrow"), p("zip64_rt.npz"))
check(r.returncode == 0 and same_matrix(m, sp.load_npz(p("zip64_rt.npz"))) is None, "zip64: round trip")
r = run("tensor", "to-npy", p("desc0.arrow"), p("x.npy"), "--threads", "2")
check(r.returncode == 2, "--threads on to-npy: usage error")

# index dtypes SciPy itself does not write (np.savez by hand): kept both ways
for idx in ("int8", "uint8", "int16", "uint16", "uint32", "uint64"):
    m = random_matrix("csr", "float32", (6, 7), 0.4)
    src = p("raw_%s.npz" % idx)
    np.savez_compressed(src, indices=m.indices.astype(idx), indptr=m.indptr.astype(idx),
                        format=np.array(b"csr"), shape=np.array(m.shape), data=m.data)
    r1 = run("tensor", "from-npz", src, p("raw.arrow"))
    r2 = run("tensor", "to-npz", p("raw.arrow"), p("raw_rt.npz"))
    check(r1.returncode == 0 and r2.returncode == 0, "raw %s: %r %r" % (idx, r1.stderr, r2.stderr))
    if r2.returncode == 0:
        diff = same_members(members(src), members(p("raw_rt.npz")))
        check(diff is None, "raw %s: %s" % (idx, diff))
        check((sp.load_npz(p("raw_rt.npz")) != m).nnz == 0, "raw %s: load_npz values" % idx)

# a unicode 'format' member (np.array('csr')) and big-endian data are read too
m = random_matrix("csc", "float64", (4, 5), 0.5)
src = p("unicode.npz")
np.savez(src, indices=m.indices, indptr=m.indptr, format=np.array("csc"),
         shape=np.array(m.shape), data=m.data.astype(">f8"))
r = run("tensor", "from-npz", src, p("unicode.arrow"))
check(r.returncode == 0, "unicode format / big-endian data: %r" % r.stderr)
if r.returncode == 0:
    r = run("tensor", "to-npy", p("unicode.arrow"), p("unicode.npy"))
    check(r.returncode == 0 and np.array_equal(np.load(p("unicode.npy")), m.toarray()), "unicode: values")

# float16 values: read (np.savez) and written as SciPy's save_npz writes a
# matrix whose data is float16 (load_npz reads it back as float16)
m = random_matrix("coo", "float32", (4, 5), 0.5)
np.savez(p("f16.npz"), row=m.row, col=m.col, format=np.array(b"coo"), shape=np.array(m.shape),
         data=m.data.astype("float16"))
r = run("tensor", "from-npz", p("f16.npz"), p("f16.arrow"))
check(r.returncode == 0, "float16 from-npz: %r" % r.stderr)
r = run("tensor", "to-npz", p("f16.arrow"), p("f16_rt.npz"))
check(r.returncode == 0, "float16 to-npz: %r" % r.stderr)
if r.returncode == 0:
    back = sp.load_npz(p("f16_rt.npz"))
    # (scipy.sparse computes nothing in float16: compare in float32)
    want = sp.coo_matrix((m.data.astype("float16").astype("float32"), (m.row, m.col)), shape=m.shape)
    check(back.dtype == np.float16 and np.array_equal(back.astype("float32").toarray(), want.toarray()),
          "float16 to-npz: load_npz gives the float16 values back")
    check(np.load(p("f16_rt.npz"))["data"].dtype == np.float16, "float16 to-npz: data.npy is <f2")

# ---- quiver's sparse form of a dense .npy is exactly SciPy's
for dtype in ("float64", "float32", "int32", "uint8", "int64"):
    for shape in ((6, 4), (1, 9), (9, 1), (5, 0), (30, 17)):
        d = rng.integers(-3, 4, size=shape)
        d[np.abs(d) < 2] = 0
        d = (np.abs(d) if dtype[0] == "u" else d).astype(dtype)
        if dtype.startswith("float") and d.size > 3:
            d.flat[1] = -0.0  # a zero, as in SciPy
            d.flat[2] = np.nan  # not a zero
        np.save(p("dense.npy"), d)
        for fmt, ctor in (("csr", sp.csr_matrix), ("csc", sp.csc_matrix), ("coo", sp.coo_matrix)):
            name = "%s %s %s" % (dtype, shape, fmt)
            r1 = run("tensor", "from-npy", p("dense.npy"), p("q.arrow"), "--sparse=" + fmt, "--index-type=int32")
            r2 = run("tensor", "to-npz", p("q.arrow"), p("q.npz"))
            check(r1.returncode == 0 and r2.returncode == 0, "%s: %r %r" % (name, r1.stderr, r2.stderr))
            if r2.returncode:
                continue
            want = ctor(d)
            if fmt == "coo":
                want.row = want.row.astype("int32")
                want.col = want.col.astype("int32")
            else:
                want.indices = want.indices.astype("int32")
                want.indptr = want.indptr.astype("int32")
            got = members(p("q.npz"))
            ref = {"format": np.array(fmt.encode()), "shape": np.array(d.shape), "data": want.data}
            if fmt == "coo":
                ref.update(row=want.row, col=want.col)
            else:
                ref.update(indices=want.indices, indptr=want.indptr)
            diff = same_members(ref, got)
            check(diff is None, "%s: differs from SciPy: %s" % (name, diff))
# the default index type is int64
np.save(p("dense.npy"), np.eye(3))
r = run("tensor", "from-npy", p("dense.npy"), p("q.arrow"), "--sparse=csr")
r2 = run("tensor", "to-npz", p("q.arrow"), p("q.npz"))
check(r2.returncode == 0 and members(p("q.npz"))["indices"].dtype == np.int64, "default index int64")

# ---- errors: exit 1, a message, no output left behind
bad_out = p("bad_out.arrow")
def expect_fail(args, needle, what, stdin=None, code=1):
    r = run(*args, stdin=stdin)
    err = r.stderr.decode(errors="replace")
    check(r.returncode == code and err.startswith("quiver tensor ") and needle in err,
          "%s: exit %d %r" % (what, r.returncode, err))
    check(not os.path.exists(bad_out), "%s: output left behind" % what)

sp.save_npz(p("bsr.npz"), sp.random(4, 6, 0.5, format="bsr", random_state=rng))
# valid SciPy output quiver does not read: exit 3, not supported
expect_fail(("tensor", "from-npz", p("bsr.npz"), bad_out), "'bsr' is not supported", "bsr", code=3)
sp.save_npz(p("good.npz"), random_matrix("csr", "float64", (50, 40), 0.3))
good = open(p("good.npz"), "rb").read()
open(p("trunc.npz"), "wb").write(good[:-30])
expect_fail(("tensor", "from-npz", p("trunc.npz"), bad_out), "npz", "truncated archive")
# flip a byte inside data.npy's deflate stream
with zipfile.ZipFile(p("good.npz")) as z:
    info = z.getinfo("data.npy")
off = info.header_offset + 30 + len(info.filename) + len(info.extra) + 20
corrupt = bytearray(good)
corrupt[off] ^= 0x55
open(p("corrupt.npz"), "wb").write(bytes(corrupt))
expect_fail(("tensor", "from-npz", p("corrupt.npz"), bad_out), "data.npy", "corrupt member")
expect_fail(("tensor", "from-npz", p("dense.npy"), bad_out), "not a valid zip archive", "not a zip")
# a missing member; a member as a 2-D array; indices shorter than indptr says
m = random_matrix("csr", "float64", (5, 6), 0.5)
np.savez(p("missing.npz"), indptr=m.indptr, format=np.array(b"csr"), shape=np.array(m.shape), data=m.data)
expect_fail(("tensor", "from-npz", p("missing.npz"), bad_out), "indices.npy is missing", "missing member")
np.savez(p("short.npz"), indices=m.indices[:-1], indptr=m.indptr, format=np.array(b"csr"),
         shape=np.array(m.shape), data=m.data)
expect_fail(("tensor", "from-npz", p("short.npz"), bad_out), "indices.npy", "short indices")
bad_ptr = m.indptr.copy()
bad_ptr[2], bad_ptr[3] = bad_ptr[3] + 1, bad_ptr[2]
np.savez(p("decreasing.npz"), indices=m.indices, indptr=bad_ptr, format=np.array(b"csr"),
         shape=np.array(m.shape), data=m.data)
expect_fail(("tensor", "from-npz", p("decreasing.npz"), bad_out), "decreasing at position", "bad indptr")
# zip bomb: shape says 2x2 with 1 entry, data.npy inflates to 64 MiB
bomb = io.BytesIO()
with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
    def add(name, arr):
        b = io.BytesIO()
        np.save(b, arr)
        z.writestr(name, b.getvalue())
    add("indices.npy", np.array([0], dtype="int32"))
    add("indptr.npy", np.array([0, 1, 1], dtype="int32"))
    add("format.npy", np.array(b"csr"))
    add("shape.npy", np.array([2, 2]))
    add("data.npy", np.zeros(8 << 20))
check(len(bomb.getvalue()) < 200000, "bomb is small (%d bytes)" % len(bomb.getvalue()))
open(p("bomb.npz"), "wb").write(bomb.getvalue())
expect_fail(("tensor", "from-npz", p("bomb.npz"), bad_out), "more than the", "zip bomb")
# to-npz refuses dense and CSF tensors, suggesting the conversion
np.save(p("d3.npy"), np.arange(24.0).reshape(2, 3, 4))
run("tensor", "from-npy", p("d3.npy"), p("d3.arrow"))
expect_fail(("tensor", "to-npz", p("d3.arrow"), bad_out), "quiver convert", "dense to-npz")
run("tensor", "from-npy", p("d3.npy"), p("csf.arrow"), "--sparse=csf")
expect_fail(("tensor", "to-npz", p("csf.arrow"), bad_out), "quiver convert", "CSF to-npz")

# ---- quiver convert and the sparse options of from-npy
d = np.zeros((4, 5, 6), dtype="int32")
d[0, 1, 2], d[3, 4, 5], d[2, 0, 1], d[2, 0, 4] = 7, -1, 3, 9
np.save(p("c3.npy"), d)
src = p("c3.arrow")
check(run("tensor", "from-npy", p("c3.npy"), src).returncode == 0, "c3: from-npy")
for to in ("coo", "csf", "dense"):
    out = p("c3_%s.arrow" % to)
    r = run("convert", src, out, "--to=" + to)
    check(r.returncode == 0, "convert --to=%s %r" % (to, r.stderr))
    r = run("tensor", "to-npy", out, p("c3_back.npy"))
    check(r.returncode == 0 and np.array_equal(np.load(p("c3_back.npy")), d), "convert --to=%s values" % to)
# CSF axis order and index type show in cat's header; bytes lengths read back
r = run("tensor", "from-npy", p("c3.npy"), p("c3_csf.arrow"), "--sparse", "csf", "--axis-order", "2,0,1",
        "--index-type", "uint16", "--csf-lengths=bytes")
check(r.returncode == 0, "from-npy csf options %r" % r.stderr)
r = run("cat", p("c3_csf.arrow"))
check(b"CSF int32 shape=[4, 5, 6] nnz=4 index=uint16 indptr=uint16 axis_order=[2, 0, 1]" in r.stdout,
      "cat csf header %r" % r.stdout[:200])
# in place: the output replaces the input it was read from
r = run("convert", p("c3_csf.arrow"), p("c3_csf.arrow"), "--to=coo", "--index-type=int8")
check(r.returncode == 0, "convert in place %r" % r.stderr)
r = run("cat", p("c3_csf.arrow"))
check(b"SparseTensor COO int32 shape=[4, 5, 6] nnz=4 index=int8" in r.stdout, "in place result %r" % r.stdout[:100])
# pipes and --index
both = open(src, "rb").read() + open(p("c3_coo.arrow"), "rb").read()
r = run("convert", "-", "-", "--to=csf", "--index", "1", stdin=both)
check(r.returncode == 0 and r.stdout[:4] == b"\xff\xff\xff\xff", "convert via pipes %r" % r.stderr)
r2 = run("tensor", "to-npy", "-", p("c3_pipe.npy"), stdin=r.stdout)
check(r2.returncode == 0 and np.array_equal(np.load(p("c3_pipe.npy")), d), "convert via pipes: values")
r = run("convert", "-", p("x.arrow"), "--to=csf", "--index", "2", stdin=both)
check(r.returncode == 1 and b"no message 2: input holds 2 messages" in r.stderr, "--index past the end %r" % r.stderr)
# a value that does not fit the index type is named
r = run("convert", src, p("c3_int8.arrow"), "--to=coo", "--index-type=int8")
check(r.returncode == 0, "int8 fits a 4x5x6 tensor %r" % r.stderr)
big = np.zeros((300, 2))
big[299, 1] = 1
np.save(p("big.npy"), big)
r = run("tensor", "from-npy", p("big.npy"), p("x.arrow"), "--sparse=coo", "--index-type=int8")
check(r.returncode == 1 and b"int8" in r.stderr and not os.path.exists(p("x.arrow")), "int8 overflow %r" % r.stderr)
r = run("convert", src, p("x.arrow"), "--to=csr")
check(r.returncode == 1 and b"2-D" in r.stderr, "CSR of a 3-D tensor %r" % r.stderr)
r = run("convert", src, p("x.arrow"), "--to=csf", "--axis-order=0,1")
check(r.returncode == 1 and b"--axis-order lists 2 axes" in r.stderr, "short axis order %r" % r.stderr)
r = run("convert", src, p("x.arrow"), "--to=csf", "--axis-order=0,1,1")
check(r.returncode == 1 and b"permutation" in r.stderr, "axis order not a permutation %r" % r.stderr)
# usage errors: exit 2
for args in (("convert", src, p("x.arrow")),
             ("convert", src, p("x.arrow"), "--to=bsr"),
             ("convert", src, p("x.arrow"), "--to=csr", "--csf-lengths=bytes"),
             ("convert", src, p("x.arrow"), "--to=dense", "--index-type=int32"),
             ("convert", src, p("x.arrow"), "--to=csf", "--index-type=float32"),
             ("convert", src, p("x.arrow"), "--to=csf", "--axis-order=a,b"),
             ("convert", src, p("x.arrow"), "--to=csf", "--csf-lengths=words"),
             ("tensor", "from-npy", p("c3.npy"), p("x.arrow"), "--index-type=int32"),
             ("tensor", "from-npy", p("c3.npy"), p("x.arrow"), "--sparse=dia"),
             ("tensor", "to-npy", src, p("x.npy"), "--sparse=coo"),
             ("tensor", "from-npz", p("good.npz"), p("x.arrow"), "--index", "0"),
             ("tensor", "to-npy", src, p("x.npy"), "--stored")):
    r = run(*args)
    check(r.returncode == 2 and not os.path.exists(p("x.arrow")), "usage %s: exit %d" % (args[3:], r.returncode))

print("%d checks, %d failures" % (checks, len(failures)))
# a run that checked nothing (no files found) proves nothing
sys.exit(1 if failures or checks == 0 else 0)
EOF
