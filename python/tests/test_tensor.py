"""Dense tensors: bit-exact round trips of every dtype and layout, zero-copy,
lifetimes, leaks, DLPack, errors."""
import gc
import io
import os
import resource
import tracemalloc

import numpy as np
import pytest

import quiver

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]


def bits(a):
    """The array's values as unsigned integers of the same width (NaN payloads, -0.0 kept)."""
    return np.ascontiguousarray(a).view("u%d" % a.dtype.itemsize)


def sample(dtype, shape):
    rng = np.random.default_rng(7)
    n = int(np.prod(shape))
    raw = rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def layouts(base):
    """Views of a 3-D array in every layout NumPy can make."""
    yield "c", base
    yield "f", np.asfortranarray(base)
    yield "transposed", base.transpose(2, 0, 1)
    yield "sliced", base[::2, 1:, ::3]
    yield "reversed", base[::-1, :, ::-1]
    yield "broadcast", np.broadcast_to(base[:1], base.shape)
    yield "empty", base[:, :0]
    yield "0-d", base[0, 0, 0][()] if False else np.array(base[0, 0, 0])
    yield "1-d", base.reshape(-1)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_and_layout_round_trips_bit_exactly(tmp_path, dtype):
    base = sample(dtype, (4, 5, 6))
    for name, a in layouts(base):
        path = tmp_path / ("t_%s.arrow" % name)
        quiver.write_tensor(path, a)
        b = quiver.read_tensor(path)
        assert b.dtype == a.dtype and b.shape == a.shape, name
        assert np.array_equal(bits(b), bits(a)), name
        # and through a file object and bytes
        f = io.BytesIO()
        quiver.write_tensor(f, a)
        c = quiver.read_tensor(f.getvalue())
        assert np.array_equal(bits(c), bits(a)), name


def test_layouts_are_preserved(tmp_path):
    a = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    quiver.write_tensor(tmp_path / "f.arrow", a)
    b = quiver.read_tensor(tmp_path / "f.arrow")
    assert b.flags["F_CONTIGUOUS"] and not b.flags["C_CONTIGUOUS"]
    assert b.strides == a.strides
    info = quiver.read_tensor_info(tmp_path / "f.arrow")
    assert info["layout"] == "column-major" and info["strides"] == (8, 24)
    assert info["shape"] == (3, 4) and info["dtype"] == np.float64 and info["type"] == "float64"


def test_dim_names(tmp_path):
    a = np.zeros((2, 3), np.int32)
    quiver.write_tensor(tmp_path / "n.arrow", a, dim_names=["rows", "cols"])
    assert quiver.read_tensor_info(tmp_path / "n.arrow")["dim_names"] == ("rows", "cols")
    assert quiver.read_tensor_object(tmp_path / "n.arrow").dim_names == ("rows", "cols")
    quiver.write_tensor(tmp_path / "u.arrow", a)
    assert quiver.read_tensor_info(tmp_path / "u.arrow")["dim_names"] is None
    with pytest.raises(ValueError):
        quiver.write_tensor(tmp_path / "x.arrow", a, dim_names=["one"])


def test_several_tensors_by_index(tmp_path):
    f = io.BytesIO()
    for k in range(3):
        quiver.write_tensor(f, np.full((2,), k, np.int16))
    data = f.getvalue()
    for k in range(3):
        assert quiver.read_tensor(data, index=k).tolist() == [k, k]
    with pytest.raises(quiver.InvalidError):
        quiver.read_tensor(data, index=3)


def mappings_of(path):
    """Address ranges of /proc/self/maps entries mapping `path`."""
    path = os.path.realpath(str(path))
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == path:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def test_zero_copy_from_a_mapped_file(tmp_path):
    a = np.arange(1 << 16, dtype=np.float64)
    path = tmp_path / "big.arrow"
    quiver.write_tensor(path, a)
    b = quiver.read_tensor(path)
    addr = b.ctypes.data
    assert any(lo <= addr < hi for lo, hi in mappings_of(path)), "data is not in the file mapping"
    assert addr % 64 == 0
    assert not b.flags["WRITEABLE"]
    assert isinstance(b.base, quiver.Tensor)


def test_zero_copy_from_a_caller_buffer():
    f = io.BytesIO()
    quiver.write_tensor(f, np.arange(100, dtype=np.int32))
    buf = bytearray(f.getvalue())
    base = np.frombuffer(buf, np.uint8).ctypes.data
    b = quiver.read_tensor(buf)
    assert base <= b.ctypes.data < base + len(buf)
    # the view is of these very bytes
    mv = memoryview(buf)
    c = quiver.read_tensor(mv)
    assert c.ctypes.data == b.ctypes.data


