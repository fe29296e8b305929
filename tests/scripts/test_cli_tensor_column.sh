#!/usr/bin/env bash
# quiver tensor from-npy --as-column / stack / unstack, and tensor columns in
# cat and inspect: NumPy arrays of every dtype go .npy -> one-column table ->
# Tensor message -> .npy and come back bit for bit; errors exit 1 or 2.
set -uo pipefail
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "python3 with numpy not available: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec "$py" - "$QV_CLI" "$tmp" <<'PY'
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
    check(f"tensor {name} shape=[3, 5]" in r.stdout and "arrow.fixed_shape_tensor" in r.stdout,
          f"{name}: cat shows the tensor column: {r.stdout[:200]}")
    r = run("inspect", f"{tmp}/col.arrow")
    check("[tensor shape=[3, 5]]" in r.stdout, f"{name}: inspect: {r.stdout}")
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
