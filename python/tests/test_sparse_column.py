"""quiver.read_sparse_column / write_sparse_column / migrate: sparse columns
(quiver.sparse_vector, quiver.sparse_tensor) with SciPy, PyData Sparse and
torch.sparse on both sides; same-address checks for every zero-copy claim
(arrays inside the buffer the table was read from); migrate to a table and
back from messages written here."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import quiver


def _inside(arr, buf):
    base = np.frombuffer(buf, dtype=np.uint8).ctypes.data
    p = arr.ctypes.data
    return base <= p and p + arr.nbytes <= base + len(buf)


def _matrix(seed=3, shape=(6, 9), dtype=np.float64):
    m = sp.random(*shape, density=0.3, format="csr", random_state=seed, dtype=dtype)
    m.indices = m.indices.astype(np.int32)
    m.indptr = m.indptr.astype(np.int32)
    return m


def test_vector_column_is_one_csr_matrix_viewing_the_buffer(tmp_path):
    m = _matrix()
    path = tmp_path / "v.arrows"
    quiver.write_sparse_column(str(path), m, name="emb")
    buf = path.read_bytes()
    r = quiver.read_sparse_column(buf)
    assert isinstance(r, sp.csr_matrix)
    assert r.shape == m.shape and (r != m).nnz == 0
    # zero-copy: indptr is the list offsets, indices and data the children
    for a in (r.indptr, r.indices, r.data):
        assert _inside(a, buf)
    assert not r.data.flags.writeable
    r2 = quiver.read_sparse_column(str(path), column="emb")
    assert (r2 != m).nnz == 0
    # a file too, with a null-free second column name lookup failing clearly
    quiver.write_sparse_column(str(tmp_path / "f.arrow"), m, file=True)
    assert (tmp_path / "f.arrow").read_bytes()[:6] == b"ARROW1"
    assert (quiver.read_sparse_column(str(tmp_path / "f.arrow")) != m).nnz == 0
    with pytest.raises(quiver.InvalidError, match="no column named 'x'"):
        quiver.read_sparse_column(buf, column="x")


def test_other_formats_become_csr_rows(tmp_path):
    m = _matrix(5)
    for other in (m.tocoo(), m.tocsc()):
        quiver.write_sparse_column(str(tmp_path / "o.arrows"), other)
        r = quiver.read_sparse_column(str(tmp_path / "o.arrows"))
        assert (r != m).nnz == 0


def test_tensor_column_one_matrix_per_row(tmp_path):
    a, b = _matrix(1, (3, 4)), _matrix(2, (5, 2))
    path = tmp_path / "t.arrows"
    quiver.write_sparse_column(str(path), [a, None, b], name="cells")
    buf = path.read_bytes()
    rows = quiver.read_sparse_column(buf)
    assert len(rows) == 3 and rows[1] is None
    assert isinstance(rows[0], sp.csr_matrix) and (rows[0] != a).nnz == 0
    assert rows[2].shape == (5, 2) and (rows[2] != b).nnz == 0
    for a_ in (rows[2].data, rows[2].indices):
        assert _inside(a_, buf)
    # N-d COO cells come back as quiver.SparseTensor
    x = np.zeros((2, 3, 4))
    x[1, 2, 3], x[0, 1, 0] = 5, -1
    quiver.write_sparse_column(str(path), [quiver.read_sparse(_sparse_bytes(tmp_path, x))])
    (cell,) = quiver.read_sparse_column(str(path))
    assert isinstance(cell, quiver.SparseTensor) and cell.shape == (2, 3, 4)
    np.testing.assert_array_equal(cell.to_dense(), x)
    with pytest.raises(ValueError, match="sparse-vector column"):
        quiver.write_sparse_column(str(path), cell)


def _sparse_bytes(tmp_path, dense):
    p = tmp_path / "x.arrow"
    quiver.write_sparse(str(p), dense)
    return str(p)


def test_pydata_sparse_both_ways(tmp_path):
    sparse = pytest.importorskip("sparse")
    m = _matrix(7)
    g = sparse.GCXS.from_scipy_sparse(m)
    path = tmp_path / "g.arrows"
    quiver.write_sparse_column(str(path), g)
    buf = path.read_bytes()
    r = quiver.read_sparse_column(buf, as_="sparse")
    assert isinstance(r, sparse.GCXS) and r.shape == m.shape
    np.testing.assert_array_equal(r.todense(), m.toarray())
    assert _inside(np.asarray(r.data), buf)
    c = sparse.COO.from_scipy_sparse(m)
    quiver.write_sparse_column(str(path), [c, c])
    rows = quiver.read_sparse_column(str(path), as_="sparse")
    assert all(isinstance(x, sparse.COO) for x in rows)
    np.testing.assert_array_equal(rows[1].todense(), m.toarray())
    # 3-D COO cells
    x = sparse.COO.from_numpy(np.arange(24.0).reshape(2, 3, 4) % 5 == 0) * 2.0
    quiver.write_sparse_column(str(path), [x])
    (y,) = quiver.read_sparse_column(str(path), as_="sparse")
    np.testing.assert_array_equal(y.todense(), x.todense())


def test_torch_sparse_both_ways(tmp_path):
    torch = pytest.importorskip("torch")
    m = _matrix(9)
    dense = torch.from_numpy(m.toarray())
    path = tmp_path / "t.arrows"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "sparse CSR support is in beta"
        csr = dense.to_sparse_csr()
        quiver.write_sparse_column(str(path), csr)
        r = quiver.read_sparse_column(str(path), as_="torch")
        assert r.layout == torch.sparse_csr
        assert torch.equal(r.to_dense(), dense)
        coo = dense.to_sparse()
        quiver.write_sparse_column(str(path), [coo, None])
        rows = quiver.read_sparse_column(str(path), as_="torch")
        assert rows[1] is None and rows[0].layout == torch.sparse_coo
        assert torch.equal(rows[0].to_dense(), dense)
        # torch gets its own writable copy, not quiver's read-only memory
        rows[0].values()[0] = 42.0
        assert quiver.read_sparse_column(str(path), as_="torch")[0].values()[0] != 42.0
    with pytest.raises(ValueError, match="as_"):
        quiver.read_sparse_column(str(path), as_="pandas")


def test_migrate_and_back(tmp_path):
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    msgs = tmp_path / "m.arrow"
    with open(msgs, "wb") as f:
        quiver.write_tensor(f, a, dim_names=["r", "c"])
        quiver.write_tensor(f, a * 2, dim_names=["r", "c"])
    table = tmp_path / "m.arrows"
    assert quiver.migrate(str(msgs), table) == [str(table)]
    cells = quiver.read_tensor_cells(str(table))
    np.testing.assert_array_equal(cells[1], a * 2)
    back = tmp_path / "b.arrow"
    quiver.migrate(str(table), str(back), to_messages=True)
    t = quiver.read_tensor(str(back), 1)
    np.testing.assert_array_equal(t, a * 2)
    assert quiver.read_tensor_info(str(back), 0)["dim_names"] == ("r", "c")
    # sparse messages: a quiver.sparse_tensor column, read as matrices
    m = _matrix(4)
    sp_msgs = tmp_path / "s.arrow"
    quiver.write_sparse(str(sp_msgs), m)
    quiver.migrate(str(sp_msgs), str(table), file=True)
    (cell,) = quiver.read_sparse_column(str(table))
    assert (cell != m).nnz == 0
    # groups: an error naming them, or one table per group
    mixed = tmp_path / "mixed.arrow"
    mixed.write_bytes(msgs.read_bytes() + sp_msgs.read_bytes())
    with pytest.raises(quiver.InvalidError, match="messages of 2 groups: tensor_float32_2d"):
        quiver.migrate(str(mixed), str(tmp_path / "x.arrows"))
    paths = quiver.migrate(str(mixed), str(tmp_path / "x.arrows"), split=True)
    assert [p.rsplit("/", 1)[1] for p in paths] == [
        "x.tensor_float32_2d.arrows", "x.csr_float64_int32_int32_2d.arrows"]
    with pytest.raises(quiver.CapacityError):
        quiver.migrate(str(msgs), str(tmp_path / "y.arrows"), max_output=16)


def _patched(buf, old, new):
    i = buf.find(old)
    assert i >= 0 and buf.find(old, i + 1) < 0, "the pattern must occur once"
    return buf[:i] + new + buf[i + len(old):]


@pytest.mark.parametrize("as_list", [False, True])
def test_read_checks_every_rule_once_and_refuses_lies(tmp_path, as_list):
    # the reader makes only the cheap checks; the sparse column is then
    # checked in full (one pass): a lying index is still refused, naming the
    # row (and, for a vector column, the element)
    size = 1000000
    m = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0, 5.0]),
                       np.array([5, 987654, 10, 999, 3], dtype=np.int32),
                       np.array([0, 2, 4, 5], dtype=np.int32)), shape=(3, size))
    path = tmp_path / "v.arrows"
    quiver.write_sparse_column(str(path), [m] if as_list else m)
    buf = path.read_bytes()
    assert (quiver.read_sparse_column(buf)[0] if as_list else quiver.read_sparse_column(buf)).nnz == 5
    marker = np.int32(987654).tobytes()
    out = _patched(buf, marker, np.int32(1500000).tobytes())
    unsorted = _patched(buf, marker, np.int32(1).tobytes())
    if as_list:
        with pytest.raises(quiver.InvalidError, match="row 0:.*out of range"):
            quiver.read_sparse_column(out)
        with pytest.raises(quiver.InvalidError, match="row 0:.*not sorted"):
            quiver.read_sparse_column(unsorted)
    else:
        with pytest.raises(quiver.InvalidError,
                           match=r"row 0 element 1: index 1500000 is outside \[0, 1000000\)"):
            quiver.read_sparse_column(out)
        with pytest.raises(quiver.InvalidError, match="row 0 element 1: index 1 after 5"):
            quiver.read_sparse_column(unsorted)


def test_migrate_file_objects_and_buffers(tmp_path):
    import io

    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    msgs = tmp_path / "m.arrow"
    with open(msgs, "wb") as f:
        quiver.write_tensor(f, a)
        quiver.write_tensor(f, a + 1)
    ref = tmp_path / "ref.arrows"
    quiver.migrate(msgs, ref)  # a PathLike dest, as before
    want = ref.read_bytes()
    raw = msgs.read_bytes()
    # sources as the readers take them: a path, bytes, a memoryview, a file object
    for source in (str(msgs), raw, memoryview(raw), open(msgs, "rb")):
        out = io.BytesIO()
        assert quiver.migrate(source, out) == [out]
        assert out.getvalue() == want
    # a bytearray dest: the output appended
    buf = bytearray(b"xy")
    assert quiver.migrate(raw, buf) == [buf]
    assert bytes(buf[:2]) == b"xy" and bytes(buf[2:]) == want
    # a real file object, in the file format
    with open(tmp_path / "f.arrow", "wb") as f:
        quiver.migrate(raw, f, file=True)
    np.testing.assert_array_equal(quiver.read_tensor_cells(str(tmp_path / "f.arrow"))[1], a + 1)
    # and back to messages through a file object
    back = io.BytesIO()
    quiver.migrate(want, back, to_messages=True)
    np.testing.assert_array_equal(quiver.read_tensor(back.getvalue(), 1), a + 1)
    # split writes one file per group: a path only
    with pytest.raises(TypeError, match="split writes one file per group"):
        quiver.migrate(raw, io.BytesIO(), split=True)
    # errors: quiver's (a non-Arrow source), and the file object's own
    with pytest.raises(quiver.InvalidError):
        quiver.migrate(b"not arrow at all", io.BytesIO())

    class Full(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise OSError(28, "no space left (test)")

    with pytest.raises(OSError, match="no space left"):
        quiver.migrate(raw, Full())
    with pytest.raises(TypeError):
        quiver.migrate(raw, 42)
