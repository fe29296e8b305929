"""Every hostile file of the C test suite (fuzz corpora, tests/data) read
through every reader raises a quiver exception or succeeds; never crashes.
The files are read in a child interpreter so a crash fails this test instead
of killing the test runner."""
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import sys, numpy as np, quiver
    count = 0
    for path in sys.argv[1:]:
        print(path, flush=True)
        data = open(path, "rb").read()
        for src in (path, data):
            for call in (lambda: quiver.read_tensor(src), lambda: quiver.read_tensor_info(src),
                         lambda: quiver.read_sparse(src), lambda: list(quiver.messages(src)),
                         lambda: quiver.read_tensor(src, 1), lambda: quiver.read_sparse(src, 1)):
                try:
                    out = call()
                    if isinstance(out, np.ndarray):
                        out.sum()  # touch every byte of the view
                    elif hasattr(out, "toarray") and out.shape[0] * out.shape[1] < 1 << 24:
                        out.toarray()
                except quiver.Error:
                    count += 1
            for opener in (quiver.read_stream, quiver.read_file):
                try:
                    r = opener(src)
                    import io
                    quiver.write_stream(io.BytesIO(), r)
                except quiver.Error:
                    count += 1
    print("done", count)
""")


def hostile_files(root):
    out = []
    for top in ("fuzz/corpus", "tests/data"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            out += [os.path.join(dirpath, f) for f in sorted(files)]
    return out


def test_every_hostile_file_raises_a_quiver_exception(root):
    files = hostile_files(root)
    assert len(files) > 100, "the fuzz corpora are missing"
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", CHILD] + files, capture_output=True, text=True,
                       env=env, timeout=600)
    last = r.stdout.strip().splitlines()[-1:] or ["(no output)"]
    assert r.returncode == 0, "crashed (status %d) on %s\n%s" % (r.returncode, last[0], r.stderr[-3000:])
    assert last[0].startswith("done "), r.stdout[-2000:]
