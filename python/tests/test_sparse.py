"""Sparse tensors: SciPy matrices of every format and index dtype round-trip,
zero-copy index and value arrays, N-d COO and CSF, dense <-> sparse in C."""
import gc
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp

import quiver

VALUE_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                np.uint64, np.float32, np.float64]
SCIPY_FORMATS = ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"]


def matrix(fmt, dtype, idx=np.int32, shape=(30, 20), density=0.2):
    rng = np.random.default_rng(3)
    m = sp.random(*shape, density=density, format="coo", random_state=4)
    m.data = (rng.integers(1, 100, size=m.nnz)).astype(dtype)
    m = m.asformat(fmt)
    for attr in ("indices", "indptr", "row", "col"):
        if hasattr(m, attr) and isinstance(getattr(m, attr), np.ndarray):
            setattr(m, attr, getattr(m, attr).astype(idx))
    return m


@pytest.mark.parametrize("fmt", SCIPY_FORMATS)
@pytest.mark.parametrize("idx", [np.int32, np.int64], ids=["int32", "int64"])
def test_every_scipy_format_and_index_dtype_round_trips(fmt, idx):
    for dtype in VALUE_DTYPES:
        m = matrix(fmt, dtype, idx)
        f = io.BytesIO()
        quiver.write_sparse(f, m)
        r = quiver.read_sparse(f.getvalue())
        want = fmt if fmt in ("csr", "csc", "coo") else "csr"
        assert r.format == want and r.dtype == dtype and r.shape == m.shape
        assert np.array_equal(r.toarray(), m.toarray())
        if fmt in ("csr", "csc"):
            assert r.indices.dtype == idx and r.indptr.dtype == idx
        if fmt == "coo":
            assert r.row.dtype == idx


@pytest.mark.parametrize("index_type", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                        "uint32", "uint64"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_every_quiver_index_type(index_type, fmt):
    m = matrix("csr", np.float64, shape=(10, 12))  # nnz fits int8
    f = io.BytesIO()
    quiver.write_sparse(f, m, format=fmt, index_type=index_type)
    info = next(quiver.messages(f.getvalue()))
    assert info["format"] == fmt and info["nnz"] == m.nnz
    r = quiver.read_sparse(f.getvalue())
    assert r.format == fmt and np.array_equal(r.toarray(), m.toarray())


def test_unsorted_and_duplicate_csr_is_canonicalised():
    m = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3, 3])),
                      shape=(2, 3))
    f = io.BytesIO()
    quiver.write_sparse(f, m)
    r = quiver.read_sparse(f.getvalue())
    assert np.array_equal(r.toarray(), m.toarray()) and r.nnz == 2
    assert m.nnz == 3  # the caller's matrix is left alone


def address_in(a, lo, hi):
    return lo <= a.ctypes.data < hi


def test_csr_arrays_are_views_of_the_file(tmp_path):
    m = matrix("csr", np.float64, np.int64, shape=(300, 200))
    path = tmp_path / "m.arrow"
    quiver.write_sparse(path, m)
    r = quiver.read_sparse(path)
    from test_tensor import mappings_of
    maps = mappings_of(path)
    for arr in (r.data, r.indices, r.indptr):
        assert any(lo <= arr.ctypes.data < hi for lo, hi in maps)
    blob = bytearray(path.read_bytes())
    lo = np.frombuffer(blob, np.uint8).ctypes.data
    for fmt, idx in (("csr", np.int32), ("csc", np.int64), ("coo", np.int64)):
        f = io.BytesIO()
        quiver.write_sparse(f, matrix(fmt, np.float32, idx))
        blob = bytearray(f.getvalue())
        lo = np.frombuffer(blob, np.uint8).ctypes.data
        r = quiver.read_sparse(blob)
        arrays = [r.data] + ([r.row, r.col] if fmt == "coo" else [r.indices, r.indptr])
        for arr in arrays:
            assert address_in(arr, lo, lo + len(blob)), fmt


