#!/usr/bin/env bash
# quiver tensor from-npy --as-column / stack / unstack, and tensor columns in
# cat and inspect: NumPy arrays of every dtype go .npy -> one-column table ->
# Tensor message -> .npy and come back bit for bit; errors exit 1 or 2.
# tensor stack of arrow.variable_shape_tensor columns (cells of one shape,
# with a permutation, a null cell, uniform_shape fixing an all-null column,
# shapes that differ) and of a Binary cell-form column (--extension), from
# tables written through quiver's integration JSON reader, checked by NumPy.
set -uo pipefail
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "python3 with numpy not available: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec "$py" - "$QV_CLI" "$tmp" <<'PY'
import json
import subprocess
import sys

import numpy as np

cli, tmp = sys.argv[1], sys.argv[2]
checks, failures = 0, []


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


rng = np.random.default_rng(13)
for name in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64"]:
    dt = np.dtype(name)
    a = (rng.standard_normal((4, 3, 5)) * 50).astype(dt)
    np.save(f"{tmp}/a.npy", a)
    r = run("tensor", "from-npy", f"{tmp}/a.npy", f"{tmp}/col.arrow", "--as-column",
            "--name", "cells")
    check(r.returncode == 0, f"{name}: from-npy --as-column: {r.stderr}")
    r = run("cat", f"{tmp}/col.arrow")
    cpp = {"float16": "halffloat", "float32": "float", "float64": "double"}.get(name, name)
    want = f"cells: extension<arrow.fixed_shape_tensor[value_type={cpp}, shape=[3,5]]>"
    check(want in r.stdout, f"{name}: cat shows the tensor column: {r.stdout[:200]}")
    r = run("inspect", f"{tmp}/col.arrow")
    check(want in r.stdout, f"{name}: inspect spells it as cat: {r.stdout}")
    r = run("tensor", "stack", f"{tmp}/col.arrow", f"{tmp}/t.arrow", "--column", "cells")
    check(r.returncode == 0, f"{name}: stack: {r.stderr}")
    r = run("tensor", "to-npy", f"{tmp}/t.arrow", f"{tmp}/back.npy")
    check(r.returncode == 0, f"{name}: to-npy: {r.stderr}")
    b = np.load(f"{tmp}/back.npy")
    check(b.dtype == dt and b.shape == a.shape and a.tobytes() == b.tobytes(),
          f"{name}: stack(from-npy --as-column) differs")
    r = run("tensor", "unstack", f"{tmp}/t.arrow", f"{tmp}/col2.arrow", "--file")
    check(r.returncode == 0, f"{name}: unstack: {r.stderr}")
    r = run("tensor", "stack", f"{tmp}/col2.arrow", f"{tmp}/t2.arrow")
    check(r.returncode == 0, f"{name}: stack of the file: {r.stderr}")
    run("tensor", "to-npy", f"{tmp}/t2.arrow", f"{tmp}/back2.npy")
    check(np.load(f"{tmp}/back2.npy").tobytes() == a.tobytes(), f"{name}: unstack/stack differs")


