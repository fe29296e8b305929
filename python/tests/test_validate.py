"""quiver.validate says what `quiver validate` says: the same verdict for valid
inputs, the same message (after the path) for invalid ones."""
import glob
import os
import subprocess

import pytest

import quiver

GOLD = os.path.join(os.path.dirname(os.environ.get("QV_SOURCE_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..")), "shared", "testdata", "arrow-testing", "integration")


def _cli(cli, path):
    r = subprocess.run([cli, "validate", path], capture_output=True, text=True)
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def _inputs(root):
    files = sorted(glob.glob(os.path.join(GOLD, "cpp-21.0.0", "generated_*.arrow_file")))[:12]
    files += sorted(glob.glob(os.path.join(GOLD, "cpp-21.0.0", "generated_*.stream")))[:6]
    files += sorted(glob.glob(os.path.join(GOLD, "1.0.0-bigendian", "*.arrow_file")))[:3]
    for top in ("fuzz/corpus", "tests/data"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(dirpath, f) for f in sorted(names)][:15]
    return files


def test_same_verdict_and_message_as_the_cli(root, cli):
    files = _inputs(root)
    assert len(files) > 50
    seen = set()
    for f in files:
        rc, out, err = _cli(cli, f)
        if rc == 2:
            continue
        for src in (f, open(f, "rb").read()):
            try:
                verdict = quiver.validate(src)
            except quiver.NotSupportedError as e:
                assert rc == 3, (f, err)
                assert err == f"quiver validate: {f}: {e}", f
                seen.add(3)
            except quiver.InvalidError as e:
                assert rc == 1, (f, err)
                assert err == f"quiver validate: {f}: {e}", f
                seen.add(1)
            else:
                assert rc == 0, (f, err)
                assert out == f"{f}: {verdict}"
                seen.add(0)
    assert seen == {0, 1, 3} or seen >= {0, 1}, seen


def test_verdict_text(tmp_path):
    p = os.path.join(GOLD, "cpp-21.0.0", "generated_primitive.arrow_file")
    if not os.path.exists(p):
        pytest.skip("gold files missing")
    assert quiver.validate(p).startswith("valid Arrow file (")
    assert quiver.validate(p, threads=2) == quiver.validate(p)
    data = open(p.replace(".arrow_file", ".stream"), "rb").read()
    assert quiver.validate(data).startswith("valid Arrow stream (")
    with pytest.raises(quiver.InvalidError, match="^invalid: "):
        quiver.validate(data[:len(data) // 2])
    with pytest.raises(ValueError):
        quiver.validate(p, threads=-1)
