"""quiver.table_to_tensor: tables (written by quiver's integration JSON reader
and by the apache-arrow npm package) as 2-D ndarrays with Arrow C++'s
ToTensor rules for types, nulls and errors."""
import base64
import gc
import json
import os
import shutil
import subprocess
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import quiver


def _int(bits, signed):
    return {"name": "int", "bitWidth": bits, "isSigned": signed}


TYPES = {"i8": _int(8, True), "i16": _int(16, True), "i32": _int(32, True),
         "i64": _int(64, True), "u16": _int(16, False), "u64": _int(64, False),
         "f16": {"name": "floatingpoint", "precision": "HALF"},
         "f32": {"name": "floatingpoint", "precision": "SINGLE"},
         "f64": {"name": "floatingpoint", "precision": "DOUBLE"},
         "utf8": {"name": "utf8"}, "bool": {"name": "bool"}}


def write_table(cli, path, cols, batches):
    """cols: [(name, type key)]; batches: [[values (None = null) per column]]."""
    fields = [{"name": n, "nullable": True, "type": TYPES[t], "children": []} for n, t in cols]
    out = []
    for b in batches:
        count = len(b[0])
        columns = []
        for (n, t), vals in zip(cols, b):
            col = {"name": n, "count": count, "VALIDITY": [0 if v is None else 1 for v in vals]}
            if t == "utf8":
                s = ["" if v is None else str(v) for v in vals]
                offs = [0]
                for x in s:
                    offs.append(offs[-1] + len(x))
                col["OFFSET"], col["DATA"] = offs, s
            elif t in ("i64", "u64"):
                col["DATA"] = ["0" if v is None else str(v) for v in vals]
            elif t == "bool":
                col["DATA"] = [bool(v) for v in vals]
            else:
                col["DATA"] = [0 if v is None else v for v in vals]
            columns.append(col)
        out.append({"count": count, "columns": columns})
    with open(f"{path}.json", "w") as f:
        json.dump({"schema": {"fields": fields}, "batches": out}, f)
    subprocess.run([cli, "integration", "--mode=json-to-arrow", f"--json={path}.json",
                    f"--arrow={path}"], check=True, capture_output=True)
    return str(path)


@pytest.fixture
def mixed(tmp_path, cli):
    return write_table(cli, tmp_path / "t.arrow", [("a", "u16"), ("b", "i16"), ("c", "f32")],
                       [[[1, 2], [10, 20], [0.5, 1.5]], [[3], [30], [2.5]]])


WANT = np.array([[1, 10, 0.5], [2, 20, 1.5], [3, 30, 2.5]])


def test_types_layouts_and_sources(mixed):
    a = quiver.table_to_tensor(mixed)
    assert a.dtype == np.float64 and a.shape == (3, 3) and a.flags.c_contiguous
    assert np.array_equal(a, WANT)
    f = quiver.table_to_tensor(mixed, row_major=False)
    assert f.flags.f_contiguous and not f.flags.c_contiguous and np.array_equal(f, WANT)
    # uint16 + int16 = int32, columns in the order given
    b = quiver.table_to_tensor(mixed, columns=["b", "a"])
    assert b.dtype == np.int32 and np.array_equal(b, [[10, 1], [20, 2], [30, 3]])
    assert quiver.table_to_tensor(mixed, columns=("a",)).dtype == np.uint16
    # bytes, a file object, a memoryview, a quiver reader, a stream capsule
    data = open(mixed, "rb").read()
    for src in (data, memoryview(data), open(mixed, "rb"), quiver.read_file(mixed),
                quiver.read_stream(data), quiver.read_stream(mixed).__arrow_c_stream__()):
        assert np.array_equal(quiver.table_to_tensor(src), WANT)
    # the result owns its memory: writable, outlives the source
    a[0, 0] = 42
    del data
    gc.collect()
    assert a[0, 0] == 42 and a.base is not None


def test_nulls(tmp_path, cli):
    p = write_table(cli, tmp_path / "n.arrow", [("x", "i32"), ("y", "f32")],
                    [[[1, None, 3], [4.0, 5.0, None]]])
    with pytest.raises(quiver.InvalidError, match=r"column 'x' has a null at row 1.*null_to_nan"):
        quiver.table_to_tensor(p)
    a = quiver.table_to_tensor(p, null_to_nan=True)
    assert a.dtype == np.float64
    assert np.array_equal(a, [[1, 4], [np.nan, 5], [3, np.nan]], equal_nan=True)  # type: ignore[arg-type]
    # integers become floats with null_to_nan: int8 -> float32, int32 -> float64
    q = write_table(cli, tmp_path / "i.arrow", [("s", "i8"), ("t", "i32")], [[[1, None], [2, 3]]])
    assert quiver.table_to_tensor(q, columns=["s"], null_to_nan=True).dtype == np.float32
    assert quiver.table_to_tensor(q, columns=["t"], null_to_nan=True).dtype == np.float64
    assert quiver.table_to_tensor(q, columns=["t"]).dtype == np.int32