def test_dlpack_is_zero_copy(tmp_path):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    quiver.write_tensor(tmp_path / "d.arrow", np.asfortranarray(a))
    t = quiver.read_tensor_object(tmp_path / "d.arrow")
    assert t.__dlpack_device__() == (1, 0)
    d = np.from_dlpack(t)
    view = t.to_numpy()
    assert d.ctypes.data == view.ctypes.data and d.strides == view.strides
    assert np.array_equal(d, a)
    del t, view
    gc.collect()
    assert np.array_equal(d, a)  # the capsule keeps the mapping
    # the array read_tensor returns hands it out through its base
    e = np.from_dlpack(quiver.read_tensor(tmp_path / "d.arrow").base)  # type: ignore[arg-type]
    assert np.array_equal(e, a)


def test_dlpack_holds_the_callers_buffer():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    f = io.BytesIO()
    quiver.write_tensor(f, a)
    buf = bytearray(f.getvalue())
    t = quiver.read_tensor_object(buf)
    d = np.from_dlpack(t)
    del t
    gc.collect()
    assert np.array_equal(d, a)
    with pytest.raises(BufferError):  # the export still holds the buffer
        buf.extend(b"x")
    del d
    gc.collect()
    buf.extend(b"x")  # released with the last view
    # an empty tensor exports too
    f = io.BytesIO()
    quiver.write_tensor(f, np.zeros((0, 3), np.int16))
    e = np.from_dlpack(quiver.read_tensor_object(f.getvalue()))
    assert e.shape == (0, 3) and e.dtype == np.int16


def test_array_outlives_file_object_and_reader(tmp_path):
    a = np.arange(1000, dtype=np.uint16)
    quiver.write_tensor(tmp_path / "l.arrow", a)
    with open(tmp_path / "l.arrow", "rb") as f:
        b = quiver.read_tensor(f)
    data = bytes(bytearray(io.BytesIO(open(tmp_path / "l.arrow", "rb").read()).getvalue()))
    c = quiver.read_tensor(data)
    d = quiver.read_tensor(tmp_path / "l.arrow")
    del data, f
    os.unlink(tmp_path / "l.arrow")  # the mapping stays valid
    gc.collect()
    for x in (b, c, d):
        assert np.array_equal(x, a)


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def assert_no_growth(cycle, reads):
    """cycle() once to warm up, then ten times: neither Python's allocations nor the RSS may
    grow."""
    cycle()
    gc.collect()
    tracemalloc.start()
    rss0 = rss_kib()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(10):
        cycle()
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    assert grown < 64 * 1024, "Python allocations grew by %d bytes" % grown
    assert rss_kib() - rss0 < 4096, "RSS grew by %d KiB over %s reads" % (rss_kib() - rss0, reads)


def test_no_leak_over_10000_reads(tmp_path):
    path = tmp_path / "leak.arrow"
    quiver.write_tensor(path, np.arange(4096, dtype=np.float64))
    blob = path.read_bytes()

    def cycle():
        for _ in range(1000):
            a = quiver.read_tensor(path)
            b = quiver.read_tensor(blob)
            float(a[-1] + b[-1])

    assert_no_growth(cycle, "20,000")


def test_errors_are_quiver_exceptions(tmp_path):
    with pytest.raises(quiver.InputOutputError) as e:
        quiver.read_tensor(tmp_path / "missing.arrow")
    assert isinstance(e.value, OSError) and "missing.arrow" in str(e.value)
    for bad in (b"", b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\0" * 16, b"garbage!" * 10):
        with pytest.raises(quiver.Error) as e:  # type: ignore[assignment]
            quiver.read_tensor(bad)
        assert isinstance(e.value, ValueError)
    with pytest.raises(quiver.NotSupportedError):
        quiver.write_tensor(io.BytesIO(), np.zeros(3, bool))
    with pytest.raises(quiver.NotSupportedError):
        # (a non-native byte order is swapped on write since #24: test_rough_edges)
        quiver.write_tensor(io.BytesIO(), np.zeros(3, "c16"))
    with pytest.raises(TypeError):
        quiver.read_tensor(12)
    sparse = io.BytesIO()
    quiver.write_sparse(sparse, np.eye(3))
    with pytest.raises(quiver.InvalidError, match="SparseTensor, not a Tensor"):
        quiver.read_tensor(sparse.getvalue())


def test_failed_write_keeps_target_and_file_object_errors_propagate(tmp_path):
    target = tmp_path / "keep.arrow"
    target.write_bytes(b"old")

    class Broken:
        def write(self, b):
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        quiver.write_tensor(Broken(), np.zeros(10))
    with pytest.raises(quiver.InputOutputError):
        quiver.write_tensor(tmp_path / "no-such-dir" / "x.arrow", np.zeros(3))
    assert target.read_bytes() == b"old"


def test_write_back_to_the_same_path(tmp_path):
    path = tmp_path / "same.arrow"
    quiver.write_tensor(path, np.arange(10.0))
    a = quiver.read_tensor(path)
    quiver.write_tensor(path, a * 2)
    assert np.array_equal(a, np.arange(10.0))
    assert np.array_equal(quiver.read_tensor(path), np.arange(10.0) * 2)
