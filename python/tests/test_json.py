"""quiver.read_json / write_json: Arrow's integration JSON from Python, checked
against the gold files (their .json.gz and .arrow_file) and quiver's CLI."""
import os
import subprocess

import pytest

import quiver

GOLD = os.path.join(os.path.dirname(os.environ.get("QV_SOURCE_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..")), "shared", "testdata", "arrow-testing", "integration",
    "cpp-21.0.0")
NAMES = ["generated_primitive", "generated_nested", "generated_dictionary", "generated_union",
         "generated_map", "generated_decimal", "generated_run_end_encoded", "generated_binary_view",
         "generated_custom_metadata", "generated_primitive_no_batches", "generated_datetime"]


def _values(table):
    out = []
    for c in table.columns:
        try:
            out.append(c.to_pylist())
        except quiver.NotSupportedError as e:  # datetimes beyond Python's range
            out.append(str(e))
    return out


def _gold(name):
    path = os.path.join(GOLD, name)
    if not os.path.exists(path + ".json.gz"):
        pytest.skip(f"gold file {name} missing")
    return path


@pytest.mark.parametrize("name", NAMES)
def test_read_json_equals_the_arrow_file(name):
    path = _gold(name)
    t = quiver.read_json(path + ".json.gz")
    a = quiver.read_file(path + ".arrow_file").read_all()
    assert t.schema == a.schema
    assert [len(b) for b in t.batches] == [len(b) for b in a.batches]
    assert _values(t) == _values(a)
    with open(path + ".json.gz", "rb") as f:
        assert len(quiver.read_json(f)) == len(a)


@pytest.mark.parametrize("name", NAMES)
def test_write_json_is_what_the_cli_validates(tmp_path, cli, name):
    path = _gold(name)
    out = tmp_path / "out.json"
    quiver.write_json(str(out), quiver.read_file(path + ".arrow_file"))
    r = subprocess.run([cli, "integration", "--mode=validate", f"--json={out}",
                        f"--arrow={path}.arrow_file"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    back = quiver.read_json(str(out))
    assert _values(back) == _values(quiver.read_file(path + ".arrow_file").read_all())
    # bytes of a stream too, on one line
    data = open(path + ".stream", "rb").read()
    quiver.write_json(str(tmp_path / "one.json"), data, indent=None)
    text = (tmp_path / "one.json").read_text()
    assert text.count("\n") <= 1
    assert _values(quiver.read_json(text.encode())) == _values(back)


def test_json_refusals(tmp_path):
    with pytest.raises(ValueError):
        quiver.read_json(b'{"schema": {"fields": [{"name": "a"}]}, "batches": []}')
    with pytest.raises(ValueError):
        quiver.read_json(b"not json")
    path = _gold("generated_primitive")
    with pytest.raises(quiver.CapacityError):
        quiver.write_json(str(tmp_path / "x.json"), path + ".stream", max_output=100)
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(ValueError, match="indent"):
        quiver.write_json(str(tmp_path / "x.json"), path + ".stream", indent=0)
