"""Sparse columns (quiver.sparse_tensor / quiver.sparse_vector, see
docs/sparse-tensor-extension.md) and ``quiver migrate`` for Python, with
SciPy, PyData Sparse and torch.sparse on either side."""

import os as _os

import numpy as _np

from . import _quiver

_AS = ("scipy", "sparse", "torch", "quiver")


def _pkg():
    from . import SparseTensor, _handle_from_scipy, _source, _wrap_sparse
    return SparseTensor, _handle_from_scipy, _source, _wrap_sparse


# ---- other libraries' sparse objects -> quiver._Sparse


def _is_pydata(obj):
    return type(obj).__module__.split(".")[0] == "sparse" and hasattr(obj, "nnz")


def _is_torch(obj):
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "layout")


def _row_major_unique(coords, shape):
    """Whether (ndim, nnz) coordinates are sorted row-major without duplicates."""
    if coords.shape[1] < 2:
        return True
    try:
        lin = _np.ravel_multi_index(tuple(coords), shape)
    except ValueError:  # a shape too large to linearize: not claimed
        return False
    return bool(_np.all(_np.diff(lin) > 0))


def _from_pydata(obj):
    import sparse

    if isinstance(obj, sparse.GCXS) and obj.ndim == 2 and tuple(obj.compressed_axes) in ((0,), (1,)):
        fmt = "csr" if tuple(obj.compressed_axes) == (0,) else "csc"
        m = _quiver._sparse_from_buffers(
            fmt, obj.shape, _np.ascontiguousarray(obj.data),
            indptr=_np.ascontiguousarray(obj.indptr), indices=_np.ascontiguousarray(obj.indices))
        return m
    coo = obj if isinstance(obj, sparse.COO) else obj.tocoo()
    canonical = _row_major_unique(coo.coords, coo.shape)
    return _quiver._sparse_from_buffers(
        "coo", coo.shape, _np.ascontiguousarray(coo.data),
        coords=_np.ascontiguousarray(coo.coords.T), is_canonical=canonical)


def _from_torch(t):
    import torch

    t = t.detach().cpu()
    if t.layout == torch.sparse_coo:
        canonical = bool(t.is_coalesced())
        return _quiver._sparse_from_buffers(
            "coo", tuple(t.shape), _np.ascontiguousarray(t._values().numpy()),
            coords=_np.ascontiguousarray(t._indices().numpy().T), is_canonical=canonical)
    if t.layout == torch.sparse_csr:
        return _quiver._sparse_from_buffers(
            "csr", tuple(t.shape), _np.ascontiguousarray(t.values().numpy()),
            indptr=_np.ascontiguousarray(t.crow_indices().numpy()),
            indices=_np.ascontiguousarray(t.col_indices().numpy()))
    if t.layout == torch.sparse_csc:
        return _quiver._sparse_from_buffers(
            "csc", tuple(t.shape), _np.ascontiguousarray(t.values().numpy()),
            indptr=_np.ascontiguousarray(t.ccol_indices().numpy()),
            indices=_np.ascontiguousarray(t.row_indices().numpy()))
    if t.layout == torch.strided:
        return _quiver._sparse_from_dense(t.numpy(), "coo", None)
    raise TypeError("torch layout %s is not supported (COO, CSR, CSC or dense)" % t.layout)


def _handle(obj):
    """A quiver._Sparse for any sparse object quiver accepts."""
    SparseTensor, _handle_from_scipy, _, _ = _pkg()
    if isinstance(obj, _quiver._Sparse):
        return obj
    if isinstance(obj, SparseTensor):
        return obj._handle
    if _is_torch(obj):
        return _from_torch(obj)
    if _is_pydata(obj):
        return _from_pydata(obj)
    if hasattr(obj, "tocsr") and hasattr(obj, "format") and hasattr(obj, "nnz"):
        return _handle_from_scipy(obj)
    return _quiver._sparse_from_dense(_np.asarray(obj), "coo", None)


# ---- quiver._Sparse -> the library asked for


def _to_pydata(h):
    import sparse

    b = h.buffers()
    if h.format == "csf":
        h = h.convert("coo")
        b = h.buffers()
    if h.format == "coo":
        return sparse.COO(b["coords"].T, b["data"], shape=h.shape,
                          has_duplicates=not h.is_canonical, sorted=bool(h.is_canonical))
    axis = (0,) if h.format == "csr" else (1,)
    return sparse.GCXS((b["data"], b["indices"], b["indptr"]), shape=h.shape,
                       compressed_axes=axis)


def _to_torch(h):
    import torch

    if h.format == "csf":
        h = h.convert("coo")
    b = h.buffers()

    # torch tensors are writable: they get their own copy of quiver's
    # read-only (possibly file-mapped) memory
    def t(a):
        return torch.from_numpy(_np.array(a))

    if h.format == "coo":
        x = torch.sparse_coo_tensor(t(b["coords"].T.astype(_np.int64)), t(b["data"]), h.shape)
        return x.coalesce() if h.is_canonical else x
    idx = _np.int64 if b["indptr"].dtype != _np.int32 or b["indices"].dtype != _np.int32 else _np.int32
    ptr, ind = t(b["indptr"].astype(idx)), t(b["indices"].astype(idx))
    if h.format == "csr":
        return torch.sparse_csr_tensor(ptr, ind, t(b["data"]), h.shape)
    return torch.sparse_csc_tensor(ptr, ind, t(b["data"]), h.shape)


def _out(h, as_):
    SparseTensor, _, _, _wrap_sparse = _pkg()
    if as_ == "scipy":
        return _wrap_sparse(h)
    if as_ == "quiver":
        return SparseTensor(h)
    if as_ == "sparse":
        return _to_pydata(h)
    return _to_torch(h)