def test_errors(tmp_path, cli, mixed):
    s = write_table(cli, tmp_path / "s.arrow", [("n", "i32"), ("name", "utf8"), ("ok", "bool")],
                    [[[1], ["a"], [True]]])
    with pytest.raises(quiver.InvalidError, match="column 'name': DataType is not supported: string"):
        quiver.table_to_tensor(s)
    with pytest.raises(quiver.InvalidError, match="DataType is not supported: bool"):
        quiver.table_to_tensor(s, columns=["ok"])
    h = write_table(cli, tmp_path / "h.arrow", [("h", "f16"), ("f", "f64")], [[[1.0], [2.0]]])
    with pytest.raises(quiver.NotSupportedError, match="halffloat"):
        quiver.table_to_tensor(h)
    assert quiver.table_to_tensor(h, columns=["h"]).dtype == np.float16
    u = write_table(cli, tmp_path / "u.arrow", [("big", "u64"), ("neg", "i64")], [[[1], [-1]]])
    with pytest.raises(quiver.InvalidError, match="no common integer type"):
        quiver.table_to_tensor(u)
    with pytest.raises(quiver.InvalidError, match=r"no column named 'zz' \(columns: 'a', 'b', 'c'\)"):
        quiver.table_to_tensor(mixed, columns=["a", "zz"])
    with pytest.raises(quiver.InvalidError, match="without columns"):
        quiver.table_to_tensor(mixed, columns=[])
    with pytest.raises(TypeError, match="not a str"):
        quiver.table_to_tensor(mixed, columns="ab")
    with pytest.raises(TypeError, match=r"columns\[0\] must be a str"):
        quiver.table_to_tensor(mixed, columns=[1])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        quiver.table_to_tensor(b"not arrow at all")
    cap = quiver.read_stream(mixed).__arrow_c_stream__()
    quiver.table_to_tensor(cap)
    with pytest.raises(ValueError, match="already consumed"):
        quiver.table_to_tensor(cap)


def test_no_leak_over_10000_conversions(mixed):
    from test_tensor import assert_no_growth
    data = open(mixed, "rb").read()

    def cycle():
        for _ in range(500):
            a = quiver.table_to_tensor(data)
            b = quiver.table_to_tensor(mixed, row_major=False)
            float(a[-1, -1] + b[-1, -1])

    assert_no_growth(cycle, "10,000")


JS = """
import { tableFromArrays, tableToIPC } from 'apache-arrow';
const t = tableFromArrays({
  i: Int32Array.from([1, -2, 3, 4]),
  u: Uint8Array.from([5, 6, 7, 8]),
  d: Float64Array.from([0.25, 0.5, 0.75, 1.0]),
});
process.stdout.write(Buffer.from(tableToIPC(t, 'stream')).toString('base64'));
"""


def test_a_table_written_by_arrow_js(root):
    js = os.path.join(root, "tests", "interop", "js")
    if not shutil.which("node") or not os.path.isdir(os.path.join(js, "node_modules", "apache-arrow")):
        pytest.skip("node or the apache-arrow npm package (npm ci in tests/interop/js) is missing")
    r = subprocess.run(["node", "--input-type=module", "-e", JS], cwd=js, capture_output=True,
                       check=True)
    data = base64.b64decode(r.stdout)
    a = quiver.table_to_tensor(data)
    # int32 + uint8 = int32, then + float64 = float64
    assert a.dtype == np.float64
    assert np.array_equal(a, [[1, 5, 0.25], [-2, 6, 0.5], [3, 7, 0.75], [4, 8, 1.0]])
    b = quiver.table_to_tensor(data, columns=["u", "i"], row_major=False)
    assert b.dtype == np.int32 and b.flags.f_contiguous
    assert np.array_equal(b, [[5, 1], [6, -2], [7, 3], [8, 4]])