# ---- a permutation only where the layout needs one: an extent-1 dim of a
# C-order array keeps its place (Arrow C++ cannot build tensors from cells
# whose permutation only moves a dim of extent 1)
for shape, order, want in [((3, 1, 3), "C", "shape=[1,3]]"), ((3, 2, 1, 4), "C", "shape=[2,1,4]]"),
                           ((2, 3, 1), "C", "shape=[3,1]]")]:
    a = np.asarray(np.arange(np.prod(shape), dtype=np.uint64).reshape(shape), order=order)
    np.save(f"{tmp}/p.npy", a)
    r = run("tensor", "from-npy", f"{tmp}/p.npy", f"{tmp}/p.arrow", "--as-column")
    check(r.returncode == 0, f"{shape}: from-npy --as-column: {r.stderr}")
    r = run("inspect", f"{tmp}/p.arrow")
    check(f"[value_type=uint64, {want}>" in r.stdout,
          f"{shape}: cells {want} without a permutation: {r.stdout}")
    check("permutation" not in r.stdout, f"{shape}: no permutation: {r.stdout}")
    run("tensor", "from-npy", f"{tmp}/p.npy", f"{tmp}/pt.arrow")
    r = run("tensor", "unstack", f"{tmp}/pt.arrow", f"{tmp}/pu.arrow")
    check(r.returncode == 0 and "permutation" not in run("inspect", f"{tmp}/pu.arrow").stdout,
          f"{shape}: unstack writes no permutation")
    run("tensor", "stack", f"{tmp}/pu.arrow", f"{tmp}/ps.arrow")
    run("tensor", "to-npy", f"{tmp}/ps.arrow", f"{tmp}/pb.npy")
    check(np.array_equal(np.load(f"{tmp}/pb.npy"), a), f"{shape}: unstack -> stack keeps the values")
# a column-major 3-d array still needs (and gets) one
a = np.asfortranarray(np.arange(24, dtype=np.uint64).reshape(2, 3, 4))
np.save(f"{tmp}/f.npy", a)
r = run("tensor", "from-npy", f"{tmp}/f.npy", f"{tmp}/ft.arrow")
r = run("tensor", "unstack", f"{tmp}/ft.arrow", f"{tmp}/fu.arrow")
check(r.returncode == 0, f"F-order unstack: {r.stderr}")
run("tensor", "stack", f"{tmp}/fu.arrow", f"{tmp}/fs.arrow")
run("tensor", "to-npy", f"{tmp}/fs.arrow", f"{tmp}/fb.npy")
check(np.array_equal(np.load(f"{tmp}/fb.npy"), a), "F-order unstack -> stack keeps the values")

# ---- variable shape and Binary cell-form columns (integration JSON -> .arrow)
def int_field(bits, nullable=True):
    return {"name": "item", "nullable": nullable,
            "type": {"name": "int", "bitWidth": bits, "isSigned": True}, "children": []}


def ext_meta(name, meta):
    return [{"key": "ARROW:extension:name", "value": name},
            {"key": "ARROW:extension:metadata", "value": meta}]


def variable_field(name, meta):
    return {"name": name, "nullable": True, "type": {"name": "struct"},
            "metadata": ext_meta("arrow.variable_shape_tensor", meta),
            "children": [
                {"name": "data", "nullable": False, "type": {"name": "list"},
                 "children": [{"name": "item", "nullable": True,
                               "type": {"name": "floatingpoint", "precision": "SINGLE"},
                               "children": []}]},
                {"name": "shape", "nullable": False,
                 "type": {"name": "fixedsizelist", "listSize": 2},
                 "children": [int_field(32, False)]}]}


def variable_column(name, cells):
    """cells: numpy float32 arrays (physical, row-major) or None."""
    n = len(cells)
    offsets, values, shapes = [0], [], []
    for c in cells:
        flat = [] if c is None else [float(x) for x in c.ravel()]
        values += flat
        offsets.append(offsets[-1] + len(flat))
        shapes += [0, 0] if c is None else list(c.shape)
    return {"name": name, "count": n, "VALIDITY": [0 if c is None else 1 for c in cells],
            "children": [
                {"name": "data", "count": n, "VALIDITY": [1] * n, "OFFSET": offsets,
                 "children": [{"name": "item", "count": len(values),
                               "VALIDITY": [1] * len(values), "DATA": values}]},
                {"name": "shape", "count": n, "VALIDITY": [1] * n,
                 "children": [{"name": "item", "count": 2 * n, "VALIDITY": [1] * (2 * n),
                               "DATA": shapes}]}]}


def write_table(path, fields, columns, count):
    doc = {"schema": {"fields": fields},
           "batches": [{"count": count, "columns": columns}]}
    with open(f"{path}.json", "w") as f:
        json.dump(doc, f)
    r = run("integration", "--mode=json-to-arrow", f"--json={path}.json", f"--arrow={path}")
    check(r.returncode == 0, f"json-to-arrow {path}: {r.stderr}")


