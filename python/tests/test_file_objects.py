"""Binary file objects as sources: read through qv_source_new_callback as the
reader needs bytes (not read whole first), their exceptions passed on, the
object kept alive by the reader, and every common kind of object (BytesIO, a
file, a pipe, a socket) giving what a path gives."""
import concurrent.futures
import ctypes
import gc
import io
import os
import socket
import sys
import threading
import weakref
from typing import Any, Callable, List, Set

import numpy as np
import pytest
import scipy.sparse as sp

import quiver

from c_abi import ARRAY_RELEASE, ArrowArray, ArrowArrayStream, capsule_pointer

EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"


@pytest.fixture
def gold(root):
    return os.path.join(root, "examples", "data", "arrow_cpp_record_batches.arrow")


def _many_batches(gold, copies=50):
    """An Arrow stream of the gold file's Schema, dictionary and its two
    record batches repeated `copies` times: 2 * copies batches."""
    f = io.BytesIO()
    quiver.write_stream(f, quiver.read_file(gold))
    one = f.getvalue()
    ms = list(quiver.messages(one))
    cut = [(m["offset"], m["offset"] + 8 + m["metadata_length"] + m["body_length"]) for m in ms]
    kinds = [m["kind"] for m in ms]
    assert kinds == ["Schema", "DictionaryBatch", "RecordBatch", "RecordBatch"]
    head = one[cut[0][0]:cut[1][1]]
    batches = one[cut[2][0]:cut[3][1]]
    return head + batches * copies + EOS


class Chunky:
    """read() only (no readinto, no seek), at most 1..7 bytes per call,
    counting what it has handed out."""

    def __init__(self, data):
        self.data = data
        self.pos = 0
        self.calls = 0

    def read(self, n=-1):
        self.calls += 1
        k = min(n if n >= 0 else len(self.data), 1 + self.calls % 7)
        out = self.data[self.pos:self.pos + k]
        self.pos += len(out)
        return out


def _rows(reader):
    return [b.column("i32").to_pylist() for b in reader]


def test_stream_from_short_reads(gold):
    data = _many_batches(gold)
    want = _rows(quiver.read_stream(data))
    assert len(want) == 100
    src = Chunky(data)
    assert _rows(quiver.read_stream(src)) == want
    assert src.pos == len(data) and src.calls > len(data) // 7  # it went through read(), in pieces
    src = Chunky(data)
    assert [m["kind"] for m in quiver.messages(src)] == [m["kind"] for m in quiver.messages(data)]


def test_first_batch_before_the_object_is_exhausted(gold):
    data = _many_batches(gold)
    src = Chunky(data)
    it = iter(quiver.read_stream(src))
    first = next(it)
    assert first.column("i32").to_pylist() == _rows(quiver.read_stream(data))[0]
    assert src.pos < len(data) // 10, "the reader read far ahead of the first batch"
    assert len(list(it)) == 99 and src.pos == len(data)


def test_first_batch_from_a_pipe_before_the_writer_is_done(gold):
    # The writer sends the Schema and the first batches, then waits until the
    # reader has its first batch before sending the rest: a reader that read
    # the pipe whole would only see the first batch after the writer gave up.
    data = _many_batches(gold)
    first_part = len(data) // 5
    r, w = os.pipe()
    got_first = threading.Event()
    waited = []

    def writer():
        with os.fdopen(w, "wb") as out:
            out.write(data[:first_part])
            out.flush()
            waited.append(got_first.wait(60))
            out.write(data[first_part:])

    t = threading.Thread(target=writer)
    t.start()
    with os.fdopen(r, "rb") as pipe:
        it = iter(quiver.read_stream(pipe))
        first = next(it)
        got_first.set()
        rest = list(it)
    t.join()
    assert waited == [True], "the first batch came only after the whole input"
    assert first.column("i32").to_pylist() == _rows(quiver.read_stream(data))[0]
    assert len(rest) == 99


class Failing:
    def __init__(self, data, after):
        self.data, self.after, self.pos = data, after, 0

    def read(self, n=-1):
        if self.pos >= self.after:
            raise ConnectionResetError("the peer went away")
        out = self.data[self.pos:self.pos + min(n, 100)]
        self.pos += len(out)
        return out


class _Gone(ConnectionResetError):
    pass