def test_matrix_outlives_reader_and_buffer(tmp_path):
    m = matrix("csc", np.int32)
    path = tmp_path / "o.arrow"
    quiver.write_sparse(path, m)
    r = quiver.read_sparse(path)
    os.unlink(path)
    gc.collect()
    assert np.array_equal(r.toarray(), m.toarray())
    assert np.array_equal((r @ np.ones(20, np.int32)), m @ np.ones(20, np.int32))


def test_nd_coo_and_csf(tmp_path):
    rng = np.random.default_rng(1)
    dense = rng.integers(0, 5, size=(4, 3, 5, 2)).astype(np.float32)
    dense[dense < 3] = 0
    for fmt in ("coo", "csf"):
        path = tmp_path / (fmt + ".arrow")
        quiver.write_sparse(path, dense, format=fmt, index_type=np.int16)
        t = quiver.read_sparse(path)
        assert isinstance(t, quiver.SparseTensor) and t.format == fmt
        assert t.shape == dense.shape and t.nnz == np.count_nonzero(dense)
        assert np.array_equal(t.to_dense(), dense)
        coo = t.to_coo()
        assert coo.format == "coo" and coo.indices.shape == (t.nnz, 4)
        assert np.array_equal(dense[tuple(coo.indices.T)], coo.data)
        if fmt == "csf":
            assert len(t.indptr) == 3 and len(t.indices) == 4 and t.axis_order == (0, 1, 2, 3)
        # a SparseTensor is written back as it is
        f = io.BytesIO()
        quiver.write_sparse(f, t)
        assert np.array_equal(quiver.read_sparse(f.getvalue()).to_dense(), dense)
    t = quiver.SparseTensor(quiver._quiver._sparse_from_dense(dense, "csf", None, [3, 1, 0, 2]))
    assert t.axis_order == (3, 1, 0, 2) and np.array_equal(t.to_dense(), dense)


def test_dense_to_sparse_in_c_every_format():
    dense = np.zeros((6, 7), np.float64)
    dense[1, 2] = 1.5
    dense[5, 0] = -2
    for fmt in ("coo", "csr", "csc", "csf"):
        f = io.BytesIO()
        quiver.write_sparse(f, np.asfortranarray(dense), format=fmt)
        r = quiver.read_sparse(f.getvalue())
        out = r.to_dense() if isinstance(r, quiver.SparseTensor) else r.toarray()
        assert np.array_equal(out, dense), fmt


def test_float16_values_become_a_sparse_tensor():
    dense = np.zeros((3, 3), np.float16)
    dense[0, 1] = 0.5
    f = io.BytesIO()
    quiver.write_sparse(f, dense, format="csr")
    t = quiver.read_sparse(f.getvalue())
    assert isinstance(t, quiver.SparseTensor) and t.dtype == np.float16
    assert t.to_scipy().dtype == np.float32
    assert np.array_equal(t.to_scipy().toarray(), dense.astype(np.float32))


def test_sparse_errors():
    with pytest.raises(quiver.InvalidError, match="index type int8"):
        quiver.write_sparse(io.BytesIO(), sp.eye(300, format="csr"), index_type=np.int8)
    with pytest.raises(quiver.NotSupportedError):
        quiver.write_sparse(io.BytesIO(), sp.eye(3, format="csr", dtype=bool))
    with pytest.raises(ValueError):
        quiver.write_sparse(io.BytesIO(), sp.eye(3, format="csr"), format="bogus")
    f = io.BytesIO()
    quiver.write_tensor(f, np.eye(2))
    with pytest.raises(quiver.InvalidError, match="not a SparseTensor"):
        quiver.read_sparse(f.getvalue())


def test_no_leak_over_10000_sparse_reads(tmp_path):
    from test_tensor import assert_no_growth
    path = tmp_path / "leak.arrow"
    quiver.write_sparse(path, matrix("csr", np.float64, np.int64))
    blob = path.read_bytes()

    def cycle():
        for _ in range(500):
            quiver.read_sparse(path).data.sum()
            quiver.read_sparse(blob, 0).indices.sum()

    assert_no_growth(cycle, "10,000")
