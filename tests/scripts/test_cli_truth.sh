#!/usr/bin/env bash
# #22 "outputs that never lie", from files built here: NumPy .npy/.npz and
# other non-Arrow input given to every Arrow reader (named for what it is,
# with the command that reads it), an empty input refused everywhere;
# messages that name the input (not the output) and the real problem
# (tensor stack on bad metadata, a null cell naming --fill-nulls), the
# input's path printed once.
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
import struct
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


def run(*args, stdin=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, errors="replace", stdin=stdin)


np.save(f"{tmp}/a.npy", np.arange(6.0).reshape(2, 3))
np.savez(f"{tmp}/b.npz", a=np.arange(3))
open(f"{tmp}/empty.arrow", "wb").close()
with open(f"{tmp}/junk.arrow", "w") as f:
    f.write("hello, this text is not Arrow data\n")
out = f"{tmp}/out.arrow"

# every command that reads Arrow input: (arguments, where the input goes)
def readers(path):
    return [["cat", path], ["cat", "--json", path], ["validate", path], ["inspect", path],
            ["file-to-stream", path], ["convert", path, out, "--to=coo"],
            ["tensor", "to-npy", path, f"{tmp}/o.npy"], ["tensor", "to-npz", path, f"{tmp}/o.npz"],
            ["tensor", "stack", path, out], ["tensor", "unstack", path, out],
            ["integration", "--mode=arrow-to-json", f"--arrow={path}", f"--json={tmp}/o.json"]]


for name, want in [("a.npy", "from-npy"), ("b.npz", "from-npz"), ("empty.arrow", "empty input"),
                   ("junk.arrow", "not Arrow")]:
    path = f"{tmp}/{name}"
    for args in readers(path):
        r = run(*args)
        what = f"{' '.join(args[:2])} {name}"
        check(r.returncode == 1, f"{what}: exit 1, got {r.returncode}: {r.stderr}")
        says = want in r.stderr or (want == "not Arrow" and "not an Arrow file" in r.stderr)
        check(says, f"{what}: says '{want}': {r.stderr}")
        check(r.stderr.count(path) == 1, f"{what}: names {path} once: {r.stderr}")
        check("limit" not in r.stderr and "Arrow stream," not in r.stdout,
              f"{what}: no limit, no listing: {r.stderr} {r.stdout}")
    # stdin too
    with open(path, "rb") as f:
        r = run("stream-to-file", stdin=f)
    check(r.returncode == 1 and want in r.stderr, f"stream-to-file < {name}: {r.stderr}")
    with open(path, "rb") as f:
        r = run("validate", "-", stdin=f)
    check(r.returncode == 1 and want in r.stderr and "stdin" in r.stderr,
          f"validate - < {name}: {r.stderr}")

# ---- tensor stack: a fixed_shape_tensor column whose metadata contradicts
# its storage is reported as such, naming the input
np.save(f"{tmp}/c.npy", np.arange(12, dtype=np.int32).reshape(4, 3))
r = run("tensor", "from-npy", f"{tmp}/c.npy", f"{tmp}/col.arrow", "--as-column", "--name", "cells")
check(r.returncode == 0, f"from-npy --as-column: {r.stderr}")
good = open(f"{tmp}/col.arrow", "rb").read()
check(good.count(b'"shape":[3]') == 1, "the column's metadata is where the test expects it")
open(f"{tmp}/bad.arrow", "wb").write(good.replace(b'"shape":[3]', b'"shape":[5]'))
r = run("tensor", "stack", f"{tmp}/bad.arrow", out)
check(r.returncode == 1 and "no tensor column" not in r.stderr and "5" in r.stderr
      and "cells" in r.stderr and f"{tmp}/bad.arrow" in r.stderr and out not in r.stderr,
      f"stack of bad metadata names the problem and the input: {r.stderr}")

# ---- validate checks registered extension types against their storage
r = run("validate", f"{tmp}/col.arrow")
check(r.returncode == 0, f"validate of a good tensor column: {r.stderr}")
r = run("validate", f"{tmp}/bad.arrow")
check(r.returncode == 1 and "'cells'" in r.stderr and "5" in r.stderr,
      f"validate: fixed_shape_tensor shape [5] on FixedSizeList[3]: {r.returncode} {r.stderr}")
