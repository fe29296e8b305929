"""Input that is not Arrow (a NumPy .npy or .npz, text, nothing at all) is
named for what it is by every reader, as quiver.InvalidError (a ValueError),
never as a capacity error. The files are built here."""
import io

import numpy as np
import pytest

import quiver


def _inputs(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(6.0).reshape(2, 3))
    np.savez(tmp_path / "b.npz", a=np.arange(3))
    (tmp_path / "empty.arrow").write_bytes(b"")
    (tmp_path / "junk.arrow").write_bytes(b"hello, this text is not Arrow data\n")
    return [("a.npy", "NumPy .npy"), ("b.npz", "zip archive"), ("empty.arrow", "empty input"),
            ("junk.arrow", "not Arrow")]


READERS = [
    ("read_tensor", lambda s: quiver.read_tensor(s)),
    ("read_tensor_info", lambda s: quiver.read_tensor_info(s)),
    ("read_sparse", lambda s: quiver.read_sparse(s)),
    ("messages", lambda s: list(quiver.messages(s))),
    ("read_stream", lambda s: list(quiver.read_stream(s))),
    ("read_file", lambda s: list(quiver.read_file(s))),
]


@pytest.mark.parametrize("reader", READERS, ids=[r[0] for r in READERS])
def test_not_arrow_is_invalid(tmp_path, reader):
    name_, call = reader
    for name, says in _inputs(tmp_path):
        path = tmp_path / name
        for src in (str(path), path.read_bytes(), io.BytesIO(path.read_bytes())):
            with pytest.raises(quiver.InvalidError) as e:
                call(src)
            assert isinstance(e.value, ValueError)
            assert not isinstance(e.value, quiver.CapacityError)
            msg = str(e.value)
            assert says in msg or (says == "not Arrow" and "not an Arrow file" in msg), \
                "%s(%s): %s" % (name_, name, msg)
