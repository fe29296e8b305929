"""Tensor columns from Python: read_tensor_column (zero-copy, permutations as
strides, several batches, nulls and fill, column choice), read_tensor_cells,
write_tensor_column (fixed shape from an ndarray without a copy, variable
shape from a list with uniform_shape), malformed columns, lifetimes."""
import gc
import io
import json
import subprocess

import numpy as np
import pytest

import quiver


def address_range(blob):
    base = np.frombuffer(blob, np.uint8).ctypes.data
    return base, base + len(blob)


def inside(arr, blob):
    lo, hi = address_range(blob)
    return lo <= arr.ctypes.data < hi


def column_bytes(data, **kw):
    buf = io.BytesIO()
    quiver.write_tensor_column(buf, data, **kw)
    return buf.getvalue()


def test_fixed_shape_round_trip_zero_copy(tmp_path):
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    blob = column_bytes(a, name="cells", dim_names=["h", "w"])
    b = quiver.read_tensor_column(blob)
    assert b.shape == (2, 3, 4) and b.dtype == np.float32 and np.array_equal(a, b)
    assert inside(b, blob) and not b.flags.writeable
    # a path: the mapping
    p = tmp_path / "t.arrow"
    quiver.write_tensor_column(p, a, file=True)
    c = quiver.read_tensor_column(p)
    assert np.array_equal(a, c)
    r = quiver.read_file(p)
    assert r.num_batches == 1 and r.columns[0][0] == "tensor"
    for dt in ("int8", "uint16", "int64", "float16", "float64"):
        x = (np.arange(12) % 7).astype(dt).reshape(3, 4)
        y = quiver.read_tensor_column(column_bytes(x))
        assert y.dtype == x.dtype and np.array_equal(x, y)


def test_permuted_cells_become_strides(cli, tmp_path):
    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    t = a.transpose(0, 2, 1)  # cells [4, 3] stored as [3, 4]: a permutation, no copy
    p = tmp_path / "perm.arrow"
    quiver.write_tensor_column(p, t)
    shown = subprocess.run([cli, "cat", str(p)], capture_output=True, text=True).stdout
    assert "[value_type=int32, shape=[3,4], permutation=[1,0]]>" in shown, shown
    blob = p.read_bytes()
    b = quiver.read_tensor_column(blob)
    assert b.shape == (2, 4, 3) and np.array_equal(b, t)
    assert b.strides == t.strides and inside(b, blob)
    # Fortran-order cells (each cell column-major, the leading dim outermost)
    f = np.stack([np.asfortranarray(c) for c in a])
    f = np.lib.stride_tricks.as_strided(f, a.shape, (48, 4, 12))
    assert np.array_equal(f, a)
    b = quiver.read_tensor_column(column_bytes(f))
    assert np.array_equal(b, a) and b.strides == (48, 4, 12)
    # a whole Fortran-order array interleaves its cells: written row-major
    b = quiver.read_tensor_column(column_bytes(np.asfortranarray(a)))
    assert np.array_equal(b, a) and b.flags.c_contiguous


def test_the_array_outlives_everything(tmp_path):
    p = tmp_path / "life.arrow"
    a = np.arange(60, dtype=np.float64).reshape(5, 3, 4)
    quiver.write_tensor_column(p, a)
    blob = bytearray(p.read_bytes())
    b = quiver.read_tensor_column(memoryview(blob))
    cells = quiver.read_tensor_cells(p)
    del blob
    p.unlink()
    gc.collect()
    assert np.array_equal(b, a) and b[4, 2, 3] == 59
    assert all(np.array_equal(c, a[i]) for i, c in enumerate(cells))


def test_no_leak_over_10000_reads(tmp_path):
    from test_tensor import assert_no_growth
    p = tmp_path / "leak.arrow"
    quiver.write_tensor_column(p, np.arange(4096, dtype=np.float32).reshape(64, 8, 8))
    blob = p.read_bytes()

    def cycle():
        for _ in range(500):
            a = quiver.read_tensor_column(p)
            b = quiver.read_tensor_column(blob)
            float(a[-1, -1, -1] + b[-1, -1, -1])

    assert_no_growth(cycle, "10,000")


def test_variable_shape_cells(cli, tmp_path):
    cells = [np.ones((2, 3), np.int16), None, np.arange(10, dtype=np.int16).reshape(2, 5)]
    p = tmp_path / "var.arrow"
    quiver.write_tensor_column(p, cells, name="v", dim_names=["r", "c"])
    shown = subprocess.run([cli, "cat", str(p)], capture_output=True, text=True).stdout
    want = "v: extension<arrow.variable_shape_tensor[value_type=int16, ndim=2, dim_names=[r,c], uniform_shape=[2,null]]>"
    assert want in shown, shown
    blob = p.read_bytes()
    got = quiver.read_tensor_cells(blob)
    assert got[1] is None and np.array_equal(got[0], cells[0]) and np.array_equal(got[2], cells[2])  # type: ignore[arg-type]  # cells holds a None
    assert inside(got[2], blob)
    with pytest.raises(quiver.InvalidError, match="cell 1 is null"):
        quiver.read_tensor_column(blob)
    # cells that differ in shape do not stack, even filled
    with pytest.raises(quiver.InvalidError, match="shape"):
        quiver.read_tensor_column(blob, fill=0)
    same = [np.full((2, 2), i, np.float32) for i in range(3)]
    s = quiver.read_tensor_column(column_bytes(same))
    assert s.shape == (3, 2, 2) and np.array_equal(s, np.stack(same))
    same[1] = None  # type: ignore[call-overload]  # a null cell
    s = quiver.read_tensor_column(column_bytes(same), fill=-1)
    assert s.flags.writeable and (s[1] == -1).all() and (s[2] == 2).all()
    with pytest.raises(ValueError, match="share a dtype"):
        column_bytes([np.ones(3, np.int8), np.ones(3, np.int16)])
    with pytest.raises(ValueError, match="no cell"):
        column_bytes([None, None])


