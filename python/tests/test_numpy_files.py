"""quiver.read_npy / write_npy / read_npz / write_npz against NumPy's and
SciPy's own readers and writers."""
import gc
import io

import numpy as np
import pytest
import scipy.sparse as sp

import quiver


def _npy_bytes(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


@pytest.mark.parametrize("dtype", ["i1", "u2", "i4", "u8", "f2", "f4", "f8"])
def test_npy_both_ways(tmp_path, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    for arr in (a, np.asfortranarray(a), a[:, ::2]):
        p = tmp_path / "a.npy"
        quiver.write_npy(str(p), arr)
        back = np.load(p)
        assert back.dtype == arr.dtype and np.array_equal(back, arr)
        got = quiver.read_npy(_npy_bytes(arr))
        assert got.dtype == arr.dtype and np.array_equal(got, arr)
    quiver.write_npy(str(tmp_path / "c.npy"), np.asfortranarray(a), c_order=True)
    back = np.load(tmp_path / "c.npy")
    assert back.flags.c_contiguous and np.array_equal(back, a)


def test_read_npy_views_the_buffer_and_keeps_fortran_order():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    data = _npy_bytes(a)
    lo = np.frombuffer(data, np.uint8).ctypes.data
    got = quiver.read_npy(data)
    assert lo <= got.ctypes.data < lo + len(data)  # zero-copy
    assert got.flags.f_contiguous and not got.flags.writeable
    assert np.array_equal(got, a)
    del data
    gc.collect()
    assert np.array_equal(got, a)  # the array keeps the buffer alive


def test_read_npy_paths_file_objects_and_big_endian(tmp_path):
    a = np.arange(10, dtype=">f8")
    p = tmp_path / "be.npy"
    np.save(p, a)
    got = quiver.read_npy(str(p))
    assert got.dtype == np.float64 and got.dtype.isnative and np.array_equal(got, a)
    with open(p, "rb") as f:
        assert np.array_equal(quiver.read_npy(f), a)
    out = io.BytesIO()
    quiver.write_npy(out, np.ones(3, np.int16))
    assert np.array_equal(np.load(io.BytesIO(out.getvalue())), np.ones(3, np.int16))


def test_npy_refusals(tmp_path):
    with pytest.raises(quiver.InvalidError):
        quiver.read_npy(_npy_bytes(np.arange(100.0))[:-8])  # shorter than its shape
    with pytest.raises(ValueError):
        quiver.read_npy(_npy_bytes(np.array([True, False])))  # bool is not a tensor type
    with pytest.raises(ValueError):
        quiver.read_npy(b"not a numpy file at all")
    with pytest.raises(quiver.NotSupportedError):
        quiver.write_npy(str(tmp_path / "x.npy"), np.array(["a"]))
    assert not (tmp_path / "x.npy").exists()


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("compressed", [True, False])
def test_npz_both_ways(tmp_path, fmt, compressed):
    m = sp.random(30, 20, density=0.2, format=fmt, dtype=np.float64, random_state=1)
    p = tmp_path / "m.npz"
    quiver.write_npz(str(p), m, compressed=compressed)
    back = sp.load_npz(p)
    assert back.format == fmt and (back != m).nnz == 0
    q = tmp_path / "s.npz"
    sp.save_npz(q, m, compressed=compressed)
    got = quiver.read_npz(str(q))
    assert got.format == fmt and got.shape == m.shape and (got != m).nnz == 0
    with open(q, "rb") as f:
        assert (quiver.read_npz(f) != m).nnz == 0


def test_npz_refusals(tmp_path):
    q = tmp_path / "s.npz"
    sp.save_npz(q, sp.eye(4, format="csr"))
    data = q.read_bytes()
    with pytest.raises(ValueError):
        quiver.read_npz(data[: len(data) // 2])
    with pytest.raises(ValueError):
        quiver.read_npz(_npy_bytes(np.ones(3)))
    with pytest.raises(ValueError):
        quiver.write_npz(str(tmp_path / "x.npz"), np.ones((2, 2, 2)))  # 3-D: not for save_npz
    assert not (tmp_path / "x.npz").exists()