def test_threads_give_the_same_bytes(tmp_path, cli):
    """The default (every CPU), threads=2..4 (and the CLI's --threads) give
    the bytes one thread gives, for an output above the 4 MiB where the copy
    is split (the C suite's test_threads counts the split)."""
    n = 180000  # two batches, x 3 columns of float64: 4.3 MB
    rng = np.random.default_rng(7)
    cols = [rng.integers(-1000, 1000, n), rng.integers(-300, 300, n), rng.random(n)]
    valid = rng.random(n) > 0.01
    fields = [{"name": nm, "nullable": True, "type": TYPES[t], "children": []}
              for nm, t in (("a", "i32"), ("b", "i16"), ("c", "f64"))]
    batches = []
    for lo, hi in ((0, 100000), (100000, n)):
        columns = []
        for nm, data in zip("abc", cols):
            vals = data[lo:hi]
            columns.append({"name": nm, "count": hi - lo,
                            "VALIDITY": [int(v) for v in valid[lo:hi]] if nm == "b" else [1] * (hi - lo),
                            "DATA": [float(v) for v in vals] if nm == "c" else [int(v) for v in vals]})
        batches.append({"count": hi - lo, "columns": columns})
    src = tmp_path / "big.json"
    src.write_text(json.dumps({"schema": {"fields": fields}, "batches": batches}))
    table = quiver.read_json(src)
    for row_major in (True, False):
        ref = quiver.table_to_tensor(table, row_major=row_major, null_to_nan=True, threads=1)
        assert ref.shape == (n, 3) and ref.nbytes > 4 << 20
        np.testing.assert_array_equal(ref[:, 0], cols[0])
        assert np.isnan(ref[~valid, 1]).all() and (ref[valid, 1] == cols[1][valid]).all()
        for threads in (None, 0, 2, 3, 4):
            got = quiver.table_to_tensor(table, row_major=row_major, null_to_nan=True,
                                         threads=threads)
            assert got.flags.f_contiguous != row_major
            assert got.tobytes("A") == ref.tobytes("A"), (row_major, threads)
            out = np.full(ref.shape, 7.0, order="C" if row_major else "F")
            assert quiver.table_to_tensor(table, row_major=row_major, null_to_nan=True,
                                          threads=threads, out=out) is out
            assert out.tobytes("A") == ref.tobytes("A"), (row_major, threads, "out")
    for bad in (-1, 257):
        with pytest.raises(ValueError, match="threads must be from 0 to 256"):
            quiver.table_to_tensor(table, null_to_nan=True, threads=bad)
    arrow = tmp_path / "big.arrow"
    quiver.write_file(arrow, table)
    outs = []
    for nthreads in ("1", "4"):
        written = tmp_path / f"t{nthreads}.arrow"
        subprocess.run([cli, "tensor", "from-table", str(arrow), str(written), "--null-to-nan",
                        "--threads", nthreads], check=True, capture_output=True)
        outs.append(written.read_bytes())
    assert outs[0] == outs[1]
    np.testing.assert_array_equal(quiver.read_tensor(tmp_path / "t4.arrow"),
                                  quiver.table_to_tensor(table, null_to_nan=True))
    refused = subprocess.run([cli, "tensor", "from-table", str(arrow), str(tmp_path / "x.arrow"),
                              "--threads", "0"], capture_output=True, text=True)
    assert refused.returncode == 2 and "--threads" in refused.stderr


def test_default_threads_are_every_usable_cpu(monkeypatch, mixed):
    """threads=None is the CPUs of the affinity mask (the CLI's rule), and is
    what table_to_tensor hands the library; a number is passed as given."""
    cpus = os.sched_getaffinity(0)
    assert quiver._table_threads(None) == min(len(cpus), 256)
    assert quiver._table_threads(1) == 1 and quiver._table_threads(3) == 3
    if len(cpus) > 1:
        one = {min(cpus)}
        os.sched_setaffinity(0, one)
        try:
            assert quiver._table_threads(None) == 1  # the mask, not the machine's CPUs
        finally:
            os.sched_setaffinity(0, cpus)
    seen = []
    real = quiver._quiver._table_to_tensor

    def spy(*args):
        seen.append(args[4])  # threads, before out
        return real(*args)

    monkeypatch.setattr(quiver._quiver, "_table_to_tensor", spy)
    with_default = quiver.table_to_tensor(mixed)
    one_thread = quiver.table_to_tensor(mixed, threads=1)
    assert seen == [min(len(cpus), 256), 1]
    assert with_default.shape == one_thread.shape and with_default.tobytes() == one_thread.tobytes()


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes("A") == b.tobytes("A")


