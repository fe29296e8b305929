"""quiver: Arrow IPC tensors, sparse tensors and record batches for NumPy and SciPy.

Everything is read zero-copy where the target allows it: ``read_tensor`` hands
out an ndarray viewing the memory-mapped file (or the caller's buffer), and
``read_sparse`` gives SciPy matrices whose index and value arrays view it too.
Record batches are exchanged through the Arrow PyCapsule interface, so any
consumer of ``__arrow_c_stream__`` (pandas, Polars, DuckDB, PyArrow, nanoarrow)
reads them, and ``write_stream``/``write_file`` take any producer.

Errors are ``quiver.Error`` subclasses that are also ``ValueError``
(``InvalidError``, ``NotSupportedError``, ``CapacityError``), ``OSError``
(``InputOutputError``) or ``MemoryError`` (``OutOfMemoryError``). The 0.4
names ``ArrowInvalid``, ``ArrowNotSupported``, ``ArrowCapacityError``,
``ArrowIOError`` and ``ArrowMemoryError`` are aliases of the same classes,
kept for one release (they shadowed pyarrow's).
"""

import numpy as _np

from ._quiver import (  # noqa: F401
    ArrowCapacityError,
    ArrowInvalid,
    ArrowIOError,
    ArrowMemoryError,
    ArrowNotSupported,
    CapacityError,
    Error,
    InputOutputError,
    InvalidError,
    NotSupportedError,
    OutOfMemoryError,
    RecordBatchReader,
    Tensor,
    __version__,
    read_file as _read_file,
    read_stream as _read_stream,
    read_tensor as _read_tensor,
    read_tensor_info as _read_tensor_info,
    read_tensor_object as _read_tensor_object,
    write_tensor as _write_tensor,
)
from . import _quiver
from ._records import (  # noqa: F401
    ChunkedColumn, Column, Field, RecordBatch, Schema, Table,
)
from ._values import DayTimeInterval, MonthDayNano  # noqa: F401
from ._numpy_files import read_npy, read_npz, write_npy, write_npz  # noqa: F401
from ._json import read_json, write_json  # noqa: F401
from ._validate import validate  # noqa: F401

__all__ = [
    "__version__",
    "read_tensor", "read_tensor_info", "read_tensor_object", "write_tensor", "read_sparse",
    "write_sparse", "SparseTensor", "convert", "messages", "read_stream", "read_file",
    "write_stream", "write_file", "table_to_tensor", "read_tensor_column", "read_tensor_cells",
    "write_tensor_column", "read_sparse_column", "write_sparse_column", "migrate", "from_dlpack",
    "as_dlpack", "read_sparse_object", "Tensor", "RecordBatchReader", "RecordBatch", "Column",
    "Table", "ChunkedColumn", "Schema", "Field", "DayTimeInterval", "MonthDayNano", "read_npy",
    "write_npy", "read_npz", "write_npz", "read_json", "write_json", "validate", "Error", "InvalidError",
    "NotSupportedError", "CapacityError", "InputOutputError", "OutOfMemoryError",
]

_SCIPY_FORMATS = ("csr", "csc", "coo")


def _source(source):
    """What the readers take: a path, a bytes-like object or a binary file
    object, each handed to C as it is (a file object is read as the reader
    needs its bytes, through read()/readinto() and, when seekable, seek())."""
    return source


def read_tensor(source, index=0):
    """Tensor message ``index`` of ``source`` as a read-only ndarray, without a copy.

    ``source`` is a path (the file is memory-mapped; only the chosen body is
    mapped), a bytes-like object (viewed in place) or a binary file object
    (read as the reader needs it). Strides and column-major layouts are kept. The array's
    ``base`` is a :class:`quiver.Tensor` that owns the mapping or holds the
    buffer, and also exports DLPack (``numpy.from_dlpack(arr.base)``).
    """
    return _read_tensor(_source(source), index)


def read_tensor_object(source, index=0):
    """The :class:`quiver.Tensor` at ``index`` (shape, strides, dim_names, ``to_numpy()``, DLPack)."""
    return _read_tensor_object(_source(source), index)


def read_tensor_info(source, index=0):
    """A dict describing tensor ``index``: type, dtype, shape, strides (bytes), dim_names, layout, nbytes.

    Reads only the metadata (the data is mapped but never touched).
    """
    return _read_tensor_info(_source(source), index)


