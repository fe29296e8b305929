"""DLPack 1.x and 0.6 both ways, PyTorch (Debian's python3-torch), and the
array protocols of quiver.Tensor: same-address checks for every zero-copy
claim, the read-only and copied flags of versioned capsules, hostile
capsules (consumed, negative strides, lying shapes, unknown devices) raising
ValueError/BufferError subclasses, and torch sparse tensors both ways."""
import ctypes
import gc
import io

import numpy as np
import pytest

import quiver


def tensor_bytes(a, **kw):
    buf = io.BytesIO()
    quiver.write_tensor(buf, a, **kw)
    return buf.getvalue()


def inside(addr, blob):
    base = np.frombuffer(blob, np.uint8).ctypes.data
    return base <= addr < base + len(blob)


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def test_versioned_and_legacy_capsules():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    blob = tensor_bytes(a)
    t = quiver.read_tensor_object(blob)
    legacy = t.__dlpack__()
    assert _get_name(legacy) == b"dltensor"
    v = t.__dlpack__(max_version=(1, 0))
    assert _get_name(v) == b"dltensor_versioned"
    ptr = _get_pointer(v, b"dltensor_versioned")
    major, minor = ctypes.c_uint32.from_address(ptr).value, ctypes.c_uint32.from_address(ptr + 4).value
    flags = ctypes.c_uint64.from_address(ptr + 24).value  # after version, manager_ctx, deleter
    data = ctypes.c_void_p.from_address(ptr + 32).value
    assert (major, minor) == (1, 0) and flags == 1  # READ_ONLY
    assert data == t.to_numpy().ctypes.data and inside(data, blob)
    assert _get_name(t.__dlpack__(max_version=(0, 8))) == b"dltensor"
    # copy=True: another buffer, writable (IS_COPIED, not READ_ONLY)
    c = t.__dlpack__(max_version=(1, 2), copy=True)
    cptr = _get_pointer(c, b"dltensor_versioned")
    assert ctypes.c_uint64.from_address(cptr + 24).value == 2
    assert not inside(ctypes.c_void_p.from_address(cptr + 32).value, blob)
    back = quiver.from_dlpack(c)
    assert np.array_equal(np.asarray(back), a)
    assert _get_name(c) == b"used_dltensor_versioned"
    # both capsule kinds import without a copy
    for cap in (t.__dlpack__(), t.__dlpack__(max_version=(1, 0))):
        q = quiver.from_dlpack(cap)
        assert np.asarray(q).ctypes.data == data and np.array_equal(np.asarray(q), a)
    assert t.__dlpack__(copy=False) is not None