class _FailingOnWorkers:
    """read() fails once `after` bytes are out, with a new exception each
    time (weakly recorded in `raised`), noting the thread it ran on."""

    raised: List[Any] = []
    threads: Set[int] = set()

    def __init__(self, data, after):
        self.data, self.after, self.pos = data, after, 0

    def read(self, n=-1):
        _FailingOnWorkers.threads.add(threading.get_ident())
        if self.pos >= self.after:
            e = _Gone("the peer went away")
            _FailingOnWorkers.raised.append(weakref.ref(e))
            raise e
        out = self.data[self.pos:self.pos + min(n, 1 << 16)]
        self.pos += len(out)
        return out


def _pull_in_c(cap):
    """What a C consumer on its own thread does with a stream capsule
    (ctypes drops the GIL around each call): get_next until the end or an
    error, then release. (the last status, get_last_error's text)."""
    s = ArrowArrayStream.from_address(capsule_pointer(cap, b"arrow_array_stream"))
    while True:
        a = ArrowArray()
        rc = s.get_next(ctypes.pointer(s), ctypes.pointer(a))
        if rc != 0 or not a.release:
            break
        ARRAY_RELEASE(a.release)(ctypes.byref(a))
    err = s.get_last_error(ctypes.pointer(s))
    msg = ctypes.string_at(err).decode() if rc and err else ""
    s.release(ctypes.pointer(s))
    return rc, msg


def test_worker_thread_failures_do_not_outlive_the_reader(gold):
    """10,000 reads failing on worker threads, whose consumer never raises
    (a C consumer of the reader's stream): each exception, its traceback and
    frames, goes when its reader is freed (on the worker or elsewhere); it
    used to stay on the worker thread until that thread's next failure, and
    for good once the thread exited."""
    data = _many_batches(gold)
    first_batch = [m["offset"] for m in quiver.messages(data) if m["kind"] == "RecordBatch"][0]
    _FailingOnWorkers.raised.clear()
    _FailingOnWorkers.threads.clear()
    main = threading.get_ident()
    kept = []

    def work(k):
        reader = quiver.read_stream(_FailingOnWorkers(data, first_batch + 16))
        rc, msg = _pull_in_c(reader.__arrow_c_stream__())
        assert rc != 0 and "read() raised _Gone: the peer went away" in msg, (rc, msg)
        if k % 2:
            kept.append(reader)  # freed on the main thread below; the others here

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for f in [pool.submit(work, k) for k in range(10000)]:
            f.result()
    assert len(_FailingOnWorkers.raised) == 10000
    assert _FailingOnWorkers.threads - {main}  # the reads ran on the workers
    assert kept
    kept.clear()
    gc.collect()
    alive = sum(r() is not None for r in _FailingOnWorkers.raised)
    assert alive == 0, f"{alive} exceptions outlived their readers"
    # on the calling thread the exception still propagates as itself, from a
    # read and from the seek that opening a seekable object makes
    with pytest.raises(_Gone):
        list(quiver.read_stream(_FailingOnWorkers(data, first_batch + 16)))
    with pytest.raises(_Gone):  # quiver's own consumers of the reader's stream
        quiver.table_to_tensor(quiver.read_stream(_FailingOnWorkers(data, first_batch + 16)),
                               columns=["i32"])
    with pytest.raises(_Gone):
        quiver.write_stream(io.BytesIO(), quiver.read_stream(_FailingOnWorkers(data, first_batch + 16)))
    with pytest.raises(_Gone):
        quiver.write_json(io.BytesIO(), quiver.read_stream(_FailingOnWorkers(data, first_batch + 16)))

    class SeekFails(io.BytesIO):
        def seek(self, *args):
            e = _Gone("cannot seek now")
            _FailingOnWorkers.raised.append(weakref.ref(e))
            raise e

    with pytest.raises(_Gone, match="cannot seek now"):
        quiver.read_stream(SeekFails(data))
    gc.collect()
    assert all(r() is None for r in _FailingOnWorkers.raised)