def _is_dlpack_producer(obj):
    return (hasattr(obj, "__dlpack__") and not isinstance(obj, (_np.ndarray, Tensor))
            and not _is_torch_sparse(obj))


def _is_torch_sparse(obj):
    layout = getattr(obj, "layout", None)
    return layout is not None and str(layout) in ("torch.sparse_coo", "torch.sparse_csr")


def write_tensor(dest, array, dim_names=None, *, fsync=True):
    """Writes ``array`` as one Arrow Tensor message.

    ``array``: any NumPy array (or array-like) of int8..int64, uint8..uint64,
    float16, float32 or float64, in any layout (row- and column-major are
    written as they are, other layouts as a row-major copy), or any DLPack
    producer (a PyTorch tensor, ...: read through DLPack without a copy).
    ``dest``: a path (a temporary file renamed over the target, so a failure
    leaves it untouched) or a writable binary file object. ``dim_names``: one
    str per dimension, or None. ``fsync=False``: a path is still written to a
    temporary file renamed over it, but neither is fsynced (scratch output,
    benchmarks; the CLI's ``--no-fsync``), as for every writer.
    """
    if _is_dlpack_producer(array):
        array = from_dlpack(array)
    _write_tensor(dest, array, dim_names, fsync=bool(fsync))


def from_dlpack(obj):
    """A :class:`quiver.Tensor` viewing the memory of any DLPack producer, without a copy.

    ``obj``: an object with ``__dlpack__`` (NumPy arrays, PyTorch tensors,
    quiver tensors, ...) or a DLPack capsule of either version (0.6
    ``dltensor`` or 1.x ``dltensor_versioned``; the capsule is consumed). A
    1.x capsule is asked for first (``max_version=(1, 0)``), a producer that
    does not know the keyword gives a 0.6 one. Only CPU memory is taken (a
    ``BufferError`` otherwise); a consumed capsule, negative strides, a type
    quiver lacks or an impossible shape are :class:`InvalidError` /
    :class:`NotSupportedError` (both ``ValueError``). The Tensor keeps the
    producer's memory alive; ``numpy.asarray(t)`` is a read-only view of it.
    """
    if type(obj).__name__ == "PyCapsule":
        return _quiver._from_dlpack(obj)
    if not hasattr(obj, "__dlpack__"):
        raise TypeError("from_dlpack needs a DLPack producer (an object with __dlpack__) or a "
                        "capsule, not %s" % type(obj).__name__)
    if hasattr(obj, "__dlpack_device__"):
        device = tuple(obj.__dlpack_device__())
        if device[0] != 1:  # kDLCPU
            raise BufferError("quiver reads CPU memory only; the producer is on device %r" % (device,))
    try:
        capsule = obj.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = obj.__dlpack__()
    return _quiver._from_dlpack(capsule)


def as_dlpack(array):
    """A DLPack producer for an ndarray quiver handed out: the one call between
    ``read_tensor`` (and the other readers) and any DLPack consumer::

        torch.from_dlpack(quiver.as_dlpack(quiver.read_tensor(path)))
        numpy.from_dlpack(quiver.as_dlpack(a))

    NumPy 1.x refuses to export read-only arrays, and quiver's arrays are
    read-only (they may view a read-only file mapping); the returned
    :class:`quiver.Tensor` views the array's memory without a copy and keeps
    the array alive. Consumers must not write to it (DLPack 1.x consumers see
    the read-only flag; 0.6 cannot carry it).
    """
    return _quiver._as_dlpack(array)