def test_export_arguments():
    t = quiver.read_tensor_object(tensor_bytes(np.ones((2, 2))))
    assert t.__dlpack__(dl_device=(1, 0)) is not None
    for dev in [(2, 0), (1, 1), (13, 0)]:
        with pytest.raises(BufferError, match="CPU"):
            t.__dlpack__(dl_device=dev)
    with pytest.raises(BufferError):
        t.__dlpack__(stream=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        t.__dlpack__(max_version=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        t.__dlpack__(copy="yes")  # type: ignore[arg-type]


def test_from_dlpack_numpy_and_quiver():
    a = np.arange(20, dtype=np.int16).reshape(4, 5)
    q = quiver.from_dlpack(a)
    v = np.asarray(q)
    assert v.ctypes.data == a.ctypes.data and np.array_equal(v, a) and not v.flags.writeable
    del a
    gc.collect()
    assert v[3, 4] == 19  # the Tensor keeps the producer's memory
    # a sliced, strided producer
    b = np.arange(60, dtype=np.float64).reshape(6, 10)[1:5, ::3]
    q = quiver.from_dlpack(b)
    assert np.asarray(q).ctypes.data == b.ctypes.data and np.array_equal(np.asarray(q), b)
    # quiver's own
    t = quiver.read_tensor_object(tensor_bytes(np.eye(3)))
    assert np.asarray(quiver.from_dlpack(t)).ctypes.data == t.to_numpy().ctypes.data
    with pytest.raises(TypeError):
        quiver.from_dlpack([1, 2, 3])


def test_as_dlpack_is_the_one_call_path():
    blob = tensor_bytes(np.arange(8, dtype=np.uint32).reshape(2, 4))
    a = quiver.read_tensor(blob)
    with pytest.raises(BufferError):
        np.from_dlpack(a)  # NumPy 1.x refuses read-only arrays
    n = np.from_dlpack(quiver.as_dlpack(a))
    assert n.ctypes.data == a.ctypes.data and np.array_equal(n, a)
    s = a[:, 1:3]
    n = np.from_dlpack(quiver.as_dlpack(s))
    assert n.ctypes.data == s.ctypes.data and np.array_equal(n, s)
    t = quiver.as_dlpack(a)
    assert quiver.as_dlpack(t) is t
    del a, s
    gc.collect()
    assert np.asarray(t)[1, 3] == 7
    with pytest.raises(BufferError, match="negative strides"):
        quiver.as_dlpack(np.arange(4)[::-1])
    with pytest.raises(TypeError):
        quiver.as_dlpack([1, 2])


def test_write_tensor_takes_dlpack_producers(tmp_path):
    class Producer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    quiver.write_tensor(tmp_path / "p.arrow", Producer(a), dim_names=["r", "c"])
    assert np.array_equal(quiver.read_tensor(tmp_path / "p.arrow"), a)
    assert quiver.read_tensor_info(tmp_path / "p.arrow")["dim_names"] == ("r", "c")

    class OnGpu(Producer):
        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(BufferError, match="CPU"):
        quiver.write_tensor(tmp_path / "g.arrow", OnGpu(a))


# ---- hostile capsules, built with ctypes

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

deleted = []


@DELETER
def _record_delete(p):
    deleted.append(ctypes.addressof(p.contents))


def hostile(shape, strides=None, device=(1, 0), dtype=(2, 32, 1), data=True, keep=[]):
    """A dltensor capsule over a small buffer (kept alive in `keep`)."""
    buf = (ctypes.c_float * 16)()
    shp = (ctypes.c_int64 * len(shape))(*shape)
    st = (ctypes.c_int64 * len(strides))(*strides) if strides is not None else None
    m = DLManagedTensor()
    m.dl_tensor.data = ctypes.addressof(buf) if data else None
    m.dl_tensor.device = DLDevice(*device)
    m.dl_tensor.ndim = len(shape)
    m.dl_tensor.dtype = DLDataType(*dtype)
    m.dl_tensor.shape = shp
    m.dl_tensor.strides = st
    m.deleter = _record_delete
    keep.extend([buf, shp, st, m])
    return _capsule_new(ctypes.addressof(m), b"dltensor", None), ctypes.addressof(m)


def test_hostile_capsules_raise():
    cap, _ = hostile([2, 2])
    t = quiver.from_dlpack(cap)
    assert np.asarray(t).shape == (2, 2)
    with pytest.raises(quiver.InvalidError, match="already consumed"):
        quiver.from_dlpack(cap)
    bad = [
        (dict(shape=[2, 2], strides=[-1, 1]), "negative"),
        (dict(shape=[2, -3]), "negative"),
        (dict(shape=[2, 2], device=(2, 0)), "device"),
        (dict(shape=[2, 2], device=(99, 0)), "device"),
        (dict(shape=[2, 2], dtype=(5, 16, 1)), ""),      # complex? an unknown code
        (dict(shape=[2, 2], dtype=(2, 32, 4)), "lanes"),
        (dict(shape=[2, 2], data=False), "NULL"),
        (dict(shape=[1 << 40, 1 << 40]), ""),           # a size that overflows
        (dict(shape=[1] * 65), ""),                      # more dims than quiver has
    ]
    for kw, match in bad:
        cap, addr = hostile(**kw)  # type: ignore
        with pytest.raises((ValueError, BufferError), match=match):
            quiver.from_dlpack(cap)
        assert _get_name(cap) == b"dltensor", kw  # not consumed: the producer keeps it
    with pytest.raises(TypeError):
        quiver.from_dlpack(_capsule_new(ctypes.addressof((ctypes.c_int * 1)()), b"other", None))
    t = None  # type: ignore
    gc.collect()


def test_tensor_array_protocols():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    blob = tensor_bytes(a, dim_names=["x", "y", "z"])
    t = quiver.read_tensor_object(blob)
    assert t.dtype == np.int32 and t.ndim == 3 and t.nbytes == 96 and len(t) == 2
    assert repr(t) == "quiver.Tensor(int32, shape=(2, 3, 4), row-major, dim_names=('x', 'y', 'z'))"
    v = np.asarray(t)
    assert v.shape == (2, 3, 4) and not v.flags.writeable and inside(v.ctypes.data, blob)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    m = memoryview(t)  # type: ignore
    assert m.readonly and m.format == "i" and m.shape == (2, 3, 4) and m.nbytes == 96
    assert np.frombuffer(t, dtype=np.int32).ctypes.data == v.ctypes.data  # type: ignore
    with pytest.raises(TypeError, match="not writable"):
        ctypes.c_char.from_buffer(t)  # type: ignore  # asks for a writable buffer: refused
    f = quiver.read_tensor_object(tensor_bytes(np.asfortranarray(a[0])))
    assert "column-major" in repr(f) and memoryview(f).f_contiguous  # type: ignore
    s = quiver.read_tensor_object(tensor_bytes(np.float64(3)))
    with pytest.raises(TypeError):
        len(s)
    assert repr(quiver.read_tensor_object(tensor_bytes(np.zeros(5, np.float16)))) == \
        "quiver.Tensor(float16, shape=(5,), row-major)"


# ---- PyTorch

torch = pytest.importorskip("torch")


def test_torch_from_dlpack_same_address(tmp_path):
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    quiver.write_tensor(tmp_path / "t.arrow", a)
    t = quiver.read_tensor_object(tmp_path / "t.arrow")
    x = torch.from_dlpack(t)
    assert x.data_ptr() == t.to_numpy().ctypes.data and torch.equal(x, torch.from_numpy(a))
    arr = quiver.read_tensor(tmp_path / "t.arrow")
    y = torch.from_dlpack(quiver.as_dlpack(arr))
    assert y.data_ptr() == arr.ctypes.data
    del t, arr
    gc.collect()
    assert float(x[4, 5]) == 29 and float(y[4, 5]) == 29  # the capsules hold the mapping
    # a column-major tensor keeps its strides
    quiver.write_tensor(tmp_path / "f.arrow", np.asfortranarray(a))
    z = torch.from_dlpack(quiver.read_tensor_object(tmp_path / "f.arrow"))
    assert z.stride() == (1, 5) and torch.equal(z, torch.from_numpy(a))


@pytest.mark.parametrize("make", [
    lambda: torch.arange(24, dtype=torch.float64).reshape(4, 6),
    lambda: torch.arange(24, dtype=torch.int32).reshape(4, 6).T,
    lambda: torch.arange(60, dtype=torch.int16).reshape(6, 10)[1:5, 2:9:3],
    lambda: torch.arange(8, dtype=torch.uint8),
    lambda: torch.ones(2, 3, 4, dtype=torch.float16).permute(2, 0, 1),
])
def test_torch_tensors_to_arrow_and_back(tmp_path, make):
    x = make()
    q = quiver.from_dlpack(x)
    assert np.asarray(q).ctypes.data == x.data_ptr()  # imported without a copy
    quiver.write_tensor(tmp_path / "x.arrow", x)
    back = torch.from_dlpack(quiver.read_tensor_object(tmp_path / "x.arrow"))
    assert back.dtype == x.dtype and torch.equal(back, x)
    if x.ndim >= 2:
        quiver.write_tensor_column(tmp_path / "c.arrow", x)
        col = quiver.read_tensor_column(tmp_path / "c.arrow")
        assert torch.equal(torch.from_dlpack(quiver.as_dlpack(col)), x)


def test_torch_bad_exports():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        quiver.from_dlpack(x)  # torch's own refusal
    assert np.array_equal(np.asarray(quiver.from_dlpack(x.detach())), np.ones(3, np.float32))
    with pytest.raises((ValueError, TypeError, BufferError, RuntimeError)):
        quiver.from_dlpack(torch.ones(2, dtype=torch.bool))


def test_torch_sparse_both_ways(tmp_path):
    i = torch.tensor([[0, 1, 2, 2], [2, 0, 1, 3]])
    v = torch.tensor([3.0, 4.0, 5.0, 6.0])
    coo = torch.sparse_coo_tensor(i, v, (3, 4)).coalesce()
    quiver.write_sparse(tmp_path / "coo.arrow", coo)
    m = quiver.read_sparse(tmp_path / "coo.arrow")
    assert np.array_equal(m.toarray(), coo.to_dense().numpy())
    s = quiver.read_sparse_object(tmp_path / "coo.arrow")
    back = s.to_torch()
    assert back.layout == torch.sparse_coo and back.is_coalesced()
    assert torch.equal(back.to_dense(), coo.to_dense())
    assert back._values().data_ptr() == s.data.ctypes.data  # values viewed, not copied
    csr = coo.to_sparse_csr()
    quiver.write_sparse(tmp_path / "csr.arrow", csr)
    s = quiver.read_sparse_object(tmp_path / "csr.arrow")
    assert s.format == "csr"
    back = s.to_torch()
    assert back.layout == torch.sparse_csr and torch.equal(back.to_dense(), coo.to_dense())
    assert back.values().data_ptr() == s.data.ctypes.data
    # CSC and 3-d COO come back as torch COO
    quiver.write_sparse(tmp_path / "csc.arrow", coo, format="csc")
    back = quiver.read_sparse_object(tmp_path / "csc.arrow").to_torch()
    assert back.layout == torch.sparse_coo and torch.equal(back.to_dense(), coo.to_dense())
    d3 = torch.zeros(2, 3, 4)
    d3[1, 2, 3] = 7
    d3[0, 0, 1] = -1
    quiver.write_sparse(tmp_path / "d3.arrow", d3.to_sparse())
    back = quiver.read_sparse_object(tmp_path / "d3.arrow").to_torch()
    assert torch.equal(back.to_dense(), d3)
    # a dense torch tensor through DLPack, sparsified in C
    quiver.write_sparse(tmp_path / "dense.arrow", d3, format="csf")
    assert torch.equal(quiver.read_sparse_object(tmp_path / "dense.arrow").to_torch().to_dense(), d3)