def fixed_tensor_table(path, meta, size=6):
    """A one-column table of two arrow.fixed_shape_tensor cells of `size`
    int32 values with extension metadata `meta`, through integration JSON."""
    field = {"name": "t", "nullable": True, "type": {"name": "fixedsizelist", "listSize": size},
             "metadata": [{"key": "ARROW:extension:name", "value": "arrow.fixed_shape_tensor"},
                          {"key": "ARROW:extension:metadata", "value": meta}],
             "children": [{"name": "item", "nullable": False,
                           "type": {"name": "int", "bitWidth": 32, "isSigned": True},
                           "children": []}]}
    column = {"name": "t", "count": 2, "VALIDITY": [1, 1],
              "children": [{"name": "item", "count": 2 * size, "VALIDITY": [1] * (2 * size),
                            "DATA": list(range(2 * size))}]}
    doc = {"schema": {"fields": [field]}, "batches": [{"count": 2, "columns": [column]}]}
    with open(f"{path}.json", "w") as f:
        json.dump(doc, f)
    r = run("integration", "--mode=json-to-arrow", f"--json={path}.json", f"--arrow={path}")
    check(r.returncode == 0, f"json-to-arrow {path}: {r.stderr}")


fixed_tensor_table(f"{tmp}/perm.arrow", '{"shape":[2,3],"permutation":[1,0]}')
r = run("validate", f"{tmp}/perm.arrow")
check(r.returncode == 0, f"validate of a permuted tensor column: {r.stderr}")
for meta, says in [('{"shape":[2,3],"permutation":[1,1]}', "permutation"),
                   ('{"shape":[3]}', "3"), ('{"shape":[2,3],"dim_names":["x"]}', "dim_names"),
                   ('{"shape":[2,-3]}', "-3"), ('{"shape":[2,3]', "JSON")]:
    fixed_tensor_table(f"{tmp}/bad_meta.arrow", meta)
    r = run("validate", f"{tmp}/bad_meta.arrow")
    check(r.returncode == 1 and says in r.stderr and "'t'" in r.stderr,
          f"validate: fixed_shape_tensor {meta} on FixedSizeList[6]: {r.returncode} {r.stderr}")

# ---- validate of Tensor and SparseTensor streams: in full
a = np.zeros((2, 3, 4))
a[0, 1, 2], a[1, 2, 3] = 1, 2
np.save(f"{tmp}/d.npy", a)
run("tensor", "from-npy", f"{tmp}/d.npy", f"{tmp}/dense.arrow")
r = run("validate", f"{tmp}/dense.arrow")
check(r.returncode == 0 and "1 Tensor, 0 SparseTensor" in r.stdout, f"validate of a Tensor: {r.stdout} {r.stderr}")
r = run("convert", f"{tmp}/dense.arrow", f"{tmp}/csf.arrow", "--to=csf")
check(r.returncode == 0, f"convert --to=csf: {r.stderr}")
r = run("validate", f"{tmp}/csf.arrow")
check(r.returncode == 0 and "0 Tensor, 1 SparseTensor" in r.stdout, f"validate of a CSF: {r.stdout} {r.stderr}")
csf = open(f"{tmp}/csf.arrow", "rb").read()
order = struct.pack("<4i", 3, 0, 1, 2)
check(csf.count(order) == 1, "the CSF axis order is where the test expects it")
open(f"{tmp}/csf99.arrow", "wb").write(csf.replace(order, struct.pack("<4i", 3, 0, 1, 99)))
for args in (["validate"], ["cat"], ["convert", "--to=coo"]):
    cmd = [args[0], f"{tmp}/csf99.arrow"] + ([f"{tmp}/o.arrow"] + args[1:] if len(args) > 1 else [])
    r = run(*cmd)
    check(r.returncode == 1 and "99 at position 2" in r.stderr and "-1" not in r.stderr,
          f"{args[0]}: axis_order 99 is shown as 99: {r.stderr}")
# a Tensor whose strides reach past its data
dense = open(f"{tmp}/dense.arrow", "rb").read()
strides = struct.pack("<3q", 96, 32, 8)
check(dense.count(strides) == 1, "the strides are where the test expects them")
open(f"{tmp}/over.arrow", "wb").write(dense.replace(strides, struct.pack("<3q", 960, 32, 8)))
r = run("validate", f"{tmp}/over.arrow")
check(r.returncode == 1 and "message 0" in r.stderr, f"validate: strides past the data: {r.stderr}")

# ---- a uint64 dictionary index of 2^64-1 is shown as itself, not -1
doc = {"schema": {"fields": [{"name": "d", "nullable": True, "type": {"name": "utf8"}, "children": [],
                              "dictionary": {"id": 0, "isOrdered": False, "indexType":
                                             {"name": "int", "bitWidth": 64, "isSigned": False}}}]},
       "dictionaries": [{"id": 0, "data": {"count": 2, "columns": [
           {"name": "DICT0", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 2], "DATA": ["a", "b"]}]}}],
       "batches": [{"count": 2, "columns": [{"name": "d", "count": 2, "VALIDITY": [1, 1],
                                             "DATA": ["1", "1"]}]}]}
