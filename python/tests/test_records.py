"""Record batches through the Arrow PyCapsule interface, read back by a consumer
that is not quiver: a ctypes reader of the C Data Interface structs."""
import ctypes
import io
import subprocess

import numpy as np
import pytest

import quiver


from c_abi import (ARRAY_RELEASE, SCHEMA_RELEASE, ArrowArray, ArrowArrayStream, ArrowSchema,
                   capsule_new, capsule_pointer)


def consume(obj):
    """Reads a producer's stream as a consumer would: moves it out of the
    capsule, reads the schema and every batch, releases everything. Returns
    ({column: format}, [{column: int64 values or None}], total rows)."""
    cap = obj.__arrow_c_stream__()
    src = ArrowArrayStream.from_address(capsule_pointer(cap, b"arrow_array_stream"))
    stream = ArrowArrayStream()
    ctypes.memmove(ctypes.byref(stream), ctypes.byref(src), ctypes.sizeof(stream))
    src.release = type(src.release)()  # moved: the capsule's destructor must not release it
    schema = ArrowSchema()
    assert stream.get_schema(ctypes.byref(stream), ctypes.byref(schema)) == 0
    cols = [(schema.children[i].contents.name.decode(), schema.children[i].contents.format.decode())
            for i in range(schema.n_children)]
    batches, rows = [], 0
    while True:
        arr = ArrowArray()
        rc = stream.get_next(ctypes.byref(stream), ctypes.byref(arr))
        assert rc == 0, ctypes.string_at(stream.get_last_error(ctypes.byref(stream)))
        if not arr.release:
            break
        assert arr.n_children == len(cols)
        rows += arr.length
        values = {}
        for i, (name, fmt) in enumerate(cols):
            child = arr.children[i].contents
            if fmt == "l" and child.null_count == 0:
                buf = ctypes.cast(child.buffers[1], ctypes.POINTER(ctypes.c_int64))
                values[name] = [buf[child.offset + arr.offset + k] for k in range(arr.length)]
        batches.append(values)
        ARRAY_RELEASE(arr.release)(ctypes.byref(arr))
    SCHEMA_RELEASE(schema.release)(ctypes.byref(schema))
    stream.release(ctypes.byref(stream))
    return dict(cols), batches, rows


@pytest.fixture
def all_types(tmp_path, cli, root):
    path = tmp_path / "all_types.arrow"
    subprocess.run([cli, "integration", "--mode=json-to-arrow",
                    "--json=%s/tests/data/integration/all_types.json" % root,
                    "--arrow=%s" % path], check=True)
    return path


def validate(cli, root, path):
    r = subprocess.run([cli, "integration", "--mode=validate",
                        "--json=%s/tests/data/integration/all_types.json" % root,
                        "--arrow=%s" % path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_ctypes_consumer_reads_our_tables(all_types):
    r = quiver.read_file(all_types)
    assert r.num_batches == 2
    cols, batches, rows = consume(r)
    assert cols["i64"] == "l" and cols["str"] == "u" and len(cols) == 44
    assert rows > 0 and len(batches) == 2
    # the same through the stream reader (a new stream per call)
    cols2, batches2, rows2 = consume(quiver.read_stream(all_types))
    assert (cols2, batches2, rows2) == (cols, batches, rows)
    assert consume(r)[2] == rows
    assert [n for n, _ in r.columns] == list(cols)


def test_schema_capsule(all_types):
    cap = quiver.read_file(all_types).__arrow_c_schema__()
    s = ArrowSchema.from_address(capsule_pointer(cap, b"arrow_schema"))
    assert s.format == b"+s" and s.n_children == 44
    del cap  # the capsule releases it


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_write_stream_and_file_round_trip(tmp_path, cli, root, all_types, compression):
    stream_path = tmp_path / "s.arrows"
    subprocess.run("%s file-to-stream %s > %s" % (cli, all_types, stream_path), shell=True,
                   check=True)
    out = tmp_path / "out.arrow"
    quiver.write_file(out, quiver.read_stream(stream_path), compression=compression)
    validate(cli, root, out)
    f = io.BytesIO()
    quiver.write_stream(f, quiver.read_stream(out), compression=compression)
    kinds = [m["kind"] for m in quiver.messages(f.getvalue())]
    assert kinds[0] == "Schema" and kinds.count("RecordBatch") == 2
    if compression:
        assert any(m.get("compression") for m in quiver.messages(f.getvalue()))
    assert consume(quiver.read_stream(f.getvalue()))[2] == consume(quiver.read_file(out))[2]


class OneBatch:
    """A producer of __arrow_c_array__ only: quiver's own capsules re-wrapped."""

    def __init__(self, reader):
        self.reader = reader

    def __arrow_c_array__(self, requested_schema=None):
        cap = self.reader.__arrow_c_stream__()
        src = ArrowArrayStream.from_address(capsule_pointer(cap, b"arrow_array_stream"))
        return self.reader.__arrow_c_schema__(), _first_batch_capsule(src)


def _first_batch_capsule(stream):
    arr = ArrowArray()
    assert stream.get_next(ctypes.byref(stream), ctypes.byref(arr)) == 0
    _keep.append(arr)
    return capsule_new(ctypes.addressof(arr), b"arrow_array", None)


_keep: list[object] = []


def test_write_from_arrow_c_array(tmp_path, all_types):
    out = tmp_path / "one.arrows"
    quiver.write_stream(out, OneBatch(quiver.read_file(all_types)))
    r = quiver.read_stream(out)
    assert consume(r)[2] > 0
    assert sum(1 for m in quiver.messages(out) if m["kind"] == "RecordBatch") == 1


def test_record_batch_errors(tmp_path):
    with pytest.raises(TypeError):
        quiver.write_stream(io.BytesIO(), object())
    with pytest.raises(quiver.Error):
        quiver.read_stream(b"not arrow at all")
    with pytest.raises(quiver.Error):
        quiver.read_file(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    f = io.BytesIO()
    quiver.write_tensor(f, np.zeros(3))
    with pytest.raises(quiver.Error):
        quiver.read_stream(f.getvalue())


def test_file_to_file_keeps_everything(tmp_path, cli, root, all_types):
    """read_file -> write_file: the integration JSON still describes the copy
    (values, validity, dictionaries shared between fields)."""
    out = tmp_path / "copy.arrow"
    quiver.write_file(out, quiver.read_file(all_types))
    validate(cli, root, out)
    with open(all_types, "rb") as f:  # a file object is read whole
        assert quiver.read_file(f).num_batches == 2