class SparseTensor:
    """A sparse tensor NumPy/SciPy cannot hold as a matrix: N-d COO, CSF, or float16 values.

    Attributes: ``format`` ('coo', 'csr', 'csc', 'csf'), ``shape``, ``dim_names``,
    ``nnz``, ``data`` (values), ``indices`` (COO: the nnz x ndim coordinate
    matrix; CSR/CSC: the index array; CSF: a list per level), ``indptr``
    (CSR/CSC: an array; CSF: a list per level; COO: None), ``axis_order``
    (CSF). Arrays view quiver's memory without a copy and are read-only.
    """

    def __init__(self, handle):
        self._handle = handle
        buffers = handle.buffers()
        self.format = handle.format
        self.shape = handle.shape
        self.dim_names = handle.dim_names
        self.nnz = handle.nnz
        self.axis_order = handle.axis_order
        self.is_canonical = handle.is_canonical
        self.data = buffers["data"]
        if self.format == "coo":
            self.indices = buffers["coords"]
            self.indptr = None
        else:
            self.indices = buffers["indices"]
            self.indptr = buffers["indptr"]

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self.shape)

    @property
    def dtype(self):
        """NumPy dtype of the values."""
        return self.data.dtype

    def to_dense(self):
        """A new row-major ndarray (duplicates of a non-canonical COO summed)."""
        return self._handle.to_dense()

    def to_coo(self):
        """The same tensor as a canonical COO :class:`SparseTensor` (converted in C)."""
        return SparseTensor(self._handle.convert("coo"))

    def convert(self, format, index_type=None, axis_order=None):
        """The same tensor in another format (and index type, CSF axis order), converted in C."""
        return SparseTensor(self._handle.convert(format, index_type, axis_order))

    def to_scipy(self):
        """A scipy.sparse matrix (2-D only; float16 values become float32)."""
        if self.ndim != 2:
            raise ValueError("only 2-D sparse tensors are SciPy matrices")
        handle = self._handle
        if handle.format not in _SCIPY_FORMATS:
            handle = handle.convert("coo")
        return _to_scipy(handle, upcast_half=True)

    def to_torch(self):
        """A PyTorch sparse tensor viewing quiver's buffers through DLPack where
        PyTorch allows it: COO as ``torch.sparse_coo_tensor`` (int64 indices;
        other widths converted), CSR as ``torch.sparse_csr_tensor``; CSC and
        CSF are converted to COO first. Treat it as read-only."""
        import torch

        def view(a):
            return torch.from_dlpack(as_dlpack(a))

        t = self if self.format in ("coo", "csr") else self.to_coo()
        values = view(t.data)
        if t.format == "coo":
            coords = t.indices if t.indices.dtype == _np.int64 else t.indices.astype(_np.int64)
            out = torch.sparse_coo_tensor(view(coords).T, values, size=t.shape)
            return out._coalesced_(True) if t.is_canonical else out
        index = _np.int64 if _np.int64 in (t.indptr.dtype, t.indices.dtype) else _np.int32
        return torch.sparse_csr_tensor(view(t.indptr.astype(index, copy=False)),
                                       view(t.indices.astype(index, copy=False)), values,
                                       size=t.shape)

    def __repr__(self):
        return "<quiver.SparseTensor {} {} shape={} nnz={}>".format(
            self.format, self.dtype, self.shape, self.nnz)


def _scipy_index(a):
    # SciPy's kernels take int32 or int64 indices; other widths are converted.
    if a.dtype == _np.int32 or a.dtype == _np.int64:
        return a
    return a.astype(_np.int64)


def _to_scipy(handle, upcast_half=False):
    import scipy.sparse as sp

    b = handle.buffers()
    data = b["data"]
    if data.dtype == _np.float16:
        if not upcast_half:
            return SparseTensor(handle)
        data = data.astype(_np.float32)
    shape = handle.shape
    fmt = handle.format
    # The arrays are assigned after construction: SciPy's constructors may
    # scan the indices and copy them to a narrower type, and quiver has already
    # validated them (in range, sorted, indptr well formed).
    if fmt == "coo":
        m = sp.coo_matrix(shape, dtype=data.dtype)
        coords = b["coords"]
        m.row = _scipy_index(coords[:, 0])
        m.col = _scipy_index(coords[:, 1])
        m.data = data
        m.has_canonical_format = bool(handle.is_canonical)
        return m
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    m = cls(shape, dtype=data.dtype)
    m.data = data
    m.indices = _scipy_index(b["indices"])
    m.indptr = _scipy_index(b["indptr"])
    m.check_format(full_check=False)
    m.has_canonical_format = True
    return m


def _wrap_sparse(handle):
    if handle.ndim == 2 and handle.format in _SCIPY_FORMATS:
        return _to_scipy(handle)
    return SparseTensor(handle)


def read_sparse(source, index=0, copy=False):
    """SparseTensor message ``index`` of ``source``.

    2-D CSR, CSC and COO become ``scipy.sparse.csr_matrix``/``csc_matrix``/
    ``coo_matrix`` whose ``data`` and int32/int64 index arrays view the file
    mapping or buffer without a copy (other index widths are converted, as
    SciPy only takes those two). N-d COO, CSF and float16 values (which SciPy
    cannot hold) become a :class:`quiver.SparseTensor`. The views are
    read-only; ``copy=True`` gives writable copies instead (SciPy's in-place
    operations, ``m.data *= 2``, then work).
    """
    m = _wrap_sparse(_quiver._read_sparse(_source(source), index))
    if not copy:
        return m
    if isinstance(m, SparseTensor):
        m.data = m.data.copy()
        m.indices = ([a.copy() for a in m.indices] if isinstance(m.indices, list)
                     else m.indices.copy())
        if m.indptr is not None:
            m.indptr = [a.copy() for a in m.indptr] if isinstance(m.indptr, list) else m.indptr.copy()
        return m
    return m.copy()