def read_sparse_column(source, column=None, as_="scipy"):
    """The sparse column ``column`` (default: the only one) of a table.

    A ``quiver.sparse_vector`` column is one n x d CSR matrix: with
    ``as_="scipy"`` (the default) a ``scipy.sparse.csr_matrix`` whose
    ``indptr`` is the column's list offsets and ``indices``/``data`` its
    struct's children, viewing the file mapping or buffer without a copy (a
    table of several record batches is stacked, one copy). A
    ``quiver.sparse_tensor`` column is a list with one matrix per row (2-D
    CSR/CSC/COO as SciPy matrices viewing the column, others and float16 as
    :class:`quiver.SparseTensor`), ``None`` for a null row.

    ``as_``: ``"scipy"``, ``"sparse"`` (PyData Sparse: ``sparse.GCXS`` for
    CSR/CSC, ``sparse.COO`` otherwise; the arrays view quiver's),
    ``"torch"`` (``torch.sparse_csr_tensor`` / ``sparse_coo_tensor`` /
    ``sparse_csc_tensor``, on their own copy: torch tensors are writable) or
    ``"quiver"`` (:class:`quiver.SparseTensor`).
    """
    if as_ not in _AS:
        raise ValueError("as_ must be one of %s" % ", ".join(_AS))
    _, _, _source, _ = _pkg()
    kind, items = _quiver._read_sparse_column(_source(source), column)
    if kind == "tensor":
        return [None if h is None else _out(h, as_) for h in items]
    if len(items) == 1:
        return _out(items[0], as_)
    import scipy.sparse as sp

    if not items:
        raise ValueError("the table has no record batch")
    m = sp.vstack([_out(h, "scipy") for h in items], format="csr")
    return m if as_ == "scipy" else _out(_handle(m), as_)


def write_sparse_column(dest, matrix_or_list, name="sparse", file=False, *, fsync=True):
    """Writes a one-column table of a sparse column.

    A matrix (SciPy, PyData Sparse, torch.sparse, :class:`quiver.SparseTensor`)
    becomes a ``quiver.sparse_vector`` column of its rows: a CSR matrix with
    int32/int64 indptr is written from its own arrays (the column is a view
    of them); other formats are converted to CSR first. A list (entries may
    be ``None``: a null row) becomes a ``quiver.sparse_tensor`` column, one
    sparse tensor per row, all of one format, value type, index types and
    ndim; its cells are copied once. ``dest``: a path (replaced atomically)
    or a writable binary file object; ``file``: the Arrow file format
    instead of a stream. ``fsync=False``: no fsync of the file and its
    directory (as :func:`quiver.write_tensor`).
    """
    if isinstance(matrix_or_list, (list, tuple)):
        handles = [None if x is None else _handle(x) for x in matrix_or_list]
        _quiver._write_sparse_column(dest, handles, name, False, bool(file), fsync=bool(fsync))
        return
    h = _handle(matrix_or_list)
    if h.ndim != 2:
        raise ValueError("a sparse-vector column is a 2-D matrix's rows; pass a list for a "
                         "column of one tensor per row")
    if h.format != "csr":
        h = h.convert("csr")
    _quiver._write_sparse_column(dest, [h], name, True, bool(file), fsync=bool(fsync))


def migrate(source, dest, to_messages=False, split=False, file=False, name=None,
            max_output=None, threads=None, *, fsync=True):
    """``quiver migrate``: Tensor / SparseTensor messages -> one table, row i = message i.

    Dense messages become an ``arrow.fixed_shape_tensor`` column (every shape
    equal) or ``arrow.variable_shape_tensor``, with ``dim_names`` and a
    ``permutation`` for column-major or transposed layouts (no copy); a
    layout no permutation describes is copied row-major with a
    ``UserWarning``. The bodies of dense messages, one or several, are
    written to ``dest`` as the column's values from where the source holds
    them (no copy before the write); a message whose layout is not the
    column's (a ``permutation`` is kept only when every message shares it)
    is copied in the column's layout first, on ``threads`` (``None``: the
    calling thread; the same bytes for any count). Sparse messages become a
    ``quiver.sparse_tensor`` column. Messages that cannot share a column raise ``InvalidError``
    naming the groups, unless ``split``: one table per group, at ``dest``
    with the group's name before its extension. ``to_messages``: the reverse
    (a one-column table -> one message per row). ``source`` is what the
    readers take: a path (memory-mapped), a bytes-like object (read in
    place) or a binary file object (read as needed). ``dest`` is a path
    (replaced atomically), a writable binary file object (written as the
    output is made) or a ``bytearray`` (the output appended); ``split``
    needs a path. Returns the paths written (``[dest]`` for a file object
    or bytearray). ``fsync=False``: the files written (every one with
    ``split``) are not fsynced, nor their directory (``quiver migrate
    --no-fsync``).
    """
    _, _, _source, _ = _pkg()
    to_object = isinstance(dest, bytearray) or hasattr(dest, "write")
    target = _Append(dest) if isinstance(dest, bytearray) else dest if to_object else _os.fspath(dest)
    written = _quiver._migrate(_source(source), target, bool(to_messages), bool(split),
                               bool(file), name, int(max_output or 0), int(threads or 0),
                               fsync=bool(fsync))
    return [dest] if to_object else written


class _Append:
    """A bytearray as a binary file object: write() appends."""

    def __init__(self, buf):
        self._buf = buf

    def write(self, data):
        self._buf += data
        return len(data)
