"""quiver.flight: the directory server and the client, in one process."""
import os
import shutil

import pytest

import quiver
import quiver.flight

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "examples", "data")


@pytest.fixture
def served(tmp_path):
    shutil.copy(os.path.join(DATA, "arrow_cpp_record_batches.arrow"), tmp_path / "rb.arrow")
    srv = quiver.flight.serve(tmp_path, port=0, allow_put=True)
    yield srv, tmp_path
    srv.stop()


def test_list_info_get_put_action(served, tmp_path_factory):
    srv, d = served
    c = quiver.flight.connect(srv.uri, timeout=30)
    flights = c.list()
    assert [f["path"] for f in flights] == ["rb.arrow"]
    info = c.info("rb.arrow")
    assert info["total_records"] == 9
    assert info["total_bytes"] == os.path.getsize(d / "rb.arrow")
    assert info["schema"][:4] == b"\xff\xff\xff\xff"
    out = tmp_path_factory.mktemp("out") / "got.arrows"
    quiver.write_stream(str(out), c.get("rb.arrow"))
    want = quiver.read_file(str(d / "rb.arrow"))
    got = quiver.read_stream(str(out))
    assert got.columns == want.columns
    # the fetched stream uploaded again, under a new name
    res = c.put("copy.arrow", quiver.read_stream(str(out)))
    assert res == [b"stored copy.arrow"]
    assert quiver.read_file(str(d / "copy.arrow")).columns == want.columns
    assert c.action("list-paths") == [b"copy.arrow", b"rb.arrow"]
    with pytest.raises(quiver.InvalidError, match="ALREADY_EXISTS"):
        c.put("copy.arrow", quiver.read_stream(str(out)))
    with pytest.raises(quiver.InvalidError, match="NOT_FOUND"):
        c.info("missing.arrow")


def test_stream_outlives_client(served, tmp_path_factory):
    srv, _ = served
    s = quiver.flight.connect(srv.uri).get("rb.arrow")  # the client object is gone
    out = tmp_path_factory.mktemp("out") / "x.arrows"
    quiver.write_stream(str(out), s)
    assert quiver.read_stream(str(out)).columns
    with pytest.raises(ValueError):
        s.__arrow_c_stream__()


def test_token(tmp_path):
    shutil.copy(os.path.join(DATA, "arrow_cpp_record_batches.arrow"), tmp_path / "rb.arrow")
    with quiver.flight.serve(tmp_path, token="t0k") as srv:
        with pytest.raises(quiver.InputOutputError, match="UNAUTHENTICATED"):
            quiver.flight.connect(srv.uri).list()
        assert len(quiver.flight.connect(srv.uri, token="t0k").list()) == 1


def test_bad_uri():
    with pytest.raises(quiver.Error):
        quiver.flight.connect("http://nowhere:1")