def stacked(path, *args):
    r = run("tensor", "stack", path, f"{tmp}/s.arrow", *args)
    if r.returncode != 0:
        return r, None
    r2 = run("tensor", "to-npy", f"{tmp}/s.arrow", f"{tmp}/s.npy")
    check(r2.returncode == 0, f"to-npy of a stack: {r2.stderr}")
    return r, np.load(f"{tmp}/s.npy")


cells = [(np.arange(6, dtype=np.float32) + 10 * i).reshape(2, 3) for i in range(3)]
small = np.arange(4, dtype=np.float32).reshape(2, 2)
meta = '{"dim_names": ["h", "w"], "permutation": [1, 0]}'
write_table(f"{tmp}/var.arrow",
            [variable_field("v", meta), variable_field("vn", meta),
             variable_field("vd", meta), variable_field("vu", '{"uniform_shape": [2, 3]}'),
             variable_field("v0", "")],
            [variable_column("v", cells), variable_column("vn", [cells[0], None, cells[2]]),
             variable_column("vd", [cells[0], None, small]),
             variable_column("vu", [None, None, None]),
             variable_column("v0", [None, None, None])], 3)
r = run("cat", f"{tmp}/var.arrow")
check("arrow.variable_shape_tensor" in r.stdout, f"cat of the variable columns: {r.stdout[:300]}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "v")
want = np.stack([c.T for c in cells])
check(r.returncode == 0 and t is not None and t.shape == (3, 3, 2) and np.array_equal(t, want),
      f"variable shape stack (permuted cells): {r.stderr} {t}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "vn")
check(r.returncode == 1 and "cell 1 is null" in r.stderr and "--fill-nulls" in r.stderr
      and f"{tmp}/var.arrow" in r.stderr and f"{tmp}/s.arrow" not in r.stderr,
      f"variable null refused, naming the input and --fill-nulls: {r.stderr}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "vn", "--fill-nulls")
want = np.stack([cells[0].T, np.zeros((3, 2), np.float32), cells[2].T])
check(r.returncode == 0 and t is not None and np.array_equal(t, want),
      f"variable null filled: {r.stderr} {t}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "vd", "--fill-nulls")
check(r.returncode == 1 and "cell 2 has shape [2, 2], cell 0 has [2, 3]" in r.stderr,
      f"variable shapes differ: {r.returncode} {r.stderr}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "vu", "--fill-nulls")
check(r.returncode == 0 and t is not None and t.shape == (3, 2, 3) and not t.any(),
      f"uniform_shape fixes an all-null column: {r.stderr} {t}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "vu", "--fill-nulls", "--max-output", "16")
check(r.returncode == 1 and "over the limit of 16" in r.stderr, f"--max-output: {r.stderr}")
r, t = stacked(f"{tmp}/var.arrow", "--column", "v0", "--fill-nulls")
check(r.returncode == 1 and "the stacked shape is unknown" in r.stderr,
      f"all-null without uniform_shape: {r.stderr}")

# Binary cells of int16 [3, 2], row-major little endian; cell 1 null
b = [(np.arange(6, dtype="<i2") * (i + 1) - 3).reshape(3, 2) for i in range(3)]
data = [b[0], None, b[2]]
offsets = [0]
for c in data:
    offsets.append(offsets[-1] + (0 if c is None else c.nbytes))
write_table(f"{tmp}/bin.arrow",
            [{"name": "b", "nullable": True, "type": {"name": "binary"}, "children": [],
              "metadata": ext_meta("my.tensor", '{"type": "int16", "shape": [3, 2]}')}],
            [{"name": "b", "count": 3, "VALIDITY": [0 if c is None else 1 for c in data],
              "OFFSET": offsets,
              "DATA": ["" if c is None else c.tobytes().hex().upper() for c in data]}], 3)
r, t = stacked(f"{tmp}/bin.arrow", "--column", "b")
check(r.returncode == 1 and "not a tensor column" in r.stderr,
      f"Binary column without --extension: {r.stderr}")
r, t = stacked(f"{tmp}/bin.arrow", "--extension", "my.tensor")
check(r.returncode == 1 and "cell 1 is null" in r.stderr, f"Binary null refused: {r.stderr}")
r, t = stacked(f"{tmp}/bin.arrow", "--column", "b", "--extension", "my.tensor", "--fill-nulls")
want = np.stack([b[0], np.zeros((3, 2), "<i2"), b[2]])
check(r.returncode == 0 and t is not None and t.dtype == np.int16 and np.array_equal(t, want),
      f"Binary cells stacked: {r.stderr} {t}")

# --threads: a Fortran-order array of 8 MiB is copied row-major by unstack
# (split over threads from 4 MiB; test_tensor_column proves the split runs):
# the same bytes for 1 and 3 threads, and it stacks back to the array
f = np.asfortranarray(rng.standard_normal((64, 128, 128)))
np.save(f"{tmp}/f.npy", f)
outs = []
for th in ["1", "3"]:
    r = run("tensor", "from-npy", f"{tmp}/f.npy", f"{tmp}/f{th}.arrow", "--as-column",
            "--threads", th)
    check(r.returncode == 0, f"from-npy --as-column --threads {th}: {r.stderr}")
    with open(f"{tmp}/f{th}.arrow", "rb") as fh:
        outs.append(fh.read())
check(len(outs[0]) > 8 << 20 and outs[0] == outs[1], "--threads 1 and 3 write different columns")
r, t = stacked(f"{tmp}/f3.arrow", "--threads", "2")
check(r.returncode == 0 and t is not None and np.array_equal(t, f),
      f"stack --threads 2 of the unstacked Fortran array: {r.stderr}")
r = run("tensor", "from-npy", f"{tmp}/f.npy", f"{tmp}/x.arrow", "--as-column", "--threads", "0")
check(r.returncode == 2 and "--threads" in r.stderr, f"--threads 0: {r.returncode} {r.stderr}")
r = run("tensor", "unstack", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--threads", "2")
check(r.returncode == 0, f"unstack --threads 2: {r.stderr}")
for th in ["1", "2"]:
    r, t = stacked(f"{tmp}/var.arrow", "--column", "vn", "--fill-nulls", "--threads", th)
    want = np.stack([cells[0].T, np.zeros((3, 2), np.float32), cells[2].T])
    check(r.returncode == 0 and t is not None and np.array_equal(t, want),
          f"stack --fill-nulls --threads {th}: {r.stderr}")

r = run("tensor", "stack", f"{tmp}/col.arrow", f"{tmp}/x.arrow", "--column", "nope")
check(r.returncode == 1 and "no column named 'nope'" in r.stderr, f"missing column: {r.stderr}")
r = run("tensor", "stack", f"{tmp}/a.npy", f"{tmp}/x.arrow")
check(r.returncode == 1, f"stack of a .npy: {r.returncode} {r.stderr}")
r = run("tensor", "unstack", f"{tmp}/col.arrow", f"{tmp}/x.arrow")
check(r.returncode == 1, f"unstack of a table: {r.returncode} {r.stderr}")
r = run("tensor", "stack", f"{tmp}/col.arrow")
check(r.returncode == 2, f"stack without OUT: {r.returncode}")
r = run("tensor", "unstack", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--bogus")
check(r.returncode == 2, f"unknown option: {r.returncode}")
np.save(f"{tmp}/s.npy", np.float32(3))
r = run("tensor", "from-npy", f"{tmp}/s.npy", f"{tmp}/x.arrow", "--as-column")
check(r.returncode == 1 and "0-d tensor" in r.stderr, f"0-d: {r.stderr}")
print(f"cli tensor column: {checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
PY
