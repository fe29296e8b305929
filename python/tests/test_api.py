"""The rest of the surface: messages(), convert(), docstrings, the GIL."""
import io
import subprocess
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import quiver


def test_messages_summaries(tmp_path):
    f = io.BytesIO()
    quiver.write_tensor(f, np.zeros((2, 3), np.int16), dim_names=["a", "b"])
    quiver.write_sparse(f, sp.eye(4, format="csc"))
    ms = list(quiver.messages(f.getvalue()))
    assert [m["kind"] for m in ms] == ["Tensor", "SparseTensor"]
    assert ms[0]["type"] == "int16" and ms[0]["shape"] == (2, 3) and ms[0]["dim_names"] == ("a", "b")
    assert ms[0]["offset"] == 0 and ms[1]["offset"] == ms[0]["metadata_length"] + ms[0]["body_length"] + 8
    assert ms[1]["format"] == "csc" and ms[1]["nnz"] == 4 and ms[1]["version"] == "V5"


def test_messages_is_lazy():
    # 300,000 messages then garbage: an iterator yields the first ones
    # before it reaches the garbage; one that decodes everything first
    # raises before yielding anything.
    f = io.BytesIO()
    quiver.write_tensor(f, np.zeros(1, np.int8))
    one = f.getvalue()
    data = one * 300000 + b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\x01" * 16
    it = quiver.messages(data)
    first = next(it)
    assert first["index"] == 0 and first["kind"] == "Tensor"
    assert next(it)["offset"] == len(one)
    with pytest.raises(quiver.InvalidError):
        for m in it:
            pass
    assert m["index"] == 299999


def test_messages_agree_with_the_cli(tmp_path, cli):
    path = tmp_path / "m.arrow"
    with open(path, "wb") as f:
        quiver.write_tensor(f, np.arange(6.0).reshape(2, 3))
        quiver.write_sparse(f, sp.eye(3, format="csr"))
    out = subprocess.run([cli, "inspect", str(path)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    rows = [line.split() for line in out[2:-1]]
    ms = list(quiver.messages(path))
    assert len(rows) == len(ms)
    for row, m in zip(rows, ms):
        assert [int(row[0]), row[1], row[2], int(row[3]), int(row[4])] == [
            m["offset"], m["kind"], m["version"], m["metadata_length"], m["body_length"]]


def test_convert_every_direction(tmp_path):
    dense = np.zeros((5, 4), np.float32)
    dense[0, 1] = 1
    dense[4, 3] = 2
    src = tmp_path / "d.arrow"
    quiver.write_tensor(src, dense, dim_names=["r", "c"])
    for to in ("coo", "csr", "csc", "csf"):
        out = tmp_path / (to + ".arrow")
        quiver.convert(src, out, to, index_type="int32")
        m = next(quiver.messages(out))
        assert m["format"] == to and m["dim_names"] == ("r", "c")
        back = tmp_path / (to + "-dense.arrow")
        quiver.convert(out, back, "dense")
        assert np.array_equal(quiver.read_tensor(back), dense)
        assert quiver.read_tensor_info(back)["dim_names"] == ("r", "c")
    quiver.convert(src, tmp_path / "copy.arrow", "dense")
    assert np.array_equal(quiver.read_tensor(tmp_path / "copy.arrow"), dense)


def test_every_public_name_has_a_docstring():
    for name in quiver.__all__:
        obj = getattr(quiver, name)
        assert obj.__doc__ and len(obj.__doc__.strip()) > 10, name
    for cls in (quiver.Tensor, quiver.RecordBatchReader, quiver._quiver._Sparse):
        for attr in dir(cls):
            if not attr.startswith("_") or attr in ("__dlpack__", "__dlpack_device__",
                                                     "__arrow_c_schema__", "__arrow_c_stream__"):
                assert getattr(cls, attr).__doc__, "%s.%s" % (cls.__name__, attr)


def test_the_gil_is_released_while_writing(tmp_path):
    """A Python thread keeps running while a large array goes to disk."""
    a = np.ones(64 << 20, np.uint8)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    start = time.perf_counter()
    for _ in range(3):
        quiver.write_tensor(tmp_path / "big.arrow", a)
    end = time.perf_counter()
    done.set()
    t.join()
    during = [x for x in ticks if start <= x <= end]
    # with the GIL held for the whole write the ticker could not run at all
    assert len(during) >= 3 or end - start < 0.01


def test_summaries_start_like_the_cli(tmp_path, cli):
    path = tmp_path / "s.arrow"
    with open(path, "wb") as f:
        quiver.write_tensor(f, np.zeros((2, 3), np.int16), dim_names=["a", "b"])
        quiver.write_sparse(f, sp.eye(3, format="csr"))
    out = subprocess.run([cli, "inspect", str(path)], capture_output=True, text=True,
                         check=True).stdout.splitlines()[2:-1]
    for line, m in zip(out, quiver.messages(path)):
        assert m["summary"] and m["summary"] in line, (m["summary"], line)
