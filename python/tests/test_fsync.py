"""fsync=False on every writer that takes a path: the same bytes, still a
temporary file renamed over the target, and no fsync at all (the default
fsyncs the file and its directory). The fsyncs are counted without strace:
a child interpreter runs the writers with a small LD_PRELOAD library that
wraps fsync/fdatasync and counts the calls."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import quiver

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
static unsigned long calls;
static int (*real_fsync)(int), (*real_fdatasync)(int);
int fsync(int fd) {
  __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  if (!real_fsync) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real_fsync(fd);
}
int fdatasync(int fd) {
  __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  if (!real_fdatasync) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real_fdatasync(fd);
}
unsigned long qvtest_fsync_calls(void) { return __atomic_load_n(&calls, __ATOMIC_RELAXED); }
"""

# Run in the child: each writer once with the default and once with
# fsync=False, into two directories; the fsync calls each made.
CHILD = textwrap.dedent(r"""
    import ctypes, io, json, os, sys
    import numpy as np, scipy.sparse as sp
    import quiver
    calls = ctypes.CDLL(None).qvtest_fsync_calls
    calls.restype = ctypes.c_ulong
    work = sys.argv[1]
    src = os.path.join(work, "src")
    os.mkdir(src)
    m = sp.random(40, 30, density=0.1, format="csr", random_state=3)
    tensor = os.path.join(src, "t.arrow")
    quiver.write_tensor(tensor, np.arange(24, dtype=np.float64).reshape(4, 6))
    msgs = os.path.join(src, "msgs.arrow")
    with open(msgs, "wb") as f:
        quiver.write_tensor(f, np.ones((2, 3), np.int32))
        quiver.write_sparse(f, m)
    table = os.path.join(src, "table.arrows")
    quiver.write_tensor_column(table, np.arange(60, dtype=np.int16).reshape(5, 3, 4))
    reader = lambda: quiver.read_stream(table)
    writers = {
        "write_tensor": lambda d, **k: quiver.write_tensor(d, np.eye(5), **k),
        "write_sparse": lambda d, **k: quiver.write_sparse(d, m, **k),
        "convert": lambda d, **k: quiver.convert(tensor, d, "coo", **k),
        "convert_dense": lambda d, **k: quiver.convert(tensor, d, "dense", **k),
        "write_stream": lambda d, **k: quiver.write_stream(d, reader(), compression="zstd", **k),
        "write_file": lambda d, **k: quiver.write_file(d, reader(), **k),
        "write_tensor_column": lambda d, **k: quiver.write_tensor_column(
            d, np.arange(120, dtype=np.float32).reshape(10, 3, 4), **k),
        "write_tensor_column_variable": lambda d, **k: quiver.write_tensor_column(
            d, [np.ones((2, 3)), None, np.zeros((2, 5))], file=True, **k),
        "write_sparse_column": lambda d, **k: quiver.write_sparse_column(d, m, **k),
        "migrate": lambda d, **k: quiver.migrate(tensor, d, **k),
        "migrate_split": lambda d, **k: quiver.migrate(msgs, d, split=True, **k),
        "migrate_back": lambda d, **k: quiver.migrate(table, d, to_messages=True, **k),
        "write_npy": lambda d, **k: quiver.write_npy(d, np.asfortranarray(np.ones((3, 4))), **k),
        "write_npz": lambda d, **k: quiver.write_npz(d, m, **k),
        "write_json": lambda d, **k: quiver.write_json(d, reader(), **k),
    }
    out = {}
    for name, write in writers.items():
        got = {}
        for label, kw in (("durable", {}), ("scratch", {"fsync": False})):
            d = os.path.join(work, label, name)
            os.makedirs(d)
            before = calls()
            write(os.path.join(d, "out.bin"), **kw)
            files = {f: open(os.path.join(d, f), "rb").read().hex() for f in sorted(os.listdir(d))}
            got[label] = {"fsyncs": calls() - before, "files": files}
        # a file object is never fsynced, and takes the keyword too
        before = calls()
        if name != "migrate_split":  # split needs a path
            write(io.BytesIO(), fsync=False)
        got["file_object_fsyncs"] = calls() - before
        out[name] = got
    print(json.dumps(out))
""")

WRITERS = ["write_tensor", "write_sparse", "convert", "convert_dense", "write_stream",
           "write_file", "write_tensor_column", "write_tensor_column_variable",
           "write_sparse_column", "migrate", "migrate_split", "migrate_back", "write_npy",
           "write_npz", "write_json"]


@pytest.fixture(scope="module")
def fsync_counts(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the fsync-counting LD_PRELOAD library")
    work = tmp_path_factory.mktemp("fsync")
    (work / "shim.c").write_text(SHIM)
    lib = work / "shim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(work / "shim.c"), "-ldl"],
                   check=True)
    env = dict(os.environ, LD_PRELOAD=str(lib))
    out = work / "out"
    out.mkdir()
    r = subprocess.run([sys.executable, "-c", CHILD, str(out)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", WRITERS)
def test_fsync_false_skips_the_fsyncs(fsync_counts, name):
    got = fsync_counts[name]
    # the default is durable: the file and its directory (a split migrate:
    # each file it writes)
    assert got["durable"]["fsyncs"] >= 2, got["durable"]["fsyncs"]
    assert got["scratch"]["fsyncs"] == 0
    assert got["file_object_fsyncs"] == 0
    # the same files with the same bytes, and no temporary file left behind
    assert got["scratch"]["files"] == got["durable"]["files"]
    assert all(not f.endswith(".tmp") for f in got["scratch"]["files"])


def test_split_migrate_fsyncs_every_file(fsync_counts):
    got = fsync_counts["migrate_split"]
    assert len(got["durable"]["files"]) == 2
    assert got["durable"]["fsyncs"] >= 2 * len(got["durable"]["files"])


def test_fsync_is_keyword_only(tmp_path):
    a = np.ones((2, 2))
    with pytest.raises(TypeError):
        quiver.write_tensor(str(tmp_path / "x.arrow"), a, None, False)  # type: ignore[misc]
    with pytest.raises(TypeError):
        quiver.write_tensor_column(str(tmp_path / "x.arrows"), a, "t", None, False, False)  # type: ignore[misc]
    with pytest.raises(TypeError):
        quiver.write_npy(str(tmp_path / "x.npy"), a, False, False)  # type: ignore[misc]
    assert not os.listdir(tmp_path)


def test_fsync_false_replaces_the_target_atomically(tmp_path):
    # still a temporary file renamed over the target: a new inode, the
    # target's mode kept, nothing else left in the directory
    p = tmp_path / "t.arrows"
    p.write_bytes(b"old")
    os.chmod(p, 0o640)
    ino = os.stat(p).st_ino
    quiver.write_tensor_column(str(p), np.zeros((4, 2), np.uint8), fsync=False)
    st = os.stat(p)
    assert st.st_ino != ino
    assert st.st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["t.arrows"]
    assert np.array_equal(quiver.read_tensor_column(str(p)), np.zeros((4, 2), np.uint8))
