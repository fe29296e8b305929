"""The rough edges of #24: one rule for names and options in Python and the
CLI, errors that say what is wrong, arrays in non-native byte order, and
writable sparse copies."""
import subprocess
from typing import Any, Callable, List

import numpy as np
import pytest

import quiver

NOT_ARROW = [b"garbage!" * 10, b"not arrow at all", b"PK\x03\x04" + b"x" * 60,
             b"#!/bin/sh\necho hello world\n" * 3]


@pytest.mark.parametrize("blob", NOT_ARROW)
def test_non_arrow_input_is_invalid_not_a_capacity_error(blob):
    readers: List[Callable[[Any], Any]] = [
        quiver.read_tensor, quiver.read_sparse, quiver.table_to_tensor,
        quiver.read_tensor_column, quiver.read_tensor_cells, quiver.read_stream]
    for read in readers:
        with pytest.raises(quiver.InvalidError, match="not Arrow IPC"):
            read(blob)


def test_a_real_message_over_the_limit_is_still_a_capacity_error():
    # continuation marker, then a metadata length past the 64 MiB limit
    blob = b"\xff\xff\xff\xff" + (100 << 20).to_bytes(4, "little") + b"\0" * 64
    with pytest.raises(quiver.CapacityError, match="exceeds the limit"):
        quiver.read_tensor(blob)


def test_dim_names_str_is_a_type_error(tmp_path):
    a = np.zeros((2, 3))
    with pytest.raises(TypeError, match="not a str"):
        quiver.write_tensor(tmp_path / "x.arrow", a, dim_names="rc")
    with pytest.raises(TypeError, match="not a str"):
        quiver.write_tensor_column(tmp_path / "x.arrow", a, dim_names="c")
    quiver.write_tensor(tmp_path / "x.arrow", a, dim_names=("r", "c"))
    assert quiver.read_tensor_info(tmp_path / "x.arrow")["dim_names"] == ("r", "c")


def test_format_names_one_rule(tmp_path, cli):
    src = tmp_path / "d.arrow"
    quiver.write_tensor(src, np.eye(4))
    for name in ("CSR", "csr", "Csc"):
        quiver.convert(src, tmp_path / "p.arrow", name)
        assert next(quiver.messages(tmp_path / "p.arrow"))["format"] == name.lower()
        r = subprocess.run([cli, "convert", str(src), str(tmp_path / "c.arrow"), "--to=" + name],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert next(quiver.messages(tmp_path / "c.arrow"))["format"] == name.lower()
    r = subprocess.run([cli, "convert", str(src), str(tmp_path / "c.arrow"), "--to=csx"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not one of" in r.stderr
    with pytest.raises(ValueError, match="unknown sparse format"):
        quiver.convert(src, tmp_path / "p.arrow", "csx")


def test_axis_order_out_of_range_is_named(tmp_path):
    src = tmp_path / "d.arrow"
    quiver.write_tensor(src, np.eye(3))
    with pytest.raises(ValueError, match=r"axis_order\[1\] = 7 is not a dim in \[0, 2\)"):
        quiver.convert(src, tmp_path / "f.arrow", "csf", axis_order=[0, 7])
    with pytest.raises(ValueError, match=r"axis_order\[0\] = -1 is not a dim"):
        quiver.convert(src, tmp_path / "f.arrow", "csf", axis_order=[-1, 0])
    quiver.convert(src, tmp_path / "f.arrow", "csf", axis_order=[1, 0])
    assert quiver.read_sparse(tmp_path / "f.arrow").axis_order == (1, 0)


@pytest.mark.parametrize("dt", [">f4", ">i8", ">u2", ">f8"])
def test_non_native_byte_order_is_swapped_on_write(tmp_path, dt):
    a = (np.arange(12) * 3).astype(dt).reshape(3, 4)
    quiver.write_tensor(tmp_path / "t.arrow", a)
    b = quiver.read_tensor(tmp_path / "t.arrow")
    assert b.dtype == a.dtype.newbyteorder("=") and np.array_equal(a, b)
    quiver.write_tensor_column(tmp_path / "c.arrow", a)
    assert np.array_equal(quiver.read_tensor_column(tmp_path / "c.arrow"), a)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_non_native_scipy_buffers_are_swapped_on_write(tmp_path, fmt):
    import scipy.sparse as sp
    m = sp.random(6, 5, density=0.4, format=fmt, random_state=3)
    m.data = m.data.astype(">f8")
    if fmt == "coo":
        m.row, m.col = m.row.astype(">i4"), m.col.astype(">i4")
    else:
        m.indices, m.indptr = m.indices.astype(">i4"), m.indptr.astype(">i4")
    quiver.write_sparse(tmp_path / "s.arrow", m)
    back = quiver.read_sparse(tmp_path / "s.arrow")
    assert back.format == fmt and back.data.dtype.isnative
    assert np.array_equal(back.toarray(), m.toarray())


def test_read_sparse_copy_is_writable(tmp_path):
    import scipy.sparse as sp
    m = sp.random(20, 10, density=0.2, format="csr", random_state=1)
    quiver.write_sparse(tmp_path / "m.arrow", m)
    view = quiver.read_sparse(tmp_path / "m.arrow")
    with pytest.raises(ValueError):
        view.data *= 2  # read-only views of the mapping
    c = quiver.read_sparse(tmp_path / "m.arrow", copy=True)
    c.data *= 2
    c.indices[:] = c.indices  # writable too
    assert np.allclose(c.toarray(), 2 * m.toarray())
    assert np.allclose(view.toarray(), m.toarray())
    # a SparseTensor (N-d) copies its arrays
    d = np.zeros((2, 3, 4))
    d[1, 2, 3] = 5
    quiver.write_sparse(tmp_path / "n.arrow", d)
    s = quiver.read_sparse(tmp_path / "n.arrow", copy=True)
    s.data *= 2
    assert s.data[0] == 10 and s.indices.flags.writeable