def test_out_same_values_same_address(tmp_path, cli, mixed):
    """out=: the values table_to_tensor returns, written into the caller's
    array, which is returned itself (same object, same address, flags
    kept), for both orders, a column choice, null_to_nan, several batches."""
    nulls = write_table(cli, tmp_path / "n.arrow", [("x", "i16"), ("y", "f64")],
                        [[[1, None, 3], [0.5, 1.5, None]], [[4], [2.5]]])
    cases: List[Tuple[Any, Dict[str, Any]]] = [
        (mixed, {}), (mixed, {"columns": ["c", "a", "c"]}), (mixed, {"columns": ["b"]}),
        (nulls, {"null_to_nan": True}), (nulls, {"columns": ["x"], "null_to_nan": True})]
    for src, kw in cases:
        for row_major in (True, False):
            ref = quiver.table_to_tensor(src, row_major=row_major, **kw)
            out = np.empty(ref.shape, ref.dtype, order="C" if row_major else "F")
            out.ravel(order="K").view(np.uint8).fill(0xA5)  # a missed element would show
            address = out.ctypes.data
            got = quiver.table_to_tensor(src, row_major=row_major, out=out, **kw)
            assert got is out and out.ctypes.data == address
            assert out.flags.writeable and out.flags.owndata
            assert _same(out, ref), (src, kw, row_major)
    # a view into a larger array (C-contiguous rows of it) is written in place
    big = np.zeros((5, 3))
    quiver.table_to_tensor(mixed, out=big[1:4])
    assert np.array_equal(big[1:4], WANT) and not big[0].any() and not big[4].any()
    # an Arrow PyCapsule producer and a bytes source take out= too
    table = quiver.read_json(tmp_path / "n.arrow.json")
    out = np.empty((4, 2))
    assert quiver.table_to_tensor(table, null_to_nan=True, out=out) is out
    assert _same(out, quiver.table_to_tensor(nulls, null_to_nan=True))
    out = np.empty((3, 3), order="F")
    assert quiver.table_to_tensor(open(mixed, "rb").read(), row_major=False, out=out) is out
    assert np.array_equal(out, WANT)


def test_out_refusals(mixed):
    """out= refused before anything is written: not an ndarray, a dtype
    other than the columns' (or none a tensor has) are TypeError; not 2-D,
    read-only, the wrong order, the wrong shape, misaligned are ValueError,
    each naming what is wrong; out keeps its bytes."""
    def refused(exc, text, out, **kw):
        before = out.tobytes("A") if isinstance(out, np.ndarray) else None
        with pytest.raises(exc, match=text):
            quiver.table_to_tensor(mixed, out=out, **kw)
        if before is not None:
            assert out.tobytes("A") == before

    refused(TypeError, "out must be a numpy.ndarray, not list", [[0.0] * 3] * 3)
    refused(TypeError, "out must be a numpy.ndarray, not memoryview", memoryview(bytearray(72)))
    refused(TypeError, r"out has dtype float32 but the columns give float64",
            np.zeros((3, 3), np.float32))
    refused(TypeError, r"out has dtype int32 but the columns give uint16",
            np.zeros((3, 1), np.int32), columns=["a"])
    refused(TypeError, "out: dtype complex128 is not an Arrow tensor value type",
            np.zeros((3, 3), np.complex128))
    refused(TypeError, "out: dtype >f8 is not an Arrow tensor value type",
            np.zeros((3, 3), ">f8"))
    refused(ValueError, "out must be a 2-D array", np.zeros(9))
    ro = np.zeros((3, 3))
    ro.flags.writeable = False
    refused(ValueError, "out is read-only", ro)
    refused(ValueError, "out must be C-contiguous for row_major=True", np.zeros((3, 3), order="F"))
    refused(ValueError, r"out must be F-contiguous \(Fortran order\) for row_major=False",
            np.zeros((3, 3)), row_major=False)
    refused(ValueError, "out must be C-contiguous", np.zeros((3, 6))[:, ::2])
    refused(quiver.InvalidError, r"the buffer is for a \[3, 2\] tensor but the tables give "
            r"\[3, 3\]", np.zeros((3, 2)))
    refused(quiver.InvalidError, r"the buffer is for a \[9, 1\] tensor", np.zeros((9, 1)))
    raw = np.zeros(73, np.uint8)
    unaligned = raw[1:].view(np.float64).reshape(3, 3)
    refused(quiver.InvalidError, "not aligned to the 8-byte float64 elements", unaligned)
    assert issubclass(quiver.InvalidError, ValueError)
    # the table's own errors come first, as without out=
    with pytest.raises(quiver.InvalidError, match="no column named 'zz'"):
        quiver.table_to_tensor(mixed, columns=["zz"], out=np.zeros((3, 1)))


def test_out_overlapping_the_source_is_refused(tmp_path, cli):
    """A writable array over the very bytes a column is read from (a
    bytearray source, read in place) is refused, not copied onto itself."""
    vals = [i + 0.5 for i in range(64)]
    path = write_table(cli, tmp_path / "t.arrow", [("x", "f64"), ("y", "f64")],
                       [[vals, vals[::-1]]])
    src = bytearray(open(path, "rb").read())
    at = src.find(np.array(vals).tobytes())
    assert at > 0
    over = np.frombuffer(src, np.float64, count=128, offset=at).reshape(64, 2)
    if over.ctypes.data % 8:
        pytest.skip("the bytearray's column is not 8-byte aligned")
    before = bytes(src)
    with pytest.raises(quiver.InvalidError, match="overlaps column 'x' of batch 0"):
        quiver.table_to_tensor(src, out=over)
    assert bytes(src) == before