def _native(a):
    """``a`` C-contiguous in the host's byte order (Arrow buffers are in the
    writer's order): swapped in a copy when it is not."""
    a = _np.ascontiguousarray(a)
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def _handle_from_scipy(m):
    fmt = m.format
    if fmt not in _SCIPY_FORMATS:
        m = m.tocsr()
        fmt = "csr"
    if fmt == "coo":
        coords = _np.empty((m.nnz, 2), dtype=_np.result_type(m.row.dtype, m.col.dtype)
                           .newbyteorder("="))
        coords[:, 0] = m.row
        coords[:, 1] = m.col
        return _quiver._sparse_from_buffers(
            "coo", m.shape, _native(m.data), coords=coords,
            is_canonical=bool(getattr(m, "has_canonical_format", False)))
    if not m.has_canonical_format:
        # quiver's CSR/CSC have sorted indices without duplicates
        m = m.copy()
        m.sum_duplicates()
    return _quiver._sparse_from_buffers(
        fmt, m.shape, _native(m.data), indptr=_native(m.indptr), indices=_native(m.indices))


def _numpy_of_torch(t):
    return _np.asarray(from_dlpack(t.detach()))


def _handle_from_torch(t):
    """A PyTorch sparse COO or CSR tensor's buffers, viewed through DLPack."""
    if str(t.layout) == "torch.sparse_coo":
        indices = _numpy_of_torch(t._indices())  # ndim x nnz
        return _quiver._sparse_from_buffers(
            "coo", tuple(t.shape), _numpy_of_torch(t._values()),
            coords=_np.ascontiguousarray(indices.T), is_canonical=bool(t.is_coalesced()))
    return _quiver._sparse_from_buffers(
        "csr", tuple(t.shape), _numpy_of_torch(t.values()), indptr=_numpy_of_torch(t.crow_indices()),
        indices=_numpy_of_torch(t.col_indices()))


def _sparse_handle(obj, format, index_type):
    """A quiver._Sparse for a scipy matrix, SparseTensor, torch sparse tensor or dense array."""
    if _is_torch_sparse(obj):
        handle = _handle_from_torch(obj)
    elif isinstance(obj, SparseTensor):
        handle = obj._handle
    elif isinstance(obj, _quiver._Sparse):
        handle = obj
    elif hasattr(obj, "tocsr") and hasattr(obj, "format") and hasattr(obj, "nnz"):
        handle = _handle_from_scipy(obj)
    else:
        if _is_dlpack_producer(obj):
            obj = _np.asarray(from_dlpack(obj))
        return _quiver._sparse_from_dense(obj, format or "coo", index_type)
    if (format and format != handle.format) or index_type is not None:
        handle = handle.convert(format or handle.format, index_type)
    return handle


def read_sparse_object(source, index=0):
    """SparseTensor message ``index`` as a :class:`quiver.SparseTensor` whatever
    its format and shape (``.to_torch()``, ``.to_scipy()``, ``.to_dense()``)."""
    return SparseTensor(_quiver._read_sparse(_source(source), index))


