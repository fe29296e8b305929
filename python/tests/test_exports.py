"""RecordBatch, Column and Table through the Arrow PyCapsule interface
(__arrow_c_schema__, __arrow_c_array__, __arrow_c_stream__ and the device
forms), read by a ctypes consumer of the C Data Interface structs: formats,
extension metadata, values through the exported buffers, the same addresses
as to_numpy(), slices as windows, lifetimes, device fields, and quiver's
writers taking the exports back."""
import ctypes
import gc
import json

import numpy as np
import pytest

import quiver
from test_batches import _f, _json_table, F64, I32, simple  # noqa: F401 (simple: a fixture)
from test_tensor import assert_no_growth
from test_tensor_column import field_metadata

from c_abi import (ARRAY_RELEASE, SCHEMA_RELEASE, ArrowArray, ArrowArrayStream, ArrowDeviceArray,
                   ArrowDeviceArrayStream, ArrowSchema, capsule_name, capsule_pointer)


def take_schema(cap):
    """Moves the schema out of an arrow_schema capsule (the consumer's job)."""
    assert capsule_name(cap) == b"arrow_schema"
    src = ArrowSchema.from_address(capsule_pointer(cap, b"arrow_schema"))
    out = ArrowSchema()
    ctypes.memmove(ctypes.byref(out), ctypes.byref(src), ctypes.sizeof(out))
    src.release = None
    return out


def take_array(cap, name=b"arrow_array", cls=ArrowArray):
    assert capsule_name(cap) == name
    src = cls.from_address(capsule_pointer(cap, name))
    out = cls()
    ctypes.memmove(ctypes.byref(out), ctypes.byref(src), ctypes.sizeof(out))
    (src.array if cls is ArrowDeviceArray else src).release = None
    return out


def release(s):
    (SCHEMA_RELEASE if isinstance(s, ArrowSchema) else ARRAY_RELEASE)(s.release)(ctypes.byref(s))
    assert not s.release


def child(s, i):
    return s.children[i].contents