with open(f"{tmp}/dict.json", "w") as f:
    json.dump(doc, f)
r = run("integration", "--mode=json-to-arrow", f"--json={tmp}/dict.json", f"--arrow={tmp}/dict.arrow")
check(r.returncode == 0, f"json-to-arrow of a uint64-indexed dictionary: {r.stderr}")
d = open(f"{tmp}/dict.arrow", "rb").read()
idx = struct.pack("<2Q", 1, 1)
check(d.count(idx) == 1, "the indices are where the test expects them")
open(f"{tmp}/dict_bad.arrow", "wb").write(d.replace(idx, struct.pack("<2Q", 1, 2**64 - 1)))
for c in ("validate", "cat"):
    r = run(c, f"{tmp}/dict_bad.arrow")
    check(r.returncode == 1 and "index 18446744073709551615 at 1" in r.stderr,
          f"{c}: uint64 index 2^64-1: {r.stderr}")
doc["batches"][0]["columns"][0]["DATA"] = ["1", "18446744073709551615"]
with open(f"{tmp}/dict.json", "w") as f:
    json.dump(doc, f)
r = run("integration", "--mode=json-to-arrow", f"--json={tmp}/dict.json", f"--arrow={tmp}/dict2.arrow")
check(r.returncode == 1 and "index 18446744073709551615 at 1" in r.stderr,
      f"json-to-arrow: uint64 index 2^64-1: {r.stderr}")

# ---- full validation refuses a decimal beyond its precision (as Arrow C++'s
# ValidateFull); --accept-decimal-overflow is the quirk for old files
doc = {"schema": {"fields": [{"name": "price", "nullable": True, "children": [],
                              "type": {"name": "decimal", "precision": 5, "scale": 2}}]},
       "batches": [{"count": 2, "columns": [{"name": "price", "count": 2, "VALIDITY": [1, 1],
                                             "DATA": ["12345", "123456789"]}]}]}
with open(f"{tmp}/dec.json", "w") as f:
    json.dump(doc, f)
r = run("integration", "--mode=json-to-arrow", f"--json={tmp}/dec.json", f"--arrow={tmp}/dec.arrow")
check(r.returncode == 1 and "value 1234567.89 at 1 does not fit in precision 5" in r.stderr,
      f"json-to-arrow refuses decimal(5, 2) 1234567.89: {r.stderr}")
r = run("integration", "--mode=json-to-arrow", "--accept-decimal-overflow", f"--json={tmp}/dec.json",
        f"--arrow={tmp}/dec.arrow")
check(r.returncode == 0, f"json-to-arrow --accept-decimal-overflow: {r.stderr}")
for args in (["validate"], ["cat"], ["cat", "--json"], ["file-to-stream"]):
    r = run(*args, f"{tmp}/dec.arrow")
    check(r.returncode == 1 and "1234567.89" in r.stderr and "precision 5" in r.stderr,
          f"{' '.join(args)} refuses decimal(5, 2) 1234567.89: {r.stderr}")
    r = run(*args, "--accept-decimal-overflow", f"{tmp}/dec.arrow")
    check(r.returncode == 0, f"{' '.join(args)} --accept-decimal-overflow: {r.stderr}")
r = run("integration", "--mode=validate", f"--json={tmp}/dec.json", f"--arrow={tmp}/dec.arrow")
check(r.returncode == 1, f"integration validate without the quirk: {r.stderr}")
r = run("integration", "--mode=validate", "--accept-decimal-overflow", f"--json={tmp}/dec.json",
        f"--arrow={tmp}/dec.arrow")
check(r.returncode == 0 and r.stdout == "", f"integration validate with the quirk: {r.stdout} {r.stderr}")

# ---- what docs/formats-and-limits.md says: a column-major dense input stays
# column-major (convert --to=dense, to-npy); json-to-arrow writes 61 levels
# of nested fields and refuses 62 (default readers would refuse them)
np.save(f"{tmp}/f.npy", np.asfortranarray(np.arange(12.0).reshape(3, 4)))
run("tensor", "from-npy", f"{tmp}/f.npy", f"{tmp}/f.arrow")
r = run("convert", f"{tmp}/f.arrow", f"{tmp}/fd.arrow", "--to=dense")
check(r.returncode == 0, f"convert --to=dense: {r.stderr}")
r = run("inspect", f"{tmp}/fd.arrow")
check("strides=[8, 24] (column-major)" in r.stdout, f"convert --to=dense keeps column-major: {r.stdout}")
run("tensor", "to-npy", f"{tmp}/f.arrow", f"{tmp}/fb.npy")
b = np.load(f"{tmp}/fb.npy")
check(b.flags["F_CONTIGUOUS"] and not b.flags["C_CONTIGUOUS"] and (b == np.arange(12.0).reshape(3, 4)).all(),
      "to-npy keeps column-major (fortran_order)")