def test_write_errors(tmp_path):
    a = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="not a str"):
        quiver.write_tensor_column(tmp_path / "x.arrow", a, dim_names="c")
    with pytest.raises(ValueError, match="dim_names has 2 names for 1"):
        quiver.write_tensor_column(tmp_path / "x.arrow", a, dim_names=["a", "b"])
    with pytest.raises(ValueError, match="at least 2 dims"):
        quiver.write_tensor_column(tmp_path / "x.arrow", np.zeros(3))
    with pytest.raises(quiver.NotSupportedError):
        quiver.write_tensor_column(tmp_path / "x.arrow", np.zeros((2, 2), np.complex64))
    assert not (tmp_path / "x.arrow").exists()


# ---- tables written elsewhere (integration JSON): several batches, nulls,
# several tensor columns, malformed metadata

def fixed_field(name, shape, meta=None):
    n = int(np.prod(shape))
    return {"name": name, "nullable": True, "type": {"name": "fixedsizelist", "listSize": n},
            "children": [{"name": "item", "nullable": True,
                          "type": {"name": "floatingpoint", "precision": "SINGLE"},
                          "children": []}],
            "metadata": [{"key": "ARROW:extension:name", "value": "arrow.fixed_shape_tensor"},
                         {"key": "ARROW:extension:metadata",
                          "value": meta if meta is not None else json.dumps({"shape": shape})}]}


def fixed_column(name, cells, size):
    values = []
    for c in cells:
        values += [0.0] * size if c is None else [float(x) for x in np.ravel(c)]
    return {"name": name, "count": len(cells), "VALIDITY": [0 if c is None else 1 for c in cells],
            "children": [{"name": "item", "count": len(values), "VALIDITY": [1] * len(values),
                          "DATA": values}]}


