"""The Arrow C Device Data Interface through the PyCapsule interface:
RecordBatchReader.__arrow_c_device_stream__ read by a ctypes consumer (the
device fields and the data), writers taking producers of the device forms
(preferred) and refusing non-CPU data from producers written here."""
import ctypes
import gc

import numpy as np
import pytest

import quiver
from quiver import _quiver

from c_abi import (ARRAY_RELEASE, GET_ERROR, GET_NEXT, GET_SCHEMA, SCHEMA_RELEASE, STREAM_RELEASE,
                   ArrowArray, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema, c_int32, c_int64,
                   c_void_p, capsule_name, capsule_new, capsule_pointer)

STREAM_NAME = b"arrow_device_array_stream"
ARRAY_NAME = b"arrow_device_array"
CUDA = 2


def device_stream(cap):
    assert capsule_name(cap) == STREAM_NAME
    return ArrowDeviceArrayStream.from_address(capsule_pointer(cap, STREAM_NAME))


def release_array(a):
    if a.release:
        ARRAY_RELEASE(a.release)(ctypes.byref(a))
    assert not a.release


def values_of(batch):
    """The int64 values of a one-column fixed_shape_tensor batch."""
    col = batch.children[0].contents
    values = col.children[0].contents
    n = values.length
    start = values.buffers[1] + 8 * values.offset
    return np.frombuffer(ctypes.string_at(start, 8 * n), np.int64).reshape(col.length, -1)


@pytest.fixture
def table(tmp_path):
    data = np.arange(12, dtype=np.int64).reshape(3, 4) * 5 - 7
    path = str(tmp_path / "t.arrows")
    quiver.write_tensor_column(path, data)
    return path, data


def test_reader_device_stream_ctypes_consumer(table):
    path, data = table
    r = quiver.read_stream(path)
    cap = r.__arrow_c_device_stream__()
    del r
    gc.collect()  # the capsule outlives the reader
    s = device_stream(cap)
    assert s.device_type == 1
    schema = ArrowSchema()
    assert s.get_schema(ctypes.pointer(s), ctypes.pointer(schema)) == 0
    assert schema.format == b"+s" and schema.n_children == 1
    assert schema.children[0].contents.name == b"tensor"
    SCHEMA_RELEASE(schema.release)(ctypes.byref(schema))
    got = []
    while True:
        d = ArrowDeviceArray()
        d.device_type = 99
        assert s.get_next(ctypes.pointer(s), ctypes.pointer(d)) == 0
        if not d.array.release:
            break
        assert d.device_type == 1 and d.device_id == -1 and not d.sync_event
        assert list(d.reserved) == [0, 0, 0]
        got.append(values_of(d.array).copy())
        release_array(d.array)
    assert len(got) == 1
    np.testing.assert_array_equal(got[0], data)
    s.release(ctypes.pointer(s))
    assert not s.release


def test_device_stream_kwargs(table):
    r = quiver.read_stream(table[0])
    assert capsule_name(r.__arrow_c_device_stream__(None, some_future_keyword=None)) == STREAM_NAME
    assert capsule_name(r.__arrow_c_device_stream__(requested_schema=None)) == STREAM_NAME
    with pytest.raises(NotImplementedError):
        r.__arrow_c_device_stream__(some_future_keyword=1)


class DeviceOnly:
    """A producer of the device stream alone (quiver's, passed through)."""

    def __init__(self, reader):
        self.reader = reader

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self.reader.__arrow_c_device_stream__(requested_schema, **kwargs)


class Both(DeviceOnly):
    def __arrow_c_stream__(self, requested_schema=None):
        raise AssertionError("the device form is preferred")


@pytest.mark.parametrize("cls", [DeviceOnly, Both])
def test_writers_take_device_streams(table, tmp_path, cls):
    path, data = table
    out = str(tmp_path / "out.arrow")
    quiver.write_file(out, cls(quiver.read_stream(path)))
    np.testing.assert_array_equal(quiver.read_tensor_column(out), data)


def test_table_to_tensor_takes_device_streams(tmp_path, cli):
    from test_table_tensor import write_table
    p = write_table(cli, tmp_path / "n.arrow", [("a", "i32"), ("b", "f64")],
                    [[[1, 2, 3], [0.5, 1.5, 2.5]]])
    want = np.array([[1, 0.5], [2, 1.5], [3, 2.5]])
    for cls in (DeviceOnly, Both):
        np.testing.assert_array_equal(quiver.table_to_tensor(cls(quiver.read_file(p))), want)
    with pytest.raises(quiver.NotSupportedError, match="CUDA"):
        quiver.table_to_tensor(FakeStream(p, CUDA))
    with pytest.raises(quiver.NotSupportedError, match="middle of a stream"):
        quiver.table_to_tensor(FakeStream(p, 1, n=2, bad=1))
    np.testing.assert_array_equal(quiver.table_to_tensor(FakeStream(p, 1, n=2)),
                                  np.concatenate([want, want]))


