"""write_sparse(..., value_type=): the values cast as quiver convert
--value-type casts them (qv_sparse_cast), exactly or refused."""
from typing import Any, List

import numpy as np
import pytest

import quiver

scipy_sparse = pytest.importorskip("scipy.sparse")

M = np.array([[0, 1, 0], [7, 0, 100]])


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "csf"])
@pytest.mark.parametrize("src", ["float64", "int32", "uint8", "float16"])
@pytest.mark.parametrize("value_type", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                        "uint32", "uint64", "float16", "float32", "float64"])
def test_every_type_every_format(tmp_path, fmt, src, value_type):
    p = tmp_path / "m.arrow"
    quiver.write_sparse(p, M.astype(src), format=fmt, value_type=value_type)
    t = quiver.read_sparse(p)
    dense = t.toarray() if hasattr(t, "toarray") else t.to_dense()
    assert dense.dtype == np.dtype(value_type)
    assert np.array_equal(dense, M)


def test_numpy_dtype_spellings(tmp_path):
    m = scipy_sparse.csr_matrix(M.astype(np.float64))
    spellings: List[Any] = ["f4", np.float32, np.dtype("float32"), "<f4", "float32"]
    for spelling in spellings:
        p = tmp_path / "s.arrow"
        quiver.write_sparse(p, m, value_type=spelling)
        back = quiver.read_sparse(p)
        assert back.dtype == np.float32 and np.array_equal(back.toarray(), M), spelling
    p = tmp_path / "h.arrow"
    quiver.write_sparse(p, m, value_type="float16")
    assert quiver.read_sparse(p).dtype == np.float16


def test_values_that_do_not_fit(tmp_path):
    p = tmp_path / "x.arrow"
    m = scipy_sparse.csr_matrix(np.array([[0, 1.5], [300, -2]]))
    with pytest.raises(quiver.InvalidError, match="value 1.5 does not fit int64"):
        quiver.write_sparse(p, m, value_type="int64")
    with pytest.raises(quiver.InvalidError, match="value 300 does not fit int8"):
        quiver.write_sparse(p, scipy_sparse.coo_matrix(np.array([[0, 300]])), value_type="i1")
    with pytest.raises(quiver.InvalidError, match="value -2 does not fit uint32"):
        quiver.write_sparse(p, scipy_sparse.csc_matrix(np.array([[0, -2]])), value_type="uint32")
    with pytest.raises(quiver.InvalidError, match="value nan does not fit int32"):
        quiver.write_sparse(p, np.array([0.0, np.nan]), value_type="int32")
    with pytest.raises(quiver.InvalidError, match="value 2049 does not fit float16"):
        quiver.write_sparse(p, np.array([0, 2049], dtype=np.int32), value_type="float16")
    with pytest.raises(quiver.InvalidError, match="value 100000 does not fit float16"):
        quiver.write_sparse(p, np.array([1e5, 0.0]), value_type="float16")
    assert not p.exists()
    # NaN and infinities stay floats; float to float rounds
    quiver.write_sparse(p, np.array([np.nan, np.inf, 0.1]), value_type="float16")
    back = quiver.read_sparse(p).to_dense()
    assert back.dtype == np.float16 and np.isnan(back[0]) and np.isinf(back[1])
    assert back[2] == np.float16(0.1)


def test_not_numeric(tmp_path):
    with pytest.raises((TypeError, ValueError, quiver.Error)):
        quiver.write_sparse(tmp_path / "b.arrow", np.array([0, 1]), value_type="U4")