def test_exceptions_from_read_propagate(gold):
    data = _many_batches(gold)
    # while opening (the Schema)
    with pytest.raises(ConnectionResetError, match="the peer went away") as e:
        quiver.read_stream(Failing(data, 0))
    if sys.version_info >= (3, 11):  # add_note: quiver's message rides along
        assert any(n.startswith("quiver: ") and "read() raised ConnectionResetError" in n
                   for n in e.value.__notes__)
    # in the middle of the batches
    it = iter(quiver.read_stream(Failing(data, len(data) // 2)))
    assert next(it) is not None
    with pytest.raises(ConnectionResetError, match="the peer went away"):
        for _ in it:
            pass
    # the one-message readers too
    f = io.BytesIO()
    quiver.write_tensor(f, np.arange(100, dtype=np.int32))
    with pytest.raises(ConnectionResetError):
        quiver.read_tensor(Failing(f.getvalue(), 50))

    class Raises:
        def read(self, n=-1):
            raise KeyError("odd")

    with pytest.raises(KeyError):
        quiver.read_tensor(Raises())


def test_bad_read_results_are_input_output_errors():
    class Text:
        def read(self, n=-1):
            return "not bytes"

    with pytest.raises(quiver.InputOutputError, match="not bytes.*binary mode"):
        quiver.read_tensor(Text())

    class TooMuch:
        def read(self, n=-1):
            return b"\0" * (n + 1)

    with pytest.raises(quiver.InputOutputError, match=r"returned \d+ bytes"):
        quiver.read_tensor(TooMuch())
    with pytest.raises(quiver.InvalidError, match="empty input"):
        quiver.read_tensor(io.BytesIO())


def test_the_reader_keeps_the_object_alive(gold):
    data = _many_batches(gold)
    src = Chunky(data)
    alive = weakref.ref(src)
    reader = quiver.read_stream(src)
    del src
    gc.collect()
    assert alive() is not None  # the reader holds it
    assert len(list(reader)) == 100
    del reader
    gc.collect()
    assert alive() is None  # and lets it go with the reader


def test_a_file_object_read_twice(gold):
    data = _many_batches(gold)
    want = _rows(quiver.read_stream(data))
    # a seekable object: each pass seeks back to where the input started
    buf = io.BytesIO(b"junk" + data)
    buf.seek(4)
    r = quiver.read_stream(buf)
    assert _rows(r) == want and _rows(r) == want
    # a non-seekable one is read once, and says so
    r = quiver.read_stream(Chunky(data))
    assert _rows(r) == want
    with pytest.raises(quiver.InputOutputError, match="cannot seek is read once"):
        list(r)


def _socket_file(data):
    a, b = socket.socketpair()

    def send():
        with a:
            a.sendall(data)

    t = threading.Thread(target=send)
    t.start()
    return b, b.makefile("rb"), t


@pytest.mark.parametrize("kind", ["bytesio", "file", "pipe", "socket", "chunky"])
def test_every_kind_of_object(tmp_path, gold, kind):
    stream = _many_batches(gold, copies=3)
    f = io.BytesIO()
    quiver.write_tensor(f, np.arange(12, dtype=np.float64).reshape(3, 4))
    tensor = f.getvalue()
    f = io.BytesIO()
    quiver.write_sparse(f, sp.random(20, 30, density=0.1, format="csr", random_state=1))
    sparse = f.getvalue()
    arrow_file = open(gold, "rb").read()
    cases = [
        (stream, lambda s: _rows(quiver.read_stream(s))),
        (arrow_file, lambda s: _rows(quiver.read_file(s))),
        (tensor, lambda s: quiver.read_tensor(s).tolist()),
        (sparse, lambda s: quiver.read_sparse(s).toarray().tolist()),
        (stream, lambda s: [m["kind"] for m in quiver.messages(s)]),
    ]
    for data, read in cases:
        want = read(data)
        path = tmp_path / "in.arrow"
        path.write_bytes(data)
        closers: List[Callable[[], None]] = []
        obj: Any
        if kind == "bytesio":
            obj = io.BytesIO(data)
        elif kind == "file":
            obj = open(path, "rb")
        elif kind == "pipe":
            r, w = os.pipe()

            def feed(w=w, data=data):
                with os.fdopen(w, "wb") as out:
                    out.write(data)

            t = threading.Thread(target=feed)
            t.start()
            obj = os.fdopen(r, "rb")
            closers.append(t.join)
        elif kind == "socket":
            sock, obj, t = _socket_file(data)
            closers += [t.join, sock.close]
        else:
            obj = Chunky(data)
        try:
            assert read(obj) == want
        finally:
            if hasattr(obj, "close"):
                obj.close()
            for c in closers:
                c()