def write_sparse(dest, matrix_or_tensor, format=None, index_type=None, value_type=None, *,
                 fsync=True):
    """Writes one Arrow SparseTensor message.

    ``matrix_or_tensor``: any scipy.sparse matrix or array, a
    :class:`quiver.SparseTensor`, a PyTorch sparse COO or CSR tensor
    (``torch.sparse_coo_tensor``, ``torch.sparse_csr_tensor``: its buffers
    read through DLPack), or a dense array or DLPack producer (converted to
    sparse in C). ``format``: 'coo', 'csr', 'csc' or 'csf' (default: the input's
    format; COO for a dense array; CSR for SciPy formats Arrow lacks).
    ``index_type``: a NumPy integer dtype for every index buffer (default: the
    input's, int64 for a dense array). ``dest``: a path or a writable binary
    file object. CSR/CSC input with unsorted or duplicate indices is
    canonicalised (on a copy) first. ``value_type``: a NumPy dtype (or name:
    'int8' ... 'uint64', 'float16', 'float32', 'float64', 'f4', ...) the values
    are cast to, as ``quiver convert --value-type`` does: exactly or refused
    (:class:`InvalidError` naming the first value that does not fit);
    integers within range, floats to integers only when whole (never NaN or
    infinities), integers to floats only when held exactly, float to float
    rounded (a finite value beyond the target's range refused).
    ``fsync=False``: no fsync of the file and its directory (as
    :func:`write_tensor`).
    """
    handle = _sparse_handle(matrix_or_tensor, format, index_type)
    if value_type is not None:
        handle = _quiver._sparse_cast(handle, value_type)
    _quiver._write_sparse(dest, handle, fsync=bool(fsync))


def convert(source, dest, to, index=0, index_type=None, axis_order=None, *, fsync=True):
    """Converts tensor message ``index`` of ``source`` and writes it to ``dest``.

    ``to``: 'dense', 'coo', 'csr', 'csc' or 'csf' (as ``quiver convert --to``).
    The input may be a Tensor or a SparseTensor; dimension names are kept.
    ``fsync=False``: as :func:`write_tensor`.
    """
    obj = _quiver._read_any(_source(source), index)
    fsync = bool(fsync)
    if to == "dense":
        if isinstance(obj, Tensor):
            _write_tensor(dest, obj, None, fsync=fsync)
        else:
            _write_tensor(dest, obj.to_dense(), obj.dim_names, fsync=fsync)
        return
    if isinstance(obj, Tensor):
        handle = _quiver._sparse_from_dense(obj, to, index_type, axis_order)
    else:
        handle = obj.convert(to, index_type, axis_order)
    _quiver._write_sparse(dest, handle, fsync=fsync)