def is_valid(a, i):
    """Row i of array `a` (its offset applied) is not null."""
    if not a.buffers[0]:
        return True
    p = a.offset + i
    return bool(ctypes.c_uint8.from_address(a.buffers[0] + p // 8).value >> (p % 8) & 1)


def fixed(a, dtype, n=None):
    """The values of a fixed-width array through its exported buffer."""
    dtype = np.dtype(dtype)
    n = a.length if n is None else n
    start = a.buffers[1] + dtype.itemsize * a.offset
    return np.frombuffer(ctypes.string_at(start, dtype.itemsize * n), dtype)


def strings(a):
    offs = np.frombuffer(ctypes.string_at(a.buffers[1] + 4 * a.offset, 4 * (a.length + 1)), np.int32)
    return [ctypes.string_at(a.buffers[2] + int(offs[i]), int(offs[i + 1] - offs[i])).decode()
            if is_valid(a, i) else None for i in range(a.length)]


def test_batch_export_read_by_ctypes(simple):  # noqa: F811
    r = quiver.read_file(simple)
    b = next(iter(r))
    full = {n: b.column(n).to_numpy() for n in ("i", "x", "p")}
    s = b[1:3]
    schema_cap, array_cap = s.__arrow_c_array__()
    assert capsule_name(s.__arrow_c_schema__()) == b"arrow_schema"
    del r, b, s
    gc.collect()  # the exports outlive the batch, the slice and the reader
    schema = take_schema(schema_cap)
    arr = take_array(array_cap)
    del schema_cap, array_cap
    gc.collect()
    assert schema.format == b"+s" and schema.n_children == 5
    assert [child(schema, i).name for i in range(5)] == [b"i", b"x", b"s", b"p", b"b"]
    assert [child(schema, i).format for i in range(5)] == [b"i", b"g", b"u", b"+w:2", b"b"]
    assert child(child(schema, 3), 0).format == b"g"
    assert arr.length == 2 and arr.offset == 0 and arr.n_children == 5 and arr.null_count == 0
    i, x, st, p, bo = (child(arr, k) for k in range(5))
    assert [c.length for c in (i, x, st, p, bo)] == [2] * 5
    assert i.offset == 1 and i.null_count == 0
    np.testing.assert_array_equal(fixed(i, np.int32), [-2, 3])
    # the same memory as to_numpy(), one row on: no buffer was copied
    assert i.buffers[1] + 4 * i.offset == full["i"].ctypes.data + 4
    assert x.buffers[1] + 8 * x.offset == np.ma.getdata(full["x"]).ctypes.data + 8
    assert x.null_count == 1 and [is_valid(x, k) for k in range(2)] == [False, True]
    assert fixed(x, np.float64)[1] == 2.5
    assert st.null_count == 1 and strings(st) == ["bc", None]
    items = child(p, 0)
    assert p.offset == 1 and items.offset == 0  # a fixed-size list's window is its own offset
    got = fixed(items, np.float64, 2 * (p.offset + p.length))[2 * p.offset:].reshape(2, 2)
    np.testing.assert_array_equal(got, [[2, 3], [4, 5]])
    assert items.buffers[1] == full["p"].ctypes.data
    assert bo.null_count == 0 and bo.offset == 1
    release(arr)
    release(schema)


def test_column_export_carries_the_tensor_extension(tmp_path):
    data = np.arange(24, dtype=np.int64).reshape(6, 2, 2) * 3 - 5
    path = tmp_path / "t.arrow"
    quiver.write_tensor_column(path, data, name="img", dim_names=["h", "w"], file=True)
    col = next(iter(quiver.read_file(path))).column("img")
    view = col.to_numpy()
    schema_cap, array_cap = col[2:5].__arrow_c_array__()
    dev_schema_cap, dev_cap = col[2:5].__arrow_c_device_array__()
    del col
    gc.collect()
    for scap in (schema_cap, dev_schema_cap):
        field = take_schema(scap)
        assert field.name == b"img" and field.format == b"+w:4"
        meta = field_metadata(field)
        assert meta["ARROW:extension:name"] == "arrow.fixed_shape_tensor"
        ext = json.loads(meta["ARROW:extension:metadata"])
        assert ext["shape"] == [2, 2] and ext["dim_names"] == ["h", "w"]
        release(field)
    arr = take_array(array_cap)
    dev = take_array(dev_cap, b"arrow_device_array", ArrowDeviceArray)
    assert dev.device_type == 1 and dev.device_id == -1 and not dev.sync_event
    assert list(dev.reserved) == [0, 0, 0]
    for a in (arr, dev.array):
        assert a.length == 3 and a.offset == 2 and a.null_count == 0
        values = child(a, 0)
        assert values.buffers[1] == view.ctypes.data  # zero-copy: to_numpy's address
        got = fixed(values, np.int64, 4 * (a.offset + a.length))[4 * a.offset:].reshape(3, 2, 2)
        np.testing.assert_array_equal(got, data[2:5])
    release(arr)
    release(dev.array)


def plain_stream(cap):
    assert capsule_name(cap) == b"arrow_array_stream"
    return ArrowArrayStream.from_address(capsule_pointer(cap, b"arrow_array_stream"))


def test_table_streams(simple):  # noqa: F811
    t = quiver.read_file(simple).read_all()
    part = t[3:5]  # the last row of batch 0, the first of batch 1
    cap = part.__arrow_c_stream__()
    dcap = part.__arrow_c_device_stream__()
    del t, part
    gc.collect()
    s = plain_stream(cap)
    schema = ArrowSchema()
    assert s.get_schema(ctypes.pointer(s), ctypes.pointer(schema)) == 0
    assert schema.format == b"+s" and child(schema, 2).name == b"s"
    SCHEMA_RELEASE(schema.release)(ctypes.byref(schema))
    got = []
    while True:
        a = ArrowArray()
        assert s.get_next(ctypes.pointer(s), ctypes.pointer(a)) == 0
        if not a.release:
            break
        got.append((a.length, child(a, 0).offset, list(fixed(child(a, 0), np.int32)),
                    strings(child(a, 2))))
        release(a)
    assert got == [(1, 3, [4], ["déf"]), (1, 0, [10], ["x"])]
    s.release(ctypes.pointer(s))
    assert not s.release
    assert drain_device_stream(dcap, lambda a: a.length) == [1, 1]
    del dcap  # the capsule releases the stream it still holds
    gc.collect()


def test_empty_table_stream_and_kwargs(simple):  # noqa: F811
    t = quiver.read_file(simple).read_all()
    empty = t[6:6]
    assert empty.batches == []
    cap = empty.__arrow_c_stream__()
    s = plain_stream(cap)
    schema = ArrowSchema()
    assert s.get_schema(ctypes.pointer(s), ctypes.pointer(schema)) == 0 and schema.n_children == 5
    SCHEMA_RELEASE(schema.release)(ctypes.byref(schema))
    a = ArrowArray()
    assert s.get_next(ctypes.pointer(s), ctypes.pointer(a)) == 0 and not a.release
    s.release(ctypes.pointer(s))
    b = t.batches[0]
    # requested_schema is accepted and ignored (the types quiver holds)
    arr = take_array(b.__arrow_c_array__(requested_schema=b.__arrow_c_schema__())[1])
    assert arr.length == 4
    release(arr)
    assert capsule_name(b.__arrow_c_device_array__(None, future_keyword=None)[1]) == b"arrow_device_array"
    for call in (b.__arrow_c_device_array__, t.__arrow_c_device_stream__,
                 b.column(0).__arrow_c_device_array__):
        with pytest.raises(NotImplementedError, match="future_keyword"):
            call(future_keyword=1)
    with pytest.raises(quiver.InvalidError, match="no C schema"):
        quiver.Table([], quiver.Schema({"children": [], "metadata": {}})).__arrow_c_stream__()


def test_a_table_of_mismatched_batches_is_refused(simple, tmp_path):  # noqa: F811
    quiver.write_tensor_column(tmp_path / "o.arrows", np.zeros((2, 3)))
    other = next(iter(quiver.read_stream(tmp_path / "o.arrows")))
    t = quiver.read_file(simple).read_all()
    mixed = quiver.Table([t.batches[0], other], t.schema)
    with pytest.raises(quiver.InvalidError, match="batch 1 is"):
        mixed.__arrow_c_stream__()
    with pytest.raises(quiver.InvalidError, match="batch 1 is"):
        quiver.write_stream(tmp_path / "m.arrows", mixed)
    assert not (tmp_path / "m.arrows").exists()


class ArrayOnly:
    def __init__(self, batch):
        self.batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self.batch.__arrow_c_array__(requested_schema)


class OnDevice:
    """A quiver batch's device export relabelled as memory of `device_type`."""

    def __init__(self, batch, device_type):
        self.batch = batch
        self.device_type = device_type
        self.array_cap = None

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        schema, self.array_cap = self.batch.__arrow_c_device_array__(requested_schema, **kwargs)
        d = ArrowDeviceArray.from_address(capsule_pointer(self.array_cap, b"arrow_device_array"))
        d.device_type = self.device_type
        d.device_id = 0 if self.device_type != 1 else -1
        return schema, self.array_cap


def test_writers_take_the_exports(simple, tmp_path):  # noqa: F811
    t = quiver.read_file(simple).read_all()
    b = t.batches[0]
    want = b[1:3].to_pylist()
    for i, obj in enumerate((b[1:3], ArrayOnly(b[1:3]), OnDevice(b[1:3], 1))):
        out = tmp_path / f"b{i}.arrow"
        quiver.write_file(out, obj)
        back = quiver.read_file(out).read_all()
        assert back.to_pylist() == want and len(back.batches) == 1
    quiver.write_stream(tmp_path / "t.arrows", t[3:5])
    assert quiver.read_stream(tmp_path / "t.arrows").read_all().to_pylist() == t[3:5].to_pylist()
    cuda = OnDevice(b, 2)
    with pytest.raises(quiver.NotSupportedError, match="device type 2 \\(CUDA\\)"):
        quiver.write_stream(tmp_path / "cuda.arrows", cuda)
    assert not (tmp_path / "cuda.arrows").exists()
    d = ArrowDeviceArray.from_address(capsule_pointer(cuda.array_cap, b"arrow_device_array"))
    assert d.array.release  # refused before it was taken: the capsule still owns it


def test_no_leak_over_10000_exports(simple):  # noqa: F811
    t = quiver.read_file(simple).read_all()
    b = t.batches[0][1:]
    col = b.column("p")

    def cycle():
        for k in range(1000):
            b.__arrow_c_array__()  # unconsumed: the destructors release them
            b.__arrow_c_device_array__()
            col.__arrow_c_array__()
            t.__arrow_c_stream__()
            t.column("p").__arrow_c_stream__()
            if k % 10 == 0:
                t.column("s").__arrow_c_device_stream__()
                t.__arrow_c_device_stream__()
                arr = take_array(b.__arrow_c_array__()[1])  # consumed and released
                release(arr)

    assert_no_growth(cycle, "10,000")


def test_every_stream_consumer_takes_single_batches(tmp_path, cli):
    """table_to_tensor, write_json and Flight's put take __arrow_c_array__ and
    __arrow_c_device_array__ producers (one batch) as the writers do."""
    import quiver.flight
    from test_table_tensor import write_table
    p = write_table(cli, tmp_path / "n.arrow", [("a", "i32"), ("b", "f64")],
                    [[[1, 2, 3, 4], [0.5, 1.5, 2.5, 3.5]]])
    b = next(iter(quiver.read_file(p)))
    want = np.array([[2, 1.5], [3, 2.5]])
    for obj in (b[1:3], ArrayOnly(b[1:3]), OnDevice(b[1:3], 1),
                quiver.read_file(p).read_all()[1:3]):
        np.testing.assert_array_equal(quiver.table_to_tensor(obj), want)
    with pytest.raises(quiver.NotSupportedError, match="CUDA"):
        quiver.table_to_tensor(OnDevice(b, 2))
    for i, obj in enumerate((b[1:3], ArrayOnly(b[1:3]), quiver.read_file(p).read_all()[1:3])):
        out = tmp_path / f"j{i}.json"
        quiver.write_json(out, obj)
        assert quiver.read_json(out).to_pydict() == {"a": [2, 3], "b": [1.5, 2.5]}
    with pytest.raises(quiver.NotSupportedError, match="CUDA"):
        quiver.write_json(tmp_path / "cuda.json", OnDevice(b, 2))
    assert not (tmp_path / "cuda.json").exists()
    served = tmp_path / "served"
    served.mkdir()
    with quiver.flight.serve(served, port=0, allow_put=True) as srv:
        c = quiver.flight.connect(srv.uri, timeout=30)
        assert c.put("one.arrow", b[1:3]) == [b"stored one.arrow"]
        with pytest.raises(TypeError, match="exports none"):
            c.put("no.arrow", object())
    assert quiver.read_file(served / "one.arrow").read_all().to_pydict() == {"a": [2, 3],
                                                                           "b": [1.5, 2.5]}


def drain_device_stream(dcap, pick):
    """pick(array) of each array an arrow_device_array_stream capsule yields,
    each checked to be on the CPU device (id -1, no sync event) and released;
    the capsule keeps (and releases) the stream."""
    d = ArrowDeviceArrayStream.from_address(capsule_pointer(dcap, b"arrow_device_array_stream"))
    assert d.device_type == 1
    got = []
    while True:
        da = ArrowDeviceArray()
        assert d.get_next(ctypes.pointer(d), ctypes.pointer(da)) == 0
        if not da.array.release:
            break
        assert da.device_type == 1 and da.device_id == -1 and not da.sync_event
        got.append(pick(da.array))
        release(da.array)
    return got


def read_stream_arrays(cap):
    """(schema, [arrays]) read from an arrow_array_stream capsule by the
    ctypes consumer; the stream is released, the structs are the caller's."""
    s = plain_stream(cap)
    schema = ArrowSchema()
    assert s.get_schema(ctypes.pointer(s), ctypes.pointer(schema)) == 0
    arrays = []
    while True:
        a = ArrowArray()
        assert s.get_next(ctypes.pointer(s), ctypes.pointer(a)) == 0
        if not a.release:
            break
        arrays.append(a)
    s.release(ctypes.pointer(s))
    assert not s.release
    return schema, arrays


def test_chunked_column_streams(simple):  # noqa: F811
    """A ChunkedColumn streams as a chunked array: the field's type as the
    schema, one array per chunk sharing the batches' memory (a slice as its
    window), outliving the table, the reader and a gc.collect()."""
    r = quiver.read_file(simple)
    t = r.read_all()
    views = [b.column("i").to_numpy() for b in t.batches]
    items = [np.ma.getdata(b.column("p").to_numpy()) for b in t.batches]
    col = t.column("i")
    caps = {"whole": col.__arrow_c_stream__(),
            "part": t[3:5].column("i").__arrow_c_stream__(),  # the last row of batch 0, the first of 1
            "sliced": col[2:5].__arrow_c_stream__(requested_schema=None),
            "p": t.column("p").__arrow_c_stream__(requested_schema=t.batches[0].__arrow_c_schema__()),
            "empty": t[6:6].column("s").__arrow_c_stream__()}
    dcap = t[3:5].column("x").__arrow_c_device_stream__()
    del r, t, col
    gc.collect()
    schema, arrays = read_stream_arrays(caps.pop("whole"))
    assert schema.format == b"i" and schema.name == b"i" and schema.n_children == 0
    assert [(a.length, a.offset, a.n_children) for a in arrays] == [(4, 0, 0), (2, 0, 0)]
    for a, v in zip(arrays, views):
        assert a.buffers[1] == v.ctypes.data  # zero-copy: to_numpy's address
    assert [list(fixed(a, np.int32)) for a in arrays] == [[1, -2, 3, 4], [10, 20]]
    for a in arrays:
        release(a)
    release(schema)
    for key, want in (("part", [(1, 3, [4]), (1, 0, [10])]),
                      ("sliced", [(2, 2, [3, 4]), (1, 0, [10])])):
        schema, arrays = read_stream_arrays(caps.pop(key))
        assert schema.format == b"i"
        got = [(a.length, a.offset, list(fixed(a, np.int32))) for a in arrays]
        assert got == want, key
        assert arrays[0].buffers[1] == views[0].ctypes.data
        for a in arrays:
            release(a)
        release(schema)
    # a fixed-size list column: requested_schema (the batch's struct) is ignored
    schema, arrays = read_stream_arrays(caps.pop("p"))
    assert schema.format == b"+w:2" and child(schema, 0).format == b"g"
    assert [a.length for a in arrays] == [4, 2]
    for a, it in zip(arrays, items):
        assert child(a, 0).buffers[1] == it.ctypes.data
        release(a)
    release(schema)
    schema, arrays = read_stream_arrays(caps.pop("empty"))
    assert schema.format == b"u" and schema.name == b"s" and arrays == []
    release(schema)
    assert drain_device_stream(dcap, lambda a: (a.length, a.offset, a.null_count)) == [
        (1, 3, 0), (1, 0, 0)]
    del dcap
    gc.collect()


def test_chunked_tensor_column_stream_carries_the_extension(tmp_path):
    """Each chunk of a tensor column is one array of the extension's storage
    under the field with ARROW:extension:name/metadata; the values are the
    batches' memory."""
    data = np.arange(40, dtype=np.float32).reshape(10, 2, 2)
    parts = []
    for k, (lo, hi) in enumerate(((0, 6), (6, 10))):
        quiver.write_tensor_column(tmp_path / f"{k}.arrows", data[lo:hi], name="img",
                                   dim_names=["h", "w"])
        parts.append(quiver.read_stream(tmp_path / f"{k}.arrows").read_all())
    quiver.write_file(tmp_path / "two.arrow",
                      quiver.Table(parts[0].batches + parts[1].batches, parts[0].schema))
    t = quiver.read_file(tmp_path / "two.arrow").read_all()
    assert len(t.batches) == 2
    col = t.column("img")
    views = [b.column("img").to_numpy() for b in t.batches]
    cap = col[4:8].__arrow_c_stream__()
    del t, col
    gc.collect()
    schema, arrays = read_stream_arrays(cap)
    assert schema.name == b"img" and schema.format == b"+w:4"
    meta = field_metadata(schema)
    assert meta["ARROW:extension:name"] == "arrow.fixed_shape_tensor"
    ext = json.loads(meta["ARROW:extension:metadata"])
    assert ext["shape"] == [2, 2] and ext["dim_names"] == ["h", "w"]
    assert [(a.length, a.offset) for a in arrays] == [(2, 4), (2, 0)]
    for a, v, lo in zip(arrays, views, (4, 6)):
        values = child(a, 0)
        assert values.buffers[1] == v.ctypes.data  # zero-copy
        got = fixed(values, np.float32, 4 * (a.offset + a.length))[4 * a.offset:].reshape(-1, 2, 2)
        np.testing.assert_array_equal(got, data[lo:lo + 2])
        release(a)
    release(schema)


def test_chunked_column_stream_refusals(simple, tmp_path):  # noqa: F811
    quiver.write_tensor_column(tmp_path / "o.arrows", np.zeros((2, 3)), name="i")
    other = next(iter(quiver.read_stream(tmp_path / "o.arrows")))
    t = quiver.read_file(simple).read_all()
    mixed = quiver.Table([t.batches[0], other], t.schema).column("i")
    with pytest.raises(quiver.InvalidError, match="batch 1 is"):
        mixed.__arrow_c_stream__()
    with pytest.raises(quiver.InvalidError, match="no chunks and no C schema"):
        quiver.ChunkedColumn([], t.schema.fields[0]).__arrow_c_stream__()
    with pytest.raises(NotImplementedError, match="future_keyword"):
        t.column(0).__arrow_c_device_stream__(future_keyword=1)
    # a chunked array is no table: the record batch writers refuse its stream
    with pytest.raises(quiver.Error):
        quiver.write_stream(tmp_path / "c.arrows", t.column("i"))
    assert not (tmp_path / "c.arrows").exists()