def write_json_table(cli, path, fields, batches):
    doc = {"schema": {"fields": fields}, "batches": batches}
    with open(f"{path}.json", "w") as f:
        json.dump(doc, f)
    r = subprocess.run([cli, "integration", "--mode=json-to-arrow", f"--json={path}.json",
                        f"--arrow={path}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return str(path)


def test_several_batches_nulls_and_choice(cli, tmp_path):
    c = np.arange(5 * 4, dtype=np.float32).reshape(5, 2, 2)
    b0 = {"count": 2, "columns": [fixed_column("t", [c[0], c[1]], 4), fixed_column("u", [c[0], c[1]], 4)]}
    b1 = {"count": 3, "columns": [fixed_column("t", [c[2], None, c[4]], 4),
                                  fixed_column("u", [c[2], c[3], c[4]], 4)]}
    p = write_json_table(cli, tmp_path / "b.arrow", [fixed_field("t", [2, 2]), fixed_field("u", [2, 2])],
                         [b0, b1])
    with pytest.raises(quiver.InvalidError, match=r"2 tensor columns \('t', 'u'\): name one"):
        quiver.read_tensor_column(p)
    u = quiver.read_tensor_column(p, column="u")
    assert u.shape == (5, 2, 2) and np.array_equal(u, c) and u.flags.writeable  # the concatenation
    first = quiver.read_tensor_column(p, column="u", batch=0)
    assert np.array_equal(first, c[:2]) and not first.flags.writeable
    with pytest.raises(quiver.InvalidError, match="cell 1 is null"):
        quiver.read_tensor_column(p, column="t")
    t = quiver.read_tensor_column(p, column="t", fill=np.nan)
    assert np.isnan(t[3]).all() and np.array_equal(t[[0, 1, 2, 4]], c[[0, 1, 2, 4]])
    assert np.array_equal(quiver.read_tensor_column(p, column="t", batch=0), c[:2])
    with pytest.raises(quiver.InvalidError, match="batch=2: the table has 2 record batches"):
        quiver.read_tensor_column(p, column="u", batch=2)
    with pytest.raises(quiver.InvalidError, match=r"no column named 'zz' \(columns: 't', 'u'\)"):
        quiver.read_tensor_column(p, column="zz")
    cells = quiver.read_tensor_cells(p, column="t")
    assert len(cells) == 5 and cells[3] is None and np.array_equal(cells[4], c[4])


@pytest.mark.parametrize("meta,match", [
    ('{"shape": [2, 2', "malformed JSON"),
    ('{"shape": [2, 3]}', "FixedSizeList"),
    ('{"shape": [2, 2], "permutation": [0, 0]}', "not a permutation"),
    ('{"shape": [2, -2]}', "negative"),
    ('{"shape": [4], "dim_names": ["a", "b"]}', "dim_names"),
])
def test_malformed_columns_raise(cli, tmp_path, meta, match):
    c = np.zeros((1, 4), np.float32)
    p = write_json_table(cli, tmp_path / "bad.arrow", [fixed_field("t", [2, 2], meta)],
                         [{"count": 1, "columns": [fixed_column("t", [c[0]], 4)]}])
    for read in (quiver.read_tensor_column, quiver.read_tensor_cells):
        with pytest.raises(ValueError, match=match):
            read(p, column="t")  # type: ignore[operator]
    with pytest.raises(ValueError):
        quiver.read_tensor_column(p)  # not recognised as a tensor column: none found


def test_not_arrow_and_no_tensor_column(tmp_path, cli):
    with pytest.raises(ValueError):
        quiver.read_tensor_column(b"definitely not arrow")
    p = write_json_table(cli, tmp_path / "plain.arrow",
                         [{"name": "x", "nullable": True,
                           "type": {"name": "int", "bitWidth": 32, "isSigned": True}, "children": []}],
                         [{"count": 1, "columns": [{"name": "x", "count": 1, "VALIDITY": [1], "DATA": [1]}]}])
    with pytest.raises(quiver.InvalidError, match="no tensor column"):
        quiver.read_tensor_column(p)
    with pytest.raises(ValueError):
        quiver.read_tensor_cells(p, column="x")


def field_metadata(schema):
    """The key/value pairs of a C Data Interface metadata blob."""
    import ctypes
    if not schema.metadata:
        return {}
    def i32(at):
        return ctypes.c_int32.from_address(at).value
    at = schema.metadata
    n, at, out = i32(at), at + 4, {}
    for _ in range(n):
        kl = i32(at)
        k = ctypes.string_at(at + 4, kl).decode()
        at += 4 + kl
        vl = i32(at)
        out[k] = ctypes.string_at(at + 4, vl).decode()
        at += 4 + vl
    return out


def test_the_c_stream_export_carries_the_extension(tmp_path):
    """A ctypes consumer of the readers' __arrow_c_stream__ sees the extension
    name and metadata on the field."""
    import ctypes
    from c_abi import SCHEMA_RELEASE, ArrowArrayStream, ArrowSchema, capsule_pointer
    a = np.arange(12, dtype=np.float32).reshape(3, 2, 2).transpose(0, 2, 1)
    p = tmp_path / "ext.arrow"
    quiver.write_tensor_column(p, a, name="img", dim_names=["h", "w"], file=True)
    for reader in (quiver.read_file(p), quiver.read_stream(p)):
        cap = reader.__arrow_c_stream__()
        src = ArrowArrayStream.from_address(capsule_pointer(cap, b"arrow_array_stream"))
        schema = ArrowSchema()
        assert src.get_schema(ctypes.byref(src), ctypes.byref(schema)) == 0
        field = schema.children[0].contents
        assert field.name == b"img" and field.format == b"+w:4"
        meta = field_metadata(field)
        assert meta["ARROW:extension:name"] == "arrow.fixed_shape_tensor"
        ext = json.loads(meta["ARROW:extension:metadata"])
        assert ext["shape"] == [2, 2] and ext["permutation"] == [1, 0]
        assert ext["dim_names"] == ["w", "h"]  # physical order: logical dim i is physical permutation[i]
        SCHEMA_RELEASE(schema.release)(ctypes.byref(schema))
        del cap


def _resident_kib(path):
    """Rss of this process's mappings of `path` (/proc/self/smaps), or None
    where smaps is not available."""
    try:
        with open("/proc/self/smaps") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    total, inside = 0, False
    for line in lines:
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:  # a mapping's first line
            inside = len(head) >= 6 and head[-1] == str(path)
        elif inside and head and head[0] == "Rss:":
            total += int(head[1])
    return total


def test_read_tensor_column_does_not_fault_in_the_file(tmp_path):
    # read_tensor_column is a view: reading a 64 MiB column must not touch its
    # pages (the reader once validated in full, which faults in the whole
    # mapping before the view is made: time proportional to the file); the
    # pages resident in the mapping are the proof, as no timing is.
    path = tmp_path / "big.arrow"
    quiver.write_tensor_column(path, np.ones((1 << 13, 32, 32)))
    r = quiver.read_tensor_column(path)
    kib = _resident_kib(path)
    if kib is None:
        pytest.skip("no /proc/self/smaps")
    assert r.shape == (1 << 13, 32, 32) and r.base is not None
    assert kib < 1024, "%d KiB of the 64 MiB mapping faulted in" % kib
    assert r[-1, -1, -1] == 1.0 and r[0].sum() == 1024.0
    # a stack that is read is resident, and validation still runs in full on it
    cells = quiver.read_tensor_cells(path)
    assert len(cells) == 1 << 13 and cells[5].shape == (32, 32)