def deep(n):
    def field(d):
        if d == n:
            return {"name": "x", "nullable": True, "children": [],
                    "type": {"name": "int", "bitWidth": 32, "isSigned": True}}
        return {"name": f"s{d}", "nullable": True, "type": {"name": "struct"}, "children": [field(d + 1)]}

    def col(d):
        if d == n:
            return {"name": "x", "count": 1, "VALIDITY": [1], "DATA": [7]}
        return {"name": f"s{d}", "count": 1, "VALIDITY": [1], "children": [col(d + 1)]}

    with open(f"{tmp}/deep.json", "w") as f:
        json.dump({"schema": {"fields": [field(1)]}, "batches": [{"count": 1, "columns": [col(1)]}]}, f)
    return run("integration", "--mode=json-to-arrow", f"--json={tmp}/deep.json", f"--arrow={tmp}/deep{n}.arrow")


r = deep(61)
check(r.returncode == 0, f"json-to-arrow of 61 levels: {r.stderr}")
r = run("validate", f"{tmp}/deep61.arrow")
check(r.returncode == 0, f"validate of 61 levels: {r.stderr}")
r = deep(62)
check(r.returncode == 1 and "readers with default limits would refuse it" in r.stderr,
      f"json-to-arrow of 62 levels: {r.stderr}")

# ---- unstack -> stack keeps the leading dim's name: without --name the
# column is named after it (stack names the leading dim after the column)
# give the Tensor's dims names: stack a column named "batch" whose cells have
# dim names, then check every round trip from there
fixed = {"name": "batch", "nullable": True, "type": {"name": "fixedsizelist", "listSize": 12},
         "metadata": [{"key": "ARROW:extension:name", "value": "arrow.fixed_shape_tensor"},
                      {"key": "ARROW:extension:metadata",
                       "value": '{"shape":[3,4],"dim_names":["h","w"]}'}],
         "children": [{"name": "item", "nullable": False, "children": [],
                       "type": {"name": "floatingpoint", "precision": "SINGLE"}}]}
col = {"name": "batch", "count": 2, "VALIDITY": [1, 1],
       "children": [{"name": "item", "count": 24, "VALIDITY": [1] * 24, "DATA": [float(x) for x in range(24)]}]}
with open(f"{tmp}/named.json", "w") as f:
    json.dump({"schema": {"fields": [fixed]}, "batches": [{"count": 2, "columns": [col]}]}, f)
r = run("integration", "--mode=json-to-arrow", f"--json={tmp}/named.json", f"--arrow={tmp}/named_col.arrow")
check(r.returncode == 0, f"json-to-arrow of a named tensor column: {r.stderr}")
run("tensor", "stack", f"{tmp}/named_col.arrow", f"{tmp}/named_t.arrow")
r = run("inspect", f"{tmp}/named_t.arrow")
check("names=[batch, h, w]" in r.stdout, f"stack names the leading dim after the column: {r.stdout}")
r = run("tensor", "unstack", f"{tmp}/named_t.arrow", f"{tmp}/named_u.arrow")
check(r.returncode == 0, f"unstack: {r.stderr}")
r = run("inspect", f"{tmp}/named_u.arrow")
check("field (little-endian): batch:" in r.stdout or "1 field (big-endian): batch:" in r.stdout,
      f"unstack names the column after the leading dim: {r.stdout}")
run("tensor", "stack", f"{tmp}/named_u.arrow", f"{tmp}/named_t2.arrow")
r = run("inspect", f"{tmp}/named_t2.arrow")
check("names=[batch, h, w]" in r.stdout, f"unstack -> stack keeps 'batch': {r.stdout}")
r = run("tensor", "unstack", f"{tmp}/named_t.arrow", f"{tmp}/named_c.arrow", "--name", "cells")
r = run("inspect", f"{tmp}/named_c.arrow")
check("cells:" in r.stdout, f"--name still names the column: {r.stdout}")

if failures:
    print(f"{len(failures)} of {checks} checks failed")
    sys.exit(1)
print(f"{checks} checks passed")
PY
