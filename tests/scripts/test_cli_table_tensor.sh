#!/usr/bin/env bash
# quiver tensor from-table: a table of numeric columns (two batches, written
# through quiver's integration JSON reader) -> one Tensor message, checked
# with NumPy through tensor to-npy: the merged type, row- and column-major,
# --columns, --null-to-nan; errors exit 1 (nulls, a string column, a missing
# column), 3 (float16 mixed) and 2 (usage).
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


def int_type(bits, signed):
    return {"name": "int", "bitWidth": bits, "isSigned": signed}


TYPES = {"i32": int_type(32, True), "u16": int_type(16, False), "i16": int_type(16, True),
         "f32": {"name": "floatingpoint", "precision": "SINGLE"},
         "f16": {"name": "floatingpoint", "precision": "HALF"},
         "utf8": {"name": "utf8"}}


def write_table(path, cols, batches):
    """cols: [(name, type key)]; batches: [[values or None per column]]."""
    fields = [{"name": n, "nullable": True, "type": TYPES[t], "children": []} for n, t in cols]
    out = []
    for b in batches:
        count = len(b[0])
        columns = []
        for (n, t), vals in zip(cols, b):
            col = {"name": n, "count": count, "VALIDITY": [0 if v is None else 1 for v in vals]}
            if t == "utf8":
                s = ["" if v is None else str(v) for v in vals]
                offs = [0]
                for x in s:
                    offs.append(offs[-1] + len(x))
                col["OFFSET"], col["DATA"] = offs, s
            else:
                col["DATA"] = [0 if v is None else v for v in vals]
            columns.append(col)
        out.append({"count": count, "columns": columns})
    with open(f"{path}.json", "w") as f:
        json.dump({"schema": {"fields": fields}, "batches": out}, f)
    r = run("integration", "--mode=json-to-arrow", f"--json={path}.json", f"--arrow={path}")
    check(r.returncode == 0, f"json-to-arrow {path}: {r.stderr}")


def to_numpy(arrow):
    r = run("tensor", "to-npy", arrow, f"{tmp}/out.npy")
    check(r.returncode == 0, f"to-npy: {r.stderr}")
    return np.load(f"{tmp}/out.npy") if r.returncode == 0 else None


cols = [("a", "u16"), ("b", "i16"), ("c", "f32")]
write_table(f"{tmp}/t.arrow", cols, [[[1, 2], [10, 20], [0.5, 1.5]], [[3], [30], [2.5]]])
want = np.array([[1, 10, 0.5], [2, 20, 1.5], [3, 30, 2.5]], dtype=np.float64)
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow")
check(r.returncode == 0, f"from-table: {r.stderr}")
got = to_numpy(f"{tmp}/x.arrow")
check(got is not None and got.dtype == np.float64 and np.array_equal(got, want)
      and got.flags.c_contiguous, f"row-major: {got!r}")
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--column-major")
check(r.returncode == 0, f"--column-major: {r.stderr}")
r2 = run("inspect", f"{tmp}/x.arrow")
check("float64 shape=[3, 3] strides=[8, 24] (column-major)" in r2.stdout,
      f"column-major strides: {r2.stdout}")
got = to_numpy(f"{tmp}/x.arrow")
check(got is not None and np.array_equal(got, want), f"column-major values: {got!r}")
# uint16 + int16 = int32, in the order --columns gives
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--columns", "b,a")
check(r.returncode == 0, f"--columns: {r.stderr}")
got = to_numpy(f"{tmp}/x.arrow")
check(got is not None and got.dtype == np.int32 and np.array_equal(got, [[10, 1], [20, 2], [30, 3]]),
      f"--columns b,a: {got!r}")
r = subprocess.run([cli, "tensor", "from-table", f"{tmp}/t.arrow", "-", "--columns", "a"],
                   capture_output=True)
check(r.returncode == 0 and len(r.stdout) > 0, f"to stdout: {r.stderr}")

# nulls
write_table(f"{tmp}/n.arrow", [("x", "i32"), ("y", "f32")], [[[1, None, 3], [4.0, 5.0, None]]])
r = run("tensor", "from-table", f"{tmp}/n.arrow", f"{tmp}/x.arrow")
check(r.returncode == 1 and "column 'x' has a null at row 1" in r.stderr
      and "null_to_nan" in r.stderr, f"nulls refused: {r.returncode} {r.stderr}")
r = run("tensor", "from-table", f"{tmp}/n.arrow", f"{tmp}/x.arrow", "--null-to-nan")
check(r.returncode == 0, f"--null-to-nan: {r.stderr}")
got = to_numpy(f"{tmp}/x.arrow")
check(got is not None and got.dtype == np.float64 and
      np.array_equal(got, [[1, 4], [np.nan, 5], [3, np.nan]], equal_nan=True), f"NaN: {got!r}")
r = run("tensor", "from-table", f"{tmp}/n.arrow", f"{tmp}/x.arrow", "--null-to-nan", "--columns", "x")
got = to_numpy(f"{tmp}/x.arrow")
check(got is not None and got.dtype == np.float64, f"int32 with --null-to-nan: {got!r}")

# errors
write_table(f"{tmp}/s.arrow", [("n", "i32"), ("name", "utf8")], [[[1], ["a"]]])
r = run("tensor", "from-table", f"{tmp}/s.arrow", f"{tmp}/x.arrow")
check(r.returncode == 1 and "column 'name': DataType is not supported: string" in r.stderr,
      f"string column: {r.returncode} {r.stderr}")
write_table(f"{tmp}/h.arrow", [("h", "f16"), ("f", "f32")], [[[1.0], [2.0]]])
r = run("tensor", "from-table", f"{tmp}/h.arrow", f"{tmp}/x.arrow")
check(r.returncode == 3 and "halffloat" in r.stderr, f"float16 mixed: {r.returncode} {r.stderr}")
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--columns", "a,nope")
check(r.returncode == 1 and "no column named 'nope'" in r.stderr, f"missing: {r.stderr}")
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--columns", "a,,b")
check(r.returncode == 2, f"empty name: {r.returncode} {r.stderr}")
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--max-output", "71")
check(r.returncode == 1 and "exceeds the output limit" in r.stderr, f"--max-output: {r.stderr}")
r = run("tensor", "from-table", f"{tmp}/t.arrow")
check(r.returncode == 2, f"no OUT: {r.returncode}")
r = run("tensor", "from-table", f"{tmp}/t.arrow", f"{tmp}/x.arrow", "--bogus")
check(r.returncode == 2, f"unknown option: {r.returncode}")
r = run("tensor", "from-table", f"{tmp}/t.arrow.json", f"{tmp}/x.arrow")
check(r.returncode == 1, f"not Arrow: {r.returncode} {r.stderr}")
print(f"cli table tensor: {checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
PY