def _list(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def _summary(m):
    """The summary column of ``quiver inspect`` (without buffer offsets)."""
    kind = m["kind"]
    if kind == "Schema":
        fields = ["%s: %s%s" % (n, t, "" if nullable else " not null") for n, t, nullable in m["fields"]]
        text = "%d field%s" % (len(fields), "" if len(fields) == 1 else "s")
        return text + (": " + ", ".join(fields) if fields else "")
    if kind in ("RecordBatch", "DictionaryBatch"):
        text = "length=%d nodes=%d buffers=%d" % (m["length"], m["nodes"], m["buffers"])
        if kind == "DictionaryBatch":
            text = "id=%d%s %s" % (m["id"], " delta" if m["is_delta"] else "", text)
        return text + (" compression=%s" % m["compression"] if "compression" in m else "")
    if kind in ("Tensor", "SparseTensor"):
        text = "shape=" + _list(m["shape"])
        if "dim_names" in m:
            text += " names=" + _list(m["dim_names"])
        if kind == "Tensor":
            strides = " strides=" + _list(m["strides"]) if "strides" in m else ""
            return "%s %s%s" % (m["type"], text, strides)
        return "%s %s %s nnz=%d" % (m["format"].upper(), m["type"], text, m["nnz"])
    return ""


def messages(source):
    """An iterator of dicts, one per message of an Arrow stream or file (as ``quiver inspect``).

    Every dict has index, offset, kind ('Schema', 'RecordBatch',
    'DictionaryBatch', 'Tensor', 'SparseTensor'), version, metadata_length,
    body_length, legacy_prefix and summary (inspect's summary text); then per
    kind: fields [(name, type, nullable)]; length, nodes, buffers,
    compression, id, is_delta; type, shape, dim_names, strides; format, nnz.
    """
    for m in _quiver.messages_iter(_source(source)):
        m["summary"] = _summary(m)
        yield m


def read_stream(source):
    """A :class:`quiver.RecordBatchReader` over an Arrow IPC stream (a file is read in order).

    It implements ``__arrow_c_schema__``, ``__arrow_c_stream__`` and
    ``__arrow_c_device_stream__`` (CPU device arrays: device_type 1,
    device_id -1), so ``pyarrow.table(r)``, ``polars.from_arrow(r)``,
    ``duckdb`` or ``nanoarrow`` read it without a copy. Batches are fully
    validated.
    """
    return _read_stream(_source(source))


def read_file(source):
    """A :class:`quiver.RecordBatchReader` over an Arrow IPC file, through its footer."""
    return _read_file(_source(source))


def read_tensor_column(source, column=None, batch=None, fill=None):
    """A tensor column of a table as one ndarray ``[rows, *cell_shape]``.

    ``source`` is an Arrow IPC stream or file (a path, which is
    memory-mapped, a bytes-like object or a binary file object). The column
    is an ``arrow.fixed_shape_tensor`` column, or an
    ``arrow.variable_shape_tensor`` one whose cells share a shape;
    ``column=None`` takes the only tensor column (an error names them when
    there are several). The array views the mapping or the buffer without a
    copy (read-only; a ``permutation`` becomes strides) when one batch is
    read: ``batch=i`` picks batch ``i``, otherwise every batch is read and
    several are concatenated (one copy). A null cell is an
    :class:`InvalidError` unless ``fill`` gives the value its elements take
    (the batch is then copied).
    """
    arrays, nulls = _quiver._read_tensor_column(_source(source), column, batch, fill is not None)
    if fill is not None:
        for a, rows in zip(arrays, nulls):
            if rows:
                a[rows] = fill
    if len(arrays) == 1:
        return arrays[0]
    if not arrays:
        raise InvalidError("the table has no record batches: the cell shape is unknown")
    out = _np.concatenate(arrays)
    return out


def read_tensor_cells(source, column=None):
    """Every cell of a tensor column (fixed or variable shape, any shapes) as a list:
    a read-only ndarray viewing the source per cell (its ``permutation`` as
    strides), ``None`` for a null cell; every batch, in order."""
    return _quiver._read_tensor_cells(_source(source), column)


def write_tensor_column(dest, data, name="tensor", dim_names=None, file=False, *, fsync=True):
    """Writes a one-column table of tensors to ``dest`` (path or file object):
    an Arrow stream, or an Arrow file with ``file=True``.

    ``data`` an ndarray ``[n, ...]``: an ``arrow.fixed_shape_tensor`` column
    of ``n`` cells, written from the array's memory without a copy; cells
    in Fortran order or transposed (any permutation of a row-major layout
    with the leading dim outermost, e.g. ``a.transpose(0, 2, 1)``) become a
    ``permutation``, also without a copy. A layout whose cells interleave
    (``numpy.asfortranarray`` of the whole ``[n, ...]`` array) cannot be a
    FixedSizeList column and is copied row-major. ``data`` a list of
    arrays (one dtype and number of dims; ``None`` for a null cell): an
    ``arrow.variable_shape_tensor`` column, its ``uniform_shape`` giving the
    extents every cell shares. ``dim_names``: one name per cell dim (a str
    is a ``TypeError``). Any DLPack producer (a PyTorch tensor, ...) stands
    for an ndarray, read without a copy. ``fsync=False``: as
    :func:`write_tensor` (the like-for-like comparison with
    ``ndarray.tofile``, which does not fsync either).
    """
    if isinstance(data, (list, tuple)):
        data = [_np.asarray(from_dlpack(c)) if _is_dlpack_producer(c) else c for c in data]
    elif _is_dlpack_producer(data):
        data = _np.asarray(from_dlpack(data))
    elif isinstance(data, Tensor):
        data = _np.asarray(data)
    _quiver._write_tensor_column(dest, data, name, dim_names, bool(file), fsync=bool(fsync))


def table_to_tensor(source, columns=None, row_major=True, null_to_nan=False, threads=None,
                    out=None):
    """The numeric columns of a table as one new 2-D ndarray ``[rows, columns]``
    (or written into ``out``).

    As Arrow C++'s ``RecordBatch::ToTensor`` and pyarrow's
    ``RecordBatch.to_tensor`` make it, over every batch of ``source``: an
    Arrow IPC stream or file (a path, a bytes-like object or a binary file
    object), or any Arrow PyCapsule producer: ``__arrow_c_device_stream__``
    (CPU data), ``__arrow_c_stream__``, ``__arrow_c_device_array__`` or
    ``__arrow_c_array__`` (a quiver :class:`RecordBatchReader`, ``Table`` or
    ``RecordBatch``, a pyarrow table, ...).

    ``columns``: the names to take, in order (default: every column; a str
    is a ``TypeError``). The dtype merges the columns' types as Arrow does
    (uint16 + int16 = int32, int8 + float32 = float32, int32 + float32 =
    float64). ``row_major=False`` gives a Fortran-order array. A null is an
    :class:`InvalidError` unless ``null_to_nan``, which writes NaN and makes
    an integer result float32 (8- and 16-bit integers) or float64. A column
    that is not an integer or float (strings, bools, dates, ...) is an
    :class:`InvalidError` naming it; float16 mixed with another type is
    :class:`NotSupportedError`. The array owns its memory and is writable.
    ``threads``: threads of the copy, at most 256 (None, the default: every
    CPU this process may run on, as the CLI's ``--threads``; 1 or 0: the
    calling thread alone); an output of 4 MiB or more is split by ranges of
    rows, with the same result for any count.

    ``out``: a writable ndarray of the result's exact shape ``(rows,
    columns)`` and dtype, C-contiguous for ``row_major=True`` and
    F-contiguous for ``row_major=False``; the values are written into it and
    ``out`` itself is returned (NumPy's ``out=``). Its memory is neither
    allocated nor zeroed nor faulted in by the call, so an array written
    before (a buffer reused from batch to batch) costs no page faults. A
    non-ndarray or a dtype other than the columns' is a ``TypeError``; a
    wrong shape, order, a read-only array, or one that overlaps the source's
    columns a ``ValueError`` (an :class:`InvalidError` for those found after
    reading the source); all before anything is written. After an error
    ``out``'s contents are unspecified.
    """
    stream = _arrow_stream_capsule(source)
    if stream is not None:
        source = stream
    elif type(source).__name__ != "PyCapsule":
        source = _source(source)
    return _quiver._table_to_tensor(source, columns, bool(row_major), bool(null_to_nan),
                                    _table_threads(threads), out)


def _table_threads(threads):
    """table_to_tensor's thread count: None is every CPU of the affinity
    mask (the CLI's rule, capped at the library's 256); a number is kept
    (the C half checks its range)."""
    if threads is None:
        return min(_quiver._cpu_count(), 256)
    return int(threads)


def _arrow_stream_capsule(obj):
    """A plain stream capsule of any Arrow PyCapsule producer, asked in this
    order: ``__arrow_c_device_stream__``, ``__arrow_c_stream__``,
    ``__arrow_c_device_array__``, ``__arrow_c_array__`` (a single batch
    becomes a one-batch stream); None when it offers none. Device data of
    another device than the CPU (or with a sync event) is a
    NotSupportedError before anything is read, and so is a non-CPU array in
    the middle of a device stream when it arrives."""
    if hasattr(obj, "__arrow_c_device_stream__"):
        return _quiver._device_stream_to_cpu(obj.__arrow_c_device_stream__())
    if hasattr(obj, "__arrow_c_stream__"):
        return obj.__arrow_c_stream__()
    if hasattr(obj, "__arrow_c_device_array__"):
        schema, array = obj.__arrow_c_device_array__()
        return _quiver._array_stream(schema, _quiver._device_array_to_cpu(array))
    if hasattr(obj, "__arrow_c_array__"):
        schema, array = obj.__arrow_c_array__()
        return _quiver._array_stream(schema, array)
    return None


def _write(dest, obj, file, compression, fsync):
    stream = _arrow_stream_capsule(obj)
    if stream is None:
        raise TypeError("{} exports none of __arrow_c_device_stream__, __arrow_c_stream__, "
                        "__arrow_c_device_array__, __arrow_c_array__".format(type(obj).__name__))
    _quiver._write_batches(dest, stream, file=file, compression=compression, fsync=bool(fsync))


def write_stream(dest, obj, compression=None, *, fsync=True):
    """Writes every batch of ``obj`` as an Arrow IPC stream to ``dest`` (path or file object).

    ``obj`` is anything exporting ``__arrow_c_device_stream__``,
    ``__arrow_c_stream__``, ``__arrow_c_device_array__`` or
    ``__arrow_c_array__`` (the first it has, in that order: the device form
    is preferred). Device data must be CPU data: another device, a CPU array
    with a sync event, or a non-CPU array in the middle of a device stream is
    a :class:`NotSupportedError` (a ``ValueError``).
    ``compression``: None, 'lz4' or 'zstd'. ``fsync=False``: as
    :func:`write_tensor`."""
    _write(dest, obj, False, compression, fsync)


def write_file(dest, obj, compression=None, *, fsync=True):
    """As :func:`write_stream`, in the Arrow IPC file format (with footer)."""
    _write(dest, obj, True, compression, fsync)


from ._sparse_column import migrate, read_sparse_column, write_sparse_column  # noqa: E402
