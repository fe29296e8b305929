"""NumPy's own files through the library: ``.npy`` images (quiver/npy.h) and
SciPy's ``save_npz`` archives (quiver/npz.h), without NumPy's or SciPy's
readers and writers."""

from . import _quiver

__all__ = ["read_npy", "write_npy", "read_npz", "write_npz"]


def read_npy(source):
    """A ``.npy`` image (a path, bytes-like object or binary file object) as a
    read-only ndarray. Paths and buffers are viewed without a copy when the
    data is in the host's byte order and aligned (C or Fortran order kept);
    big-endian data is swapped into a new buffer. The dtypes of quiver's
    tensors only (int8..uint64, float16/32/64)."""
    from . import _source
    return _quiver._read_npy(_source(source)).to_numpy()


def write_npy(dest, array, c_order=False, *, fsync=True):
    """Writes ``array`` (an ndarray, array-like, :class:`quiver.Tensor` or DLPack
    producer) as a ``.npy`` image (format 1.0, data 64-byte aligned, as
    ``numpy.save`` reads it). A column-major array is written with
    ``fortran_order`` True unless ``c_order``; other layouts as a C-order
    copy. ``dest``: a path (a temporary file renamed over it) or a writable
    binary file object. ``fsync=False``: no fsync of the file and its
    directory (as :func:`quiver.write_tensor`)."""
    from . import _is_dlpack_producer, from_dlpack
    if _is_dlpack_producer(array):
        array = from_dlpack(array)
    _quiver._write_npy(dest, array, c_order, fsync=bool(fsync))


def read_npz(source):
    """A ``scipy.sparse.save_npz`` archive (CSR, CSC or COO) as a SciPy matrix
    of its format (a :class:`quiver.SparseTensor` for float16 values, which
    SciPy cannot hold). CSR/CSC rows with unsorted or repeated indices are
    sorted and summed as ``sum_duplicates`` does."""
    from . import _source, _wrap_sparse
    return _wrap_sparse(_quiver._read_npz(_source(source)))


def write_npz(dest, matrix, compressed=True, *, fsync=True):
    """Writes a 2-D sparse matrix (anything ``write_sparse`` takes; CSR, CSC and
    COO keep their format, other SciPy formats become CSR) as
    ``scipy.sparse.save_npz`` does (same members and headers; deflated unless
    ``compressed=False``). ``fsync=False``: as :func:`write_npy`."""
    from . import _sparse_handle
    _quiver._write_npz(dest, _sparse_handle(matrix, None, None), compressed, fsync=bool(fsync))