class FakeStream:
    """A device stream written here: `device_type` for the stream; its
    arrays are quiver's (one per inner stream), the one at `bad` relabelled
    as CUDA memory."""

    def __init__(self, path, device_type, n=2, bad=None):
        self.inner_caps = [quiver.read_stream(path).__arrow_c_device_stream__() for _ in range(n)]
        self.inner = [device_stream(c) for c in self.inner_caps]
        self.bad = bad
        self.next = 0
        self.released = 0
        self.callbacks = (GET_SCHEMA(self._schema), GET_NEXT(self._next), GET_ERROR(self._error),
                          STREAM_RELEASE(self._release))
        self.struct = ArrowDeviceArrayStream(device_type, *self.callbacks, None)

    def _schema(self, s, out):
        first = self.inner[0]
        return first.get_schema(ctypes.pointer(first), out)

    def _next(self, s, out):
        if self.next == len(self.inner):
            out.contents.array.release = None
            return 0
        inner = self.inner[self.next]
        code = inner.get_next(ctypes.pointer(inner), out)
        if self.next == self.bad:
            out.contents.device_type = CUDA
            out.contents.device_id = 0
        self.next += 1
        return code

    def _error(self, s):
        return None

    def _release(self, s):
        self.released += 1
        s.contents.release = ctypes.cast(0, STREAM_RELEASE)

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return capsule_new(ctypes.addressof(self.struct), STREAM_NAME, None)


def test_cpu_device_stream_written_here(table, tmp_path):
    path, data = table
    fake = FakeStream(path, 1)
    out = str(tmp_path / "out.arrows")
    quiver.write_stream(out, fake)
    assert fake.next == 2 and fake.released == 1
    cells = quiver.read_tensor_column(out)
    np.testing.assert_array_equal(cells, np.concatenate([data, data]))


def test_non_cpu_device_stream_refused(table, tmp_path):
    fake = FakeStream(table[0], CUDA)
    out = tmp_path / "out.arrows"
    with pytest.raises(quiver.NotSupportedError, match="CUDA") as e:
        quiver.write_stream(str(out), fake)
    assert isinstance(e.value, ValueError)
    assert fake.next == 0 and fake.released == 0  # not taken: the producer releases it
    assert not out.exists()


def test_non_cpu_array_mid_stream_refused(table, tmp_path):
    fake = FakeStream(table[0], 1, n=2, bad=1)
    out = tmp_path / "out.arrows"
    with pytest.raises(quiver.NotSupportedError, match="middle of a stream"):
        quiver.write_stream(str(out), fake)
    assert fake.next == 2
    gc.collect()
    assert fake.released == 1
    assert not out.exists()


class FakeArray:
    """A producer of one device array (quiver's first batch), on `device_type`."""

    def __init__(self, path, device_type):
        self.reader = quiver.read_stream(path)
        cap = self.reader.__arrow_c_device_stream__()
        s = device_stream(cap)
        self.struct = ArrowDeviceArray()
        assert s.get_next(ctypes.pointer(s), ctypes.pointer(self.struct)) == 0
        self.struct.device_type = device_type
        self.struct.device_id = -1 if device_type == 1 else 0

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return (self.reader.__arrow_c_schema__(),
                capsule_new(ctypes.addressof(self.struct), ARRAY_NAME, None))


def test_device_array_producers(table, tmp_path):
    path, data = table
    cpu = FakeArray(path, 1)
    out = str(tmp_path / "a.arrow")
    quiver.write_file(out, cpu)
    assert not cpu.struct.array.release  # moved into the writer, which released it
    np.testing.assert_array_equal(quiver.read_tensor_column(out), data)
    gpu = FakeArray(path, CUDA)
    with pytest.raises(quiver.NotSupportedError, match="device type 2 \\(CUDA\\)"):
        quiver.write_file(str(tmp_path / "b.arrow"), gpu)
    assert gpu.struct.array.release  # refused: still the producer's
    release_array(gpu.struct.array)
    assert not (tmp_path / "b.arrow").exists()


def test_capsule_conversions(table):
    r = quiver.read_stream(table[0])
    cap = r.__arrow_c_device_stream__()
    plain = _quiver._device_stream_to_cpu(cap)
    assert capsule_name(plain) == b"arrow_array_stream"
    with pytest.raises(ValueError, match="consumed"):
        _quiver._device_stream_to_cpu(cap)
    again = _quiver._device_stream(plain)
    assert capsule_name(again) == STREAM_NAME
    with pytest.raises(ValueError, match="consumed"):
        _quiver._device_stream(plain)
    with pytest.raises(ValueError):
        _quiver._device_stream_to_cpu(plain)  # wrong capsule name
    # one array through both directions
    fa = FakeArray(table[0], 1)
    schema, dev = fa.__arrow_c_device_array__()
    arr = _quiver._device_array_to_cpu(dev)
    assert capsule_name(arr) == b"arrow_array"
    dev2 = _quiver._device_array(arr)
    d = ArrowDeviceArray.from_address(capsule_pointer(dev2, ARRAY_NAME))
    assert d.device_type == 1 and d.device_id == -1 and not d.sync_event
    np.testing.assert_array_equal(values_of(d.array), table[1])
    with pytest.raises(ValueError, match="consumed"):
        _quiver._device_array(arr)
    del dev2
    gc.collect()


def test_no_leak_over_10000_device_streams(table):
    import io
    from test_tensor import assert_no_growth
    r = quiver.read_stream(table[0])
    blob = open(table[0], "rb").read()

    def cycle():
        for i in range(1000):
            cap = r.__arrow_c_device_stream__()
            s = device_stream(cap)
            d = ArrowDeviceArray()
            assert s.get_next(ctypes.pointer(s), ctypes.pointer(d)) == 0
            del cap, s  # the array outlives its stream
            release_array(d.array)
            if i % 10 == 0:
                quiver.write_stream(io.BytesIO(), DeviceOnly(quiver.read_stream(blob)))

    assert_no_growth(cycle, "10,000")
